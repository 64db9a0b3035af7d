//! `SplatDepth` on lavapipe: a camera with it gets its splats' median depth in the
//! depth buffer, so a transparent mesh behind a dense splat surface is hidden and one
//! in front still blends over it, with and without MSAA.

#[path = "../examples/render/headless.rs"]
mod headless;
mod reference_raster;

use bevy::math::UVec2;
use bevy::prelude::*;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::{GaussianSplats, SplatDepth};

use headless::{Headless, Rgba8};
use reference_raster::max_difference;

const SIZE: UVec2 = UVec2::new(96, 64);

/// A dense wall of near-opaque splats across the view at depth `z` (camera at the
/// origin looking down −Z).
fn splat_wall(z: f32) -> GaussianSplats {
    let mut geometry = Vec::new();
    let mut sh = Vec::new();
    for i in 0..36 {
        for j in 0..24 {
            geometry.push(SplatGeometry {
                position: [(i as f32 - 17.5) * 0.1, (j as f32 - 11.5) * 0.1, z],
                opacity_logit: 3.0,
                rotation: [1.0, 0.0, 0.0, 0.0],
                log_scale: [0.08f32.ln(); 3],
                _pad: 0.0,
            });
            sh.extend([0.2f32, 0.4, 0.9].map(|c| (c - 0.5) / 0.282_094_8));
        }
    }
    GaussianSplats::new(geometry, sh, 0).expect("valid splats")
}

/// Renders the wall at z = −5, and a half-transparent red square at `quad_z` if given.
fn render(quad_z: Option<f32>, msaa: Msaa, splat_depth: bool) -> Rgba8 {
    render_with_stats(quad_z, msaa, splat_depth).0
}

fn render_with_stats(
    quad_z: Option<f32>,
    msaa: Msaa,
    splat_depth: bool,
) -> (Rgba8, bevy_splat::SplatViewStats) {
    let mut headless = Headless::new();
    let wall = headless.add_splats(splat_wall(-5.0));
    headless.spawn_cloud(wall, Transform::IDENTITY);
    if let Some(z) = quad_z {
        let world = headless.app.world_mut();
        let mesh = world
            .resource_mut::<Assets<Mesh>>()
            .add(Rectangle::new(1.2, 0.8));
        let material = world
            .resource_mut::<Assets<StandardMaterial>>()
            .add(StandardMaterial {
                base_color: Color::srgba(1.0, 0.1, 0.1, 0.6),
                alpha_mode: AlphaMode::Blend,
                unlit: true,
                ..default()
            });
        world.spawn((
            Mesh3d(mesh),
            MeshMaterial3d(material),
            Transform::from_xyz(0.0, 0.0, z),
        ));
    }
    let projection = PerspectiveProjection {
        fov: 0.9,
        aspect_ratio: SIZE.x as f32 / SIZE.y as f32,
        near: 0.01,
        ..default()
    };
    let camera = headless.spawn_camera(Transform::IDENTITY, projection, SIZE, None);
    let mut entity = headless.app.world_mut().entity_mut(camera.entity);
    entity.insert(msaa);
    if splat_depth {
        entity.insert(SplatDepth);
    }
    let image = headless
        .render(std::slice::from_ref(&camera))
        .expect("the render")
        .remove(0);
    // A few more frames, so the pass timestamps of a finished frame have come back.
    for _ in 0..4 {
        headless.app.update();
    }
    let stats = headless
        .app
        .world()
        .resource::<bevy_splat::SplatStats>()
        .get(camera.entity)
        .expect("the camera drew splats");
    (image, stats)
}

/// The middle of the image, where the square is (its edges stay out).
fn centre(image: &Rgba8) -> Vec<u8> {
    let mut rgb = Vec::new();
    for y in 26..38 {
        for x in 40..56 {
            rgb.extend_from_slice(&image.pixel(x, y)[..3]);
        }
    }
    rgb
}

fn check(msaa: Msaa) {
    let wall = centre(&render(None, msaa, true));
    assert!(wall.iter().any(|&v| v > 50), "the wall is drawn");
    // Behind the wall: without SplatDepth the square, drawn after the splats, blends
    // over them; with it, the depth test hides it. In front it blends over the splats
    // either way.
    for (z, hidden_with_depth) in [(-7.0, true), (-3.0, false)] {
        let plain = centre(&render(Some(z), msaa, false));
        let with_depth = centre(&render(Some(z), msaa, true));
        assert!(
            max_difference(&plain, &wall) > 40,
            "{msaa:?}, z = {z}: without SplatDepth the square shows"
        );
        let expected = if hidden_with_depth { &wall } else { &plain };
        let worst = max_difference(&with_depth, expected);
        assert!(
            worst <= 1,
            "{msaa:?}, z = {z}: with SplatDepth the square should be {} ({worst})",
            if hidden_with_depth {
                "hidden"
            } else {
                "unchanged"
            }
        );
    }
}

#[test]
fn a_transparent_square_behind_the_splats_is_hidden_in_front_it_blends() {
    check(Msaa::Off);
}

#[test]
fn the_same_with_msaa() {
    check(Msaa::Sample4);
}

#[test]
fn the_depth_write_is_timed_only_when_it_runs() {
    // Only the stages that ran may have their timestamps resolved (an unwritten query
    // hangs Vulkan drivers that wait for results): the depth write reads zero without
    // SplatDepth and its own time with it.
    let depth_write = bevy_splat::render::PASS_NAMES
        .iter()
        .position(|&name| name == "depth_write")
        .expect("a depth_write stage");
    let (_, off) = render_with_stats(None, Msaa::Off, false);
    let (_, on) = render_with_stats(None, Msaa::Off, true);
    let (Some(off), Some(on)) = (off.gpu_pass_ns, on.gpu_pass_ns) else {
        // A device without timestamp queries times nothing: nothing to check.
        eprintln!("no timestamp queries on this device");
        return;
    };
    assert_eq!(off[depth_write], 0, "{off:?}");
    assert!(on[depth_write] > 0, "{on:?}");
    assert!(off[..depth_write].iter().any(|&ns| ns > 0), "{off:?}");
}
