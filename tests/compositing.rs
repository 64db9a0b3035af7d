//! Splats among meshes and across cameras: depth against the opaque scene, blending
//! over meshes, several clouds sorted together, several cameras and viewports, HDR
//! and MSAA targets.

mod common;
mod reference_raster;

use bevy::camera::{Hdr, Viewport};
use bevy::math::{DMat4, UVec2};
use bevy::prelude::*;
use bevy_splat::GaussianSplats;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::asset::formats::ply;
use bevy_splat::headless::{Headless, HeadlessCamera, Rgba8};

use reference_raster::{CpuCloud, PinholeCamera, max_difference, psnr, rasterize, to_unorm8};

const SIZE: UVec2 = UVec2::new(96, 64);
const FOV_Y: f32 = 0.9;

fn projection(size: UVec2) -> PerspectiveProjection {
    PerspectiveProjection {
        fov: FOV_Y,
        aspect_ratio: size.x as f32 / size.y as f32,
        near: 0.01,
        ..default()
    }
}

fn angel() -> GaussianSplats {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/angel_sh0.ply"
    ))
    .unwrap();
    GaussianSplats::from(ply::decode(&bytes).unwrap())
}

/// A camera three units in front of the angel, looking at it.
fn angel_view() -> Transform {
    Transform::from_xyz(0.3, 0.4, 2.2).looking_at(Vec3::new(0.0, 0.1, 0.0), Vec3::Y)
}

/// A wall of opaque-ish splats facing the camera at depth `z`.
fn splat_wall(z: f32, colour: [f32; 3], opacity: f32) -> GaussianSplats {
    let mut geometry = Vec::new();
    let mut sh = Vec::new();
    for i in 0..24 {
        for j in 0..16 {
            geometry.push(SplatGeometry {
                position: [(i as f32 - 11.5) * 0.15, (j as f32 - 7.5) * 0.15, z],
                opacity_logit: (opacity / (1.0 - opacity)).ln(),
                rotation: [1.0, 0.0, 0.0, 0.0],
                log_scale: [0.1f32.ln(); 3],
                _pad: 0.0,
            });
            sh.extend(colour.map(|c| (c - 0.5) / 0.282_094_8));
        }
    }
    GaussianSplats::new(geometry, sh, 0).unwrap()
}

fn spawn_cube(headless: &mut Headless, at: Vec3, size: f32, colour: Color) {
    let world = headless.app.world_mut();
    let mesh = world
        .resource_mut::<Assets<Mesh>>()
        .add(Cuboid::from_length(size));
    let material = world
        .resource_mut::<Assets<StandardMaterial>>()
        .add(StandardMaterial {
            base_color: colour,
            unlit: true,
            ..default()
        });
    world.spawn((
        Mesh3d(mesh),
        MeshMaterial3d(material),
        Transform::from_translation(at),
    ));
}

fn render_one(headless: &mut Headless, msaa: Msaa, projection: &Projection) -> Rgba8 {
    let camera = headless.spawn_camera(Transform::IDENTITY, projection.clone(), SIZE, None);
    render_with_msaa(headless, camera, msaa)
}

/// `camera`'s image, drawn with `msaa`.
fn render_with_msaa(headless: &mut Headless, camera: HeadlessCamera, msaa: Msaa) -> Rgba8 {
    headless
        .app
        .world_mut()
        .entity_mut(camera.entity)
        .insert(msaa);
    headless.render(&[camera]).unwrap().remove(0)
}

fn cube_occludes(msaa: Msaa, projection: Projection) {
    let cube_colour = Color::srgb(0.2, 0.8, 0.3);
    let wall = || splat_wall(-5.0, [0.9, 0.3, 0.6], 0.9);

    let mut only_splats = Headless::new(common::headless_plugins());
    let h = only_splats.add_splats(wall());
    only_splats.spawn_cloud(h, Transform::IDENTITY);
    let splats = render_one(&mut only_splats, msaa, &projection);
    let drawn = (0..SIZE.y)
        .flat_map(|y| (0..SIZE.x).map(move |x| (x, y)))
        .filter(|&(x, y)| splats.pixel(x, y)[..3] != [0, 0, 0])
        .count();
    assert!(
        drawn > 1000,
        "the splat wall should fill the image ({drawn} px)"
    );

    let mut only_cube = Headless::new(common::headless_plugins());
    spawn_cube(&mut only_cube, Vec3::new(0.0, 0.0, -3.0), 1.0, cube_colour);
    let cube = render_one(&mut only_cube, msaa, &projection);

    let mut both = Headless::new(common::headless_plugins());
    let h = both.add_splats(wall());
    both.spawn_cloud(h, Transform::IDENTITY);
    spawn_cube(&mut both, Vec3::new(0.0, 0.0, -3.0), 1.0, cube_colour);
    let mixed = render_one(&mut both, msaa, &projection);

    let mut covered = 0;
    for y in 0..SIZE.y {
        for x in 0..SIZE.x {
            let c = cube.pixel(x, y);
            // Under MSAA the cube's edge pixels are part cube, part splat: skip them.
            let edge = (c[0], c[1], c[2]) != (0, 0, 0)
                && (x == 0
                    || y == 0
                    || cube.pixel(x - 1, y) == [0, 0, 0, 255]
                    || cube.pixel(x, y - 1) == [0, 0, 0, 255]
                    || cube.pixel((x + 1).min(SIZE.x - 1), y) == [0, 0, 0, 255]
                    || cube.pixel(x, (y + 1).min(SIZE.y - 1)) == [0, 0, 0, 255]);
            if msaa != Msaa::Off && edge {
                continue;
            }
            let expected = if c[..3] == [0, 0, 0] {
                splats.pixel(x, y)
            } else {
                covered += 1;
                c
            };
            let got = mixed.pixel(x, y);
            assert!(
                max_difference(&expected[..3], &got[..3]) <= 1,
                "pixel ({x}, {y}): expected {expected:?}, got {got:?}"
            );
        }
    }
    assert!(
        covered > 200,
        "the cube should cover part of the image ({covered} px)"
    );
}

#[test]
fn an_opaque_cube_hides_the_splats_behind_it() {
    cube_occludes(Msaa::Off, projection(SIZE).into());
}

#[test]
fn an_opaque_cube_hides_the_splats_behind_it_with_msaa() {
    cube_occludes(Msaa::Sample4, projection(SIZE).into());
}

#[test]
fn an_opaque_cube_hides_the_splats_behind_it_orthographic() {
    let orthographic = OrthographicProjection {
        scaling_mode: bevy::camera::ScalingMode::FixedVertical {
            viewport_height: 2.5,
        },
        ..OrthographicProjection::default_3d()
    };
    cube_occludes(Msaa::Off, orthographic.into());
}

/// The largest difference between `mixed` and the CPU reference's layer of `wall`
/// (seen from the origin) over `under`, blended in 8-bit values: C + (1 − A)·b.
fn worst_against_layer_over(wall: &GaussianSplats, under: &Rgba8, mixed: &Rgba8) -> u8 {
    let pinhole = PinholeCamera::from_bevy(&Transform::IDENTITY, FOV_Y, SIZE.x, SIZE.y, 0.01);
    let layer = rasterize(
        &[CpuCloud {
            geometry: wall.geometry(),
            sh: wall.sh(),
            sh_degree: 0,
            world_from_cloud: DMat4::IDENTITY,
        }],
        &pinhole,
    );
    let mut worst = 0;
    for y in 0..SIZE.y {
        for x in 0..SIZE.x {
            let l = layer[(y * SIZE.x + x) as usize];
            let below = under.pixel(x, y);
            let expected: Vec<u8> = (0..3)
                .map(|c| to_unorm8(l[c] + (1.0 - l[3]) * f64::from(below[c]) / 255.0))
                .collect();
            worst = worst.max(max_difference(&expected, &mixed.pixel(x, y)[..3]));
        }
    }
    worst
}

/// The default composite into an sRGB image, as a window shows it: the CPU
/// reference's layer over the cube's own display image in sRGB values,
/// `C + (1 − A)·b`, with and without MSAA (the composite reads the resolved colour
/// behind and writes one value to every sample the splats reach).
fn displayed_splats_blend_over_a_cube_in_srgb(msaa: Msaa) {
    let cube_colour = Color::srgb(0.1, 0.3, 0.9);
    let wall = splat_wall(-2.0, [0.9, 0.8, 0.1], 0.5);
    let display = |headless: &mut Headless| {
        let camera = headless.spawn_display_camera(
            Transform::IDENTITY,
            projection(SIZE),
            SIZE,
            Color::BLACK,
        );
        render_with_msaa(headless, camera, msaa)
    };

    let mut only_cube = Headless::new(common::headless_plugins());
    spawn_cube(&mut only_cube, Vec3::new(0.0, 0.0, -4.0), 2.0, cube_colour);
    let cube = display(&mut only_cube);

    let mut both = Headless::new(common::headless_plugins());
    let h = both.add_splats(wall.clone());
    both.spawn_cloud(h, Transform::IDENTITY);
    spawn_cube(&mut both, Vec3::new(0.0, 0.0, -4.0), 2.0, cube_colour);
    let mixed = display(&mut both);

    let over_cube = (0..SIZE.y)
        .flat_map(|y| (0..SIZE.x).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            cube.pixel(x, y)[..3] != [0, 0, 0] && mixed.pixel(x, y) != cube.pixel(x, y)
        })
        .count();
    let worst = worst_against_layer_over(&wall, &cube, &mixed);
    assert!(over_cube > 500, "the wall covers the cube ({over_cube} px)");
    assert!(
        worst <= 2,
        "{msaa:?}: displayed splats over the cube differ by {worst}/255 from C + (1 - A) b"
    );
}

#[test]
fn displayed_splats_blend_over_a_cube_in_srgb_values() {
    displayed_splats_blend_over_a_cube_in_srgb(Msaa::Off);
}

#[test]
fn displayed_splats_blend_over_a_cube_in_srgb_values_with_msaa() {
    displayed_splats_blend_over_a_cube_in_srgb(Msaa::Sample4);
}

#[test]
fn splats_in_front_blend_over_a_cube() {
    let cube_colour = Color::srgb(0.1, 0.3, 0.9);
    let wall = splat_wall(-2.0, [0.9, 0.8, 0.1], 0.5);

    let mut only_cube = Headless::new(common::headless_plugins());
    spawn_cube(&mut only_cube, Vec3::new(0.0, 0.0, -4.0), 2.0, cube_colour);
    let cube = render_one(&mut only_cube, Msaa::Off, &projection(SIZE).into());

    let mut both = Headless::new(common::headless_plugins());
    let h = both.add_splats(wall.clone());
    both.spawn_cloud(h, Transform::IDENTITY);
    spawn_cube(&mut both, Vec3::new(0.0, 0.0, -4.0), 2.0, cube_colour);
    let mixed = render_one(&mut both, Msaa::Off, &projection(SIZE).into());

    // The splat layer (premultiplied, with coverage) from the CPU reference, over the cube.
    let worst = worst_against_layer_over(&wall, &cube, &mixed);
    assert!(
        worst <= 2,
        "splats over the cube differ by {worst}/255 from layer-over-cube"
    );
}

#[test]
fn two_overlapping_clouds_render_as_one_cloud_holding_both() {
    let offset = Vec3::new(0.25, 0.05, -0.15);
    let size = UVec2::new(160, 120);

    let mut two = Headless::new(common::headless_plugins());
    let a = two.add_splats(angel());
    two.spawn_cloud(a.clone(), Transform::IDENTITY);
    two.spawn_cloud(a, Transform::from_translation(offset));
    let camera = two.spawn_camera(angel_view(), projection(size), size, None);
    let separate = two.render(&[camera]).unwrap().remove(0);

    let one = angel();
    let mut geometry = one.geometry().to_vec();
    geometry.extend(one.geometry().iter().map(|g| SplatGeometry {
        position: (Vec3::from_array(g.position) + offset).to_array(),
        ..*g
    }));
    let mut sh = one.sh().to_vec();
    sh.extend_from_slice(one.sh());
    let merged = GaussianSplats::new(geometry, sh, one.sh_degree()).unwrap();
    let mut single = Headless::new(common::headless_plugins());
    let m = single.add_splats(merged);
    single.spawn_cloud(m, Transform::IDENTITY);
    let camera = single.spawn_camera(angel_view(), projection(size), size, None);
    let together = single.render(&[camera]).unwrap().remove(0);

    let db = psnr(&separate.rgb(), &together.rgb());
    let worst = max_difference(&separate.rgb(), &together.rgb());
    println!("two clouds vs one: PSNR {db:.1} dB, max difference {worst}");
    assert!(
        db >= 50.0 && worst <= 8,
        "PSNR {db:.1} dB, max difference {worst}"
    );
}

fn render_alone(transform: Transform, size: UVec2, hdr: bool) -> Rgba8 {
    let mut headless = Headless::new(common::headless_plugins());
    let a = headless.add_splats(angel());
    headless.spawn_cloud(a, Transform::IDENTITY);
    let camera = headless.spawn_camera(transform, projection(size), size, None);
    if hdr {
        headless
            .app
            .world_mut()
            .entity_mut(camera.entity)
            .insert(Hdr);
    }
    headless.render(&[camera]).unwrap().remove(0)
}

fn assert_same(a: &Rgba8, b: &Rgba8, what: &str) {
    let worst = max_difference(&a.rgb(), &b.rgb());
    assert!(worst <= 1, "{what}: max difference {worst}/255");
}

#[test]
fn cameras_of_different_sizes_render_what_each_renders_alone() {
    let (pose_a, size_a) = (angel_view(), UVec2::new(128, 96));
    let (pose_b, size_b) = (
        Transform::from_xyz(-1.5, 0.2, 1.0).looking_at(Vec3::ZERO, Vec3::Y),
        UVec2::new(75, 50),
    );
    let mut both = Headless::new(common::headless_plugins());
    let a = both.add_splats(angel());
    both.spawn_cloud(a, Transform::IDENTITY);
    let cameras: Vec<HeadlessCamera> = vec![
        both.spawn_camera(pose_a, projection(size_a), size_a, None),
        both.spawn_camera(pose_b, projection(size_b), size_b, None),
    ];
    let images = both.render(&cameras).unwrap();
    assert_same(
        &images[0],
        &render_alone(pose_a, size_a, false),
        "first camera",
    );
    assert_same(
        &images[1],
        &render_alone(pose_b, size_b, false),
        "second camera",
    );
}

/// The images and the plugin's GPU memory of cameras of one size at `poses`, each on
/// its own target.
fn render_with_memory(poses: &[Transform], size: UVec2) -> (Vec<Rgba8>, u64) {
    let mut headless = Headless::new(common::headless_plugins());
    let a = headless.add_splats(angel());
    headless.spawn_cloud(a, Transform::IDENTITY);
    let cameras: Vec<HeadlessCamera> = poses
        .iter()
        .map(|pose| headless.spawn_camera(*pose, projection(size), size, None))
        .collect();
    let images = headless.render(&cameras).unwrap();
    let memory = headless
        .app
        .world()
        .resource::<bevy_splat::SplatMemory>()
        .bytes();
    (images, memory)
}

/// Cameras record one after another, so those of one size share one splat layer and
/// one set of working buffers, as large as the larger of them needs; each keeps its
/// own inputs and read-back. Two cameras of a split screen then hold about what the
/// busier of them holds alone, and draw what each draws alone. (While each held its
/// own, at 646950c, the two here held 8.14 MB of work against the busier camera's
/// 4.14 MB alone; shared, 4.14 MB.)
#[test]
fn cameras_of_one_size_share_their_working_buffers() {
    let size = UVec2::new(120, 90);
    let left = angel_view();
    let right = Transform::from_xyz(-1.5, 0.2, 1.0).looking_at(Vec3::ZERO, Vec3::Y);
    // Looking away: the cloud's asset and no work.
    let away = Transform::from_xyz(0.0, 0.0, 3.0).looking_at(Vec3::new(0.0, 0.0, 9.0), Vec3::Y);
    let (_, bare) = render_with_memory(&[away], size);
    let (left_alone, left_bytes) = render_with_memory(&[left], size);
    let (right_alone, right_bytes) = render_with_memory(&[right], size);
    let (both, both_bytes) = render_with_memory(&[left, right], size);
    let work = |bytes: u64| bytes.saturating_sub(bare);
    println!(
        "GPU memory beyond the cloud's {bare} B: left camera alone {} B, right alone {} B, \
         both {} B",
        work(left_bytes),
        work(right_bytes),
        work(both_bytes)
    );
    let busier = work(left_bytes).max(work(right_bytes));
    assert!(busier > 0, "the cameras draw splats");
    assert!(
        work(both_bytes) < busier + busier / 4,
        "two cameras hold {} B of work against the busier one's {busier} B",
        work(both_bytes)
    );
    assert_same(&both[0], &left_alone[0], "first camera");
    assert_same(&both[1], &right_alone[0], "second camera");
}

#[test]
fn two_viewports_on_one_target_match_their_own_renders() {
    let half = UVec2::new(80, 90);
    let target = UVec2::new(160, 90);
    let pose_left = angel_view();
    let pose_right = Transform::from_xyz(-1.5, 0.2, 1.0).looking_at(Vec3::ZERO, Vec3::Y);

    let mut split = Headless::new(common::headless_plugins());
    let a = split.add_splats(angel());
    split.spawn_cloud(a, Transform::IDENTITY);
    let left = split.spawn_camera(
        pose_left,
        projection(half),
        target,
        Some(Viewport {
            physical_position: UVec2::ZERO,
            physical_size: half,
            ..default()
        }),
    );
    let right = split.spawn_camera_on(
        left.image.clone(),
        pose_right,
        projection(half),
        target,
        Some(Viewport {
            physical_position: UVec2::new(80, 0),
            physical_size: half,
            ..default()
        }),
        1,
    );
    let image = split.render(&[left, right]).unwrap().remove(0);

    let alone_left = render_alone(pose_left, half, false);
    let alone_right = render_alone(pose_right, half, false);
    let mut worst = 0;
    for y in 0..half.y {
        for x in 0..half.x {
            worst = worst.max(max_difference(
                &image.pixel(x, y)[..3],
                &alone_left.pixel(x, y)[..3],
            ));
            worst = worst.max(max_difference(
                &image.pixel(x + 80, y)[..3],
                &alone_right.pixel(x, y)[..3],
            ));
        }
    }
    assert!(
        worst <= 1,
        "viewports differ from single renders by {worst}/255"
    );
}

#[test]
fn hdr_cameras_render_the_same_layer() {
    let size = UVec2::new(96, 72);
    let plain = render_alone(angel_view(), size, false);
    let hdr = render_alone(angel_view(), size, true);
    assert_same(&plain, &hdr, "HDR camera");
}

/// One frame of `camera`, and what its splats' statistics say of it.
fn render_with_stats(
    headless: &mut Headless,
    camera: &HeadlessCamera,
) -> (Rgba8, bevy_splat::SplatViewStats) {
    let image = headless
        .render(std::slice::from_ref(camera))
        .unwrap()
        .remove(0);
    let stats = headless
        .app
        .world()
        .resource::<bevy_splat::SplatStats>()
        .get(camera.entity)
        .expect("the camera's stats");
    (image, stats)
}

/// The angel half in front of a cube, through `camera_setup`, composited by a
/// compute pass (an HDR main texture that takes storage writes) or by the fragment
/// pass (the same HDR camera without them).
fn composited(compute: bool, camera_setup: impl Fn(&mut EntityWorldMut)) -> Rgba8 {
    let mut headless = Headless::new(common::headless_plugins());
    let a = headless.add_splats(angel());
    headless.spawn_cloud(a, Transform::IDENTITY);
    spawn_cube(
        &mut headless,
        Vec3::new(0.3, 0.7, -1.5),
        1.2,
        Color::srgb(0.1, 0.3, 0.9),
    );
    let camera = headless.spawn_camera(angel_view(), projection(SIZE), SIZE, None);
    if compute {
        headless.composite_by_compute(&camera);
    } else {
        headless
            .app
            .world_mut()
            .entity_mut(camera.entity)
            .insert(Hdr);
    }
    camera_setup(&mut headless.app.world_mut().entity_mut(camera.entity));
    let (image, stats) = render_with_stats(&mut headless, &camera);
    assert_eq!(stats.compute_composite, compute, "the composite that ran");
    image
}

#[test]
fn the_compute_composite_draws_what_the_fragment_pass_draws() {
    let passthrough = |_: &mut EntityWorldMut| {};
    // The default composite: over a copy of the scene, in sRGB values.
    let linearize = |camera: &mut EntityWorldMut| {
        camera.insert(bevy_splat::SplatComposite::Linearize);
    };
    let setups: [(&str, &dyn Fn(&mut EntityWorldMut)); 2] = [
        ("passthrough", &passthrough),
        ("over the scene", &linearize),
    ];
    for (what, setup) in setups {
        let compute = composited(true, setup);
        let fragment = composited(false, setup);
        assert!(compute.rgb().iter().any(|&v| v > 0), "{what}: an image");
        assert_same(&compute, &fragment, what);
    }
}

/// The tile render, the composite and the depth write run over the tiles some splat
/// reaches: every tile where the CPU reference draws a pixel is among them, and none
/// lies further than one tile from such a tile (a splat's α ≥ 1/255 ellipse can enter
/// a tile without covering any of its pixel centres). The angel far away fills a few
/// of the 12 × 8 tiles; the image is the reference's either way.
#[test]
fn only_the_tiles_the_splats_reach_are_drawn() {
    let tile = bevy_splat::render::TILE_SIZE;
    let pose = Transform::from_xyz(1.2, 0.9, 7.0).looking_at(Vec3::new(0.0, 0.1, 0.0), Vec3::Y);
    let mut headless = Headless::new(common::headless_plugins());
    let splats = angel();
    let cpu_layer = rasterize(
        &[CpuCloud {
            geometry: splats.geometry(),
            sh: splats.sh(),
            sh_degree: splats.sh_degree(),
            world_from_cloud: DMat4::IDENTITY,
        }],
        &PinholeCamera::from_bevy(&pose, FOV_Y, SIZE.x, SIZE.y, 0.01),
    );
    let a = headless.add_splats(splats);
    headless.spawn_cloud(a, Transform::IDENTITY);
    let camera = headless.spawn_camera(pose, projection(SIZE), SIZE, None);
    headless.app.world_mut().entity_mut(camera.entity).insert((
        bevy_splat::SplatComposite::Passthrough,
        bevy_splat::SplatDepth,
    ));
    let (image, stats) = render_with_stats(&mut headless, &camera);

    let tiles = SIZE / tile;
    let reached: Vec<bool> = (0..tiles.y)
        .flat_map(|ty| (0..tiles.x).map(move |tx| (tx, ty)))
        .map(|(tx, ty)| {
            (0..tile * tile).any(|i| {
                let (x, y) = (tx * tile + i % tile, ty * tile + i / tile);
                cpu_layer[(y * SIZE.x + x) as usize][3] > 0.0
            })
        })
        .collect();
    let at_least = reached.iter().filter(|&&r| r).count() as u32;
    let near_reached = |tx: i32, ty: i32| {
        (-1..=1).any(|dy| {
            (-1..=1).any(|dx| {
                let (x, y) = (tx + dx, ty + dy);
                x >= 0
                    && y >= 0
                    && x < tiles.x as i32
                    && y < tiles.y as i32
                    && reached[(y as u32 * tiles.x + x as u32) as usize]
            })
        })
    };
    let at_most = (0..tiles.y as i32)
        .flat_map(|ty| (0..tiles.x as i32).map(move |tx| (tx, ty)))
        .filter(|&(tx, ty)| near_reached(tx, ty))
        .count() as u32;
    println!(
        "tiles drawn {} of {}: the reference reaches {at_least}, {at_most} with a margin",
        stats.tiles_drawn,
        tiles.element_product()
    );
    assert!(
        at_least > 0 && at_most < tiles.element_product(),
        "a far angel"
    );
    assert!(
        (at_least..=at_most).contains(&stats.tiles_drawn),
        "{} tiles drawn, the reference reaches {at_least} ({at_most} with a margin)",
        stats.tiles_drawn
    );
    // The composite draws a quad over each run of drawn tiles along a row (this view's
    // 96 tiles are one workgroup's, so only rows end runs).
    let reference_runs = (0..tiles.y)
        .flat_map(|ty| (0..tiles.x).map(move |tx| (tx, ty)))
        .filter(|&(tx, ty)| {
            let at = |x: u32| reached[(ty * tiles.x + x) as usize];
            at(tx) && (tx == 0 || !at(tx - 1))
        })
        .count() as u32;
    println!(
        "{} runs of drawn tiles, the reference's {reference_runs}",
        stats.tile_runs
    );
    assert!(
        stats.tile_runs > 0 && stats.tile_runs < stats.tiles_drawn,
        "{} runs over {} tiles",
        stats.tile_runs,
        stats.tiles_drawn
    );
    if stats.tiles_drawn == at_least {
        assert_eq!(
            stats.tile_runs, reference_runs,
            "the reference's tiles, its runs"
        );
    }
    let expected: Vec<u8> = cpu_layer
        .iter()
        .flat_map(|p| (0..3).map(|c| to_unorm8(p[c])))
        .collect();
    let db = psnr(&expected, &image.rgb());
    assert!(db >= 40.0, "against the reference: {db:.1} dB");
}
