//! Device limits smaller than a cloud: lavapipe is run with a storage binding limit
//! far below the scene's size, so clouds are uploaded in several chunks, and the
//! image must be the one an unconstrained device draws.

mod common;
#[path = "../examples/render/headless.rs"]
mod headless;
mod reference_raster;

use bevy::math::UVec2;
use bevy::prelude::*;
use bevy::render::settings::{WgpuLimits, WgpuSettings};
use bevy_splat::GaussianSplats;
use bevy_splat::asset::ply;

use headless::Headless;
use reference_raster::max_difference;

/// The image, and the storage binding limit the device was created with.
fn render(settings: WgpuSettings) -> (Vec<u8>, u64) {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/fruit_drops_sh3.ply"
    ))
    .unwrap();
    let splats = GaussianSplats::from(ply::decode(&bytes).unwrap());
    let mut headless = Headless::with_settings(settings, |_| {});
    let limit = headless
        .app
        .world()
        .resource::<bevy::render::renderer::RenderDevice>()
        .limits()
        .max_storage_buffer_binding_size;
    let handle = headless.add_splats(splats);
    headless.spawn_cloud(handle, Transform::IDENTITY);
    let size = UVec2::new(160, 120);
    let projection = PerspectiveProjection {
        fov: 0.9,
        aspect_ratio: 160.0 / 120.0,
        near: 0.01,
        ..default()
    };
    let camera = headless.spawn_camera(
        Transform::from_xyz(0.0, 0.0, 0.7).looking_at(Vec3::ZERO, Vec3::Y),
        projection,
        size,
        None,
    );
    (headless.render(&[camera]).unwrap().remove(0).rgb(), limit)
}

#[test]
fn clouds_larger_than_a_storage_binding_render_in_chunks() {
    // fruit_drops holds 906 KB of SH3 coefficients: 256 KiB bindings split it in four.
    let adapter_limits: WgpuLimits = common::gpu::Gpu::new().device.limits();
    let small = WgpuSettings {
        constrained_limits: Some(WgpuLimits {
            max_storage_buffer_binding_size: 256 * 1024,
            ..adapter_limits
        }),
        ..default()
    };
    let (chunked, small_limit) = render(small);
    let (whole, full_limit) = render(WgpuSettings::default());
    assert_eq!(
        small_limit,
        256 * 1024,
        "the device should take the lowered limit"
    );
    assert!(full_limit >= 16 << 20);
    assert!(
        chunked.iter().any(|&v| v > 0),
        "the scene should draw something"
    );
    let worst = max_difference(&chunked, &whole);
    assert!(worst <= 1, "chunked upload differs by {worst}/255");
}

/// GPU bytes the plugin holds for `splats` alone (no camera, so no view buffers).
fn cloud_bytes(splats: GaussianSplats) -> u64 {
    let mut headless = Headless::new();
    let handle = headless.add_splats(splats);
    headless.spawn_cloud(handle, Transform::IDENTITY);
    for _ in 0..3 {
        headless.app.update();
    }
    headless
        .app
        .world()
        .resource::<bevy_splat::SplatMemory>()
        .bytes()
}

#[test]
fn half_precision_sh_halves_the_sh_memory() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/fruit_drops_sh3.ply"
    ))
    .unwrap();
    let splats = GaussianSplats::from(ply::decode(&bytes).unwrap());
    let n = splats.len() as u64;
    let full = cloud_bytes(splats.clone());
    let half = cloud_bytes(splats.with_half_precision_sh(true));
    // 48 bytes of geometry per splat, and 48 SH floats (degree 3) as f32 or as f16.
    assert_eq!(full, n * (48 + 48 * 4));
    assert_eq!(half, n * (48 + 48 * 2));
}
