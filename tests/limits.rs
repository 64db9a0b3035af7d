//! Device limits smaller than a scene: lavapipe is run with a storage binding limit
//! far below the scene's size, so clouds are uploaded in several chunks and a view's
//! working buffers are split into bands, and the image must be the one an
//! unconstrained device draws.

mod common;
mod reference_raster;

use bevy::math::UVec2;
use bevy::prelude::*;
use bevy::render::settings::WgpuSettings;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::asset::formats::ply;
use bevy_splat::headless::{Headless, storage_binding_limit};
use bevy_splat::{GaussianSplats, SplatGpuLimits, SplatStats, SplatViewStats};

use reference_raster::max_difference;

/// What one render of fruit_drops gave.
struct Render {
    rgb: Vec<u8>,
    /// The storage binding limit the device was created with.
    binding_limit: u64,
    stats: SplatViewStats,
}

fn binding_limit(bytes: u64) -> WgpuSettings {
    storage_binding_limit(bytes).expect("no GPU adapter")
}

fn fruit_drops() -> GaussianSplats {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/fruit_drops_sh3.ply"
    ))
    .unwrap();
    GaussianSplats::from(ply::decode(&bytes).unwrap())
}

/// fruit_drops seen by a 160×120 camera.
fn render_fruit_drops(settings: WgpuSettings) -> Render {
    let camera = Transform::from_xyz(0.0, 0.0, 0.7).looking_at(Vec3::ZERO, Vec3::Y);
    render(settings, fruit_drops(), camera, UVec2::new(160, 120), 0.9)
}

fn render(
    settings: WgpuSettings,
    splats: GaussianSplats,
    camera: Transform,
    size: UVec2,
    fov: f32,
) -> Render {
    render_with(settings, |_| {}, splats, camera, size, fov)
}

fn render_with(
    settings: WgpuSettings,
    configure: impl FnOnce(&mut App),
    splats: GaussianSplats,
    camera: Transform,
    size: UVec2,
    fov: f32,
) -> Render {
    let mut headless = Headless::with_settings(common::headless_plugins(), settings, configure);
    let limit = headless
        .app
        .world()
        .resource::<bevy::render::renderer::RenderDevice>()
        .limits()
        .max_storage_buffer_binding_size;
    let handle = headless.add_splats(splats);
    headless.spawn_cloud(handle, Transform::IDENTITY);
    let projection = PerspectiveProjection {
        fov,
        aspect_ratio: size.x as f32 / size.y as f32,
        near: 0.01,
        ..default()
    };
    let camera = headless.spawn_camera(camera, projection, size, None);
    let rgb = headless
        .render(std::slice::from_ref(&camera))
        .unwrap()
        .remove(0)
        .rgb();
    let stats = headless
        .app
        .world()
        .resource::<SplatStats>()
        .get(camera.entity)
        .unwrap();
    Render {
        rgb,
        binding_limit: limit,
        stats,
    }
}

#[test]
fn clouds_larger_than_a_storage_binding_render_in_chunks() {
    // fruit_drops holds 906 KB of SH3 coefficients: 256 KiB bindings split it in four.
    let chunked = render_fruit_drops(binding_limit(256 * 1024));
    let whole = render_fruit_drops(WgpuSettings::default());
    assert_eq!(
        chunked.binding_limit,
        256 * 1024,
        "the device should take the lowered limit"
    );
    assert!(whole.binding_limit >= 16 << 20);
    assert_eq!(whole.stats.bands, 1);
    assert!(
        chunked.rgb.iter().any(|&v| v > 0),
        "the scene should draw something"
    );
    let worst = max_difference(&chunked.rgb, &whole.rgb);
    assert!(worst <= 1, "chunked upload differs by {worst}/255");
}

/// 24,000 small splats over the whole view, rendered under `settings` (and
/// `configure`), and the same on the unconstrained device.
fn banded_and_whole(settings: WgpuSettings, configure: impl FnOnce(&mut App)) -> (Render, Render) {
    let (size, fov) = (UVec2::new(96, 160), 0.9);
    let scene = spread_over_the_view(24_000, size, fov);
    let banded = render_with(
        settings,
        configure,
        scene.clone(),
        Transform::IDENTITY,
        size,
        fov,
    );
    let whole = render(
        WgpuSettings::default(),
        scene,
        Transform::IDENTITY,
        size,
        fov,
    );
    (banded, whole)
}

/// The banded render drew in several complete bands the very image of the whole one.
fn assert_bands_match(banded: &Render, whole: &Render) {
    assert!(banded.stats.bands > 1, "{:?}", banded.stats);
    assert!(banded.stats.complete(), "{:?}", banded.stats);
    // Together the bands draw every tile pair once.
    assert_eq!(banded.stats.tile_pairs, whole.stats.tile_pairs);
    // Each tile blends the same splats in the same order either way.
    let worst = max_difference(&banded.rgb, &whole.rgb);
    assert_eq!(worst, 0, "banded render differs by {worst}/255");
}

#[test]
fn views_larger_than_a_storage_binding_render_in_bands() {
    // 256 KiB bindings (the least Bevy's own passes work with) hold 8,192 projected
    // splats; the camera sees more than twice as many, spread over the whole image, so it
    // is drawn in bands of tile rows.
    let limit = 256 * 1024;
    let (banded, whole) = banded_and_whole(binding_limit(limit), |_| {});
    assert_eq!(banded.binding_limit, limit);
    let max_splats = limit / 32;
    assert!(
        u64::from(whole.stats.visible_splats) > max_splats,
        "the scene should outgrow one binding: {:?}",
        whole.stats
    );
    assert_bands_match(&banded, &whole);
}

#[test]
fn a_splat_gpu_limits_cap_draws_in_bands_on_any_device() {
    // What a browser page does: its WebGPU device cannot be made smaller than the
    // WebGPU defaults, so the plugin's own cap splits the view instead.
    let cap = 256 * 1024;
    let (capped, whole) = banded_and_whole(WgpuSettings::default(), |app| {
        app.insert_resource(SplatGpuLimits {
            max_storage_binding_bytes: Some(cap),
            ..default()
        });
    });
    assert!(
        capped.binding_limit > cap,
        "the device itself is not lowered"
    );
    assert_bands_match(&capped, &whole);
}

#[test]
fn webgpu_default_limits_without_subgroups_draw_the_same_image() {
    // A browser device: WebGPU's default limits (8 storage buffers per stage, 16 KiB
    // of workgroup memory, 256 invocations, 128 MiB bindings) and no subgroups, an
    // optional WebGPU feature. No pass needs more, so the image is the same.
    let web = WgpuSettings {
        constrained_limits: Some(wgpu::Limits::default()),
        disabled_features: Some(
            wgpu::Features::SUBGROUP
                | wgpu::Features::SUBGROUP_BARRIER
                | wgpu::Features::SUBGROUP_VERTEX,
        ),
        ..default()
    };
    let mut headless = Headless::with_settings(common::headless_plugins(), web.clone(), |_| {});
    let device = headless
        .app
        .world_mut()
        .resource::<bevy::render::renderer::RenderDevice>()
        .clone();
    assert!(!device.features().contains(wgpu::Features::SUBGROUP));
    let limits = device.limits();
    assert_eq!(limits.max_storage_buffers_per_shader_stage, 8);
    assert_eq!(limits.max_compute_workgroup_storage_size, 16 << 10);
    assert_eq!(limits.max_compute_invocations_per_workgroup, 256);
    drop(headless);
    let browser_like = render_fruit_drops(web);
    let native = render_fruit_drops(WgpuSettings::default());
    assert!(browser_like.rgb.iter().any(|&v| v > 0));
    // Visible splats are compacted by an atomic counter, so splats whose depth keys tie
    // may swap places between any two runs: a rounding step at most.
    let worst = max_difference(&browser_like.rgb, &native.rgb);
    assert!(
        worst <= 1,
        "the WebGPU-limited render differs by {worst}/255"
    );
}

#[test]
fn no_shader_needs_subgroups() {
    // The one path there is must run where the optional feature is missing.
    let passes = concat!(env!("CARGO_MANIFEST_DIR"), "/src/render/passes");
    for entry in std::fs::read_dir(passes).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "wgsl") {
            let source = std::fs::read_to_string(&path).unwrap();
            for line in source.lines() {
                let code = line.split("//").next().unwrap_or_default();
                assert!(
                    !code.contains("subgroup"),
                    "{} uses subgroups: {line}",
                    path.display()
                );
            }
        }
    }
}

/// `count` small splats scattered through the frustum of a camera at the origin
/// looking down −Z, 1–3 px across at any depth, no two at the same depth.
fn spread_over_the_view(count: usize, size: UVec2, fov: f32) -> GaussianSplats {
    let mut rng = common::random::Rng(0x5eed_1234);
    let tan_y = (fov / 2.0).tan();
    let tan_x = tan_y * size.x as f32 / size.y as f32;
    let geometry = (0..count)
        .map(|i| {
            // Distinct depths: splats at one depth blend in whichever order the GPU
            // happened to count them, which differs between two runs.
            let z = 2.0 + 4.0 * (i as f32 + 0.5) / count as f32;
            let x = (2.0 * rng.next() - 1.0) * tan_x * z;
            let y = (2.0 * rng.next() - 1.0) * tan_y * z;
            let scale = z * (0.004 + 0.01 * rng.next());
            let opacity = 0.3 + 0.6 * rng.next();
            SplatGeometry {
                position: [x, y, -z],
                opacity_logit: (opacity / (1.0 - opacity)).ln(),
                rotation: [1.0, rng.next() - 0.5, rng.next() - 0.5, rng.next() - 0.5],
                log_scale: [scale.ln(), (scale * 0.7).ln(), (scale * 0.5).ln()],
                _pad: 0.0,
            }
        })
        .collect();
    let sh = (0..count * 3).map(|_| 2.0 * rng.next() - 1.0).collect();
    GaussianSplats::new(geometry, sh, 0).unwrap()
}

/// GPU bytes the plugin holds for `splats` alone (no camera, so no view buffers).
fn cloud_bytes(splats: GaussianSplats) -> u64 {
    let mut headless = Headless::new(common::headless_plugins());
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
    let splats = fruit_drops();
    let n = splats.len() as u64;
    let full = cloud_bytes(splats.clone().with_storage(bevy_splat::SplatStorage::Full));
    let half = cloud_bytes(splats.clone().with_half_precision_sh(true));
    assert_eq!(cloud_bytes(splats), half, "f16 SH is the default");
    // 48 bytes of geometry per splat, and 48 SH floats (degree 3) as f32 or as f16.
    assert_eq!(full, n * (48 + 48 * 4));
    assert_eq!(half, n * (48 + 48 * 2));
}

#[test]
fn compact_storage_takes_seventy_three_bytes_at_degree_three() {
    let splats = fruit_drops();
    let n = splats.len() as u64;
    let compact = cloud_bytes(splats.with_storage(bevy_splat::SplatStorage::Compact));
    // 28 bytes of geometry per splat and a 24-byte position box per 256 splats; 45 SH
    // bytes past DC per splat, end to end, the last word padded.
    assert_eq!(
        compact,
        n * 28 + n.div_ceil(256) * 24 + (n * 45).div_ceil(4) * 4
    );
}
