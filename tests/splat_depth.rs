//! `SplatDepth` on lavapipe: a camera with it gets its splats' median depth in the
//! depth buffer, so a transparent mesh behind a dense splat surface is hidden and one
//! in front still blends over it, with and without MSAA.

mod common;
mod reference_raster;

use bevy::math::UVec2;
use bevy::prelude::*;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::headless::{Headless, Rgba8};
use bevy_splat::{GaussianSplats, SplatDepth};

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
    let scene = wall_scene(true);
    let quad = quad_z.map(|z| (Transform::from_xyz(0.0, 0.0, z), Vec2::new(1.2, 0.8)));
    scene.render(quad, msaa, splat_depth)
}

/// The splat wall 5 units ahead, seen by the identity camera.
fn wall_scene(timed: bool) -> Scene {
    Scene {
        splats: splat_wall(-5.0),
        eye: Transform::IDENTITY,
        size: SIZE,
        fov_y: 0.9,
        timed,
    }
}

/// Splats seen by one camera, rendered with or without a transparent square.
struct Scene {
    splats: GaussianSplats,
    eye: Transform,
    size: UVec2,
    fov_y: f32,
    /// The camera times its passes (`SplatPassTimes`).
    timed: bool,
}

impl Scene {
    fn projection(&self) -> PerspectiveProjection {
        PerspectiveProjection {
            fov: self.fov_y,
            aspect_ratio: self.size.x as f32 / self.size.y as f32,
            near: 0.01,
            ..default()
        }
    }

    /// The image and the camera's stats; `quad` is a half-transparent red square
    /// (placement, size) drawn in the transparent pass.
    fn render(
        &self,
        quad: Option<(Transform, Vec2)>,
        msaa: Msaa,
        splat_depth: bool,
    ) -> (Rgba8, bevy_splat::SplatViewStats) {
        let mut headless = Headless::new(common::headless_plugins());
        let splats = headless.add_splats(self.splats.clone());
        headless.spawn_cloud(splats, Transform::IDENTITY);
        if let Some((placement, size)) = quad {
            let world = headless.app.world_mut();
            let mesh = world
                .resource_mut::<Assets<Mesh>>()
                .add(Rectangle::new(size.x, size.y));
            let material = world
                .resource_mut::<Assets<StandardMaterial>>()
                .add(StandardMaterial {
                    base_color: Color::srgba(1.0, 0.1, 0.1, 0.6),
                    alpha_mode: AlphaMode::Blend,
                    unlit: true,
                    ..default()
                });
            world.spawn((Mesh3d(mesh), MeshMaterial3d(material), placement));
        }
        let camera = headless.spawn_camera(self.eye, self.projection(), self.size, None);
        let mut entity = headless.app.world_mut().entity_mut(camera.entity);
        entity.insert(msaa);
        if self.timed {
            entity.insert(bevy_splat::SplatPassTimes);
        }
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

#[test]
fn only_cameras_with_splat_pass_times_time_their_passes() {
    let (plain_image, plain) = wall_scene(false).render(None, Msaa::Off, false);
    let (timed_image, timed) = wall_scene(true).render(None, Msaa::Off, false);
    assert_eq!(
        plain.gpu_pass_ns, None,
        "an untimed camera has no pass times"
    );
    assert_eq!(
        plain_image.pixels, timed_image.pixels,
        "timing changes no pixel"
    );
    if timed.gpu_pass_ns.is_none() {
        eprintln!("no timestamp queries on this device");
    }
}

/// The shipped angel with a large transparent square behind it and in front of it:
/// behind, the square is hidden exactly where the CPU reference finds a median depth
/// (the angel's surface) and shows elsewhere; in front, it blends over the statue
/// unchanged.
fn check_angel(msaa: Msaa) {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/angel.ply"))
        .expect("the shipped angel");
    let splats =
        GaussianSplats::from(bevy_splat::asset::formats::ply::decode(&bytes).expect("it decodes"));
    let target = Vec3::new(0.0, 0.8, 0.0);
    let scene = Scene {
        splats,
        eye: Transform::from_xyz(0.6, 1.1, 3.0).looking_at(target, Vec3::Y),
        size: UVec2::new(160, 120),
        fov_y: 0.75,
        timed: false,
    };
    let towards_eye = (scene.eye.translation - target).normalize();
    // A square facing the camera (its normal, +Z, towards the eye) at `along` from the
    // statue's middle towards the eye.
    let square = |along: f32| {
        let at = target + towards_eye * along;
        let placement = Transform::from_translation(at).looking_at(at - towards_eye, Vec3::Y);
        (placement, Vec2::splat(8.0))
    };
    let angel = scene.render(None, msaa, true).0;
    let behind_plain = scene.render(Some(square(-1.5)), msaa, false).0;
    let behind = scene.render(Some(square(-1.5)), msaa, true).0;

    let camera = reference_raster::PinholeCamera::from_bevy(
        &scene.eye,
        scene.fov_y,
        scene.size.x,
        scene.size.y,
        0.01,
    );
    let pixels: Vec<(u32, u32)> = (0..scene.size.y)
        .flat_map(|y| (0..scene.size.x).map(move |x| (x, y)))
        .collect();
    let surface = reference_raster::median_depth(
        &[reference_raster::CpuCloud {
            geometry: scene.splats.geometry(),
            sh: scene.splats.sh(),
            sh_degree: scene.splats.sh_degree(),
            world_from_cloud: bevy::math::DMat4::IDENTITY,
        }],
        &camera,
        &pixels,
    );
    let (mut on_surface, mut hidden, mut off_surface, mut shown) = (0, 0, 0, 0);
    for (&(x, y), hit) in pixels.iter().zip(&surface) {
        let [with_depth, alone, plain] =
            [&behind, &angel, &behind_plain].map(|image| image.pixel(x, y)[..3].to_vec());
        if hit.is_some() {
            on_surface += 1;
            hidden += usize::from(max_difference(&with_depth, &alone) <= 2);
        } else {
            off_surface += 1;
            shown += usize::from(max_difference(&with_depth, &plain) <= 2);
        }
    }
    eprintln!(
        "{msaa:?}: square hidden on {hidden} of {on_surface} surface pixels, shown on \
         {shown} of {off_surface} others"
    );
    assert!(
        on_surface > 2_000,
        "the angel covers much of the view: {on_surface}"
    );
    // Pixels whose transmittance crosses 0.5 within f32 of the reference may go either
    // way: a few silhouette pixels.
    assert!(
        hidden * 1000 >= on_surface * 995,
        "{hidden} of {on_surface} hidden"
    );
    assert!(
        shown * 1000 >= off_surface * 995,
        "{shown} of {off_surface} shown"
    );

    let front_plain = centre(&scene.render(Some(square(1.2)), msaa, false).0);
    let front = centre(&scene.render(Some(square(1.2)), msaa, true).0);
    assert!(
        max_difference(&front, &front_plain) <= 1,
        "{msaa:?}: in front it blends"
    );
    assert!(
        max_difference(&front, &centre(&angel)) > 40,
        "{msaa:?}: the square shows"
    );
}

#[test]
fn a_transparent_square_behind_the_angel_is_hidden_where_the_angel_is_opaque() {
    check_angel(Msaa::Off);
}

#[test]
fn the_angel_with_msaa() {
    check_angel(Msaa::Sample4);
}
