//! The GPU pick against the CPU reference rasterizer's median depth (the same
//! projected model: same splat, same depth) and against the CPU ray cast (the 3-D
//! model: same cloud, nearly the same depth) on real scans: the shipped angel and the
//! seal.

use bevy::camera::Camera;
use bevy::ecs::system::RunSystemOnce;
use bevy::math::DMat4;
use bevy::prelude::*;
use bevy_splat::asset::formats::ply;
use bevy_splat::{GaussianSplats, SplatRaycast, SplatRaycastSettings};

use crate::pointers::{picking_app, settle, spawn_pointers, splat_hit};
use crate::reference_raster::{CpuCloud, PinholeCamera, median_depth};

const SIZE: UVec2 = UVec2::new(640, 480);
const FOV_Y: f32 = 0.75;
const NEAR: f32 = 0.01;

fn scan(path: &str) -> GaussianSplats {
    let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    GaussianSplats::from(ply::decode(&bytes).expect("it decodes"))
}

/// 16 pixels spread over the statue and the space around it.
fn pixels() -> Vec<UVec2> {
    (0..4)
        .flat_map(|j| (0..4).map(move |i| UVec2::new(200 + 80 * i, 60 + 110 * j)))
        .collect()
}

#[test]
fn picks_on_the_angel_find_the_reference_surface_and_agree_with_ray_casts() {
    let eye = Transform::from_xyz(0.6, 1.1, 3.0).looking_at(Vec3::new(0.0, 0.8, 0.0), Vec3::Y);
    check(scan("assets/angel.ply"), eye);
}

#[test]
fn picks_on_the_seal_find_the_reference_surface_and_agree_with_ray_casts() {
    let eye = Transform::from_xyz(0.3, -0.8, 3.8).looking_at(Vec3::new(0.1, -0.1, 0.2), Vec3::Y);
    check(scan("tests/data/seal_sh0.ply"), eye);
}

fn check(splats: GaussianSplats, eye: Transform) {
    let mut headless = picking_app();
    let handle = headless.add_splats(splats.clone());
    let cloud = headless.spawn_cloud(handle, Transform::IDENTITY);
    let projection = PerspectiveProjection {
        fov: FOV_Y,
        aspect_ratio: SIZE.x as f32 / SIZE.y as f32,
        near: NEAR,
        ..Default::default()
    };
    let camera = headless.spawn_camera(eye, projection, SIZE, None);
    let pixels = pixels();
    spawn_pointers(&mut headless, &camera, &pixels);
    settle(&mut headless, &camera, pixels.len());

    let pinhole = PinholeCamera::from_bevy(&eye, FOV_Y, SIZE.x, SIZE.y, NEAR);
    let reference = median_depth(
        &[CpuCloud {
            geometry: splats.geometry(),
            sh: splats.sh(),
            sh_degree: splats.sh_degree(),
            world_from_cloud: DMat4::IDENTITY,
        }],
        &pinhole,
        &pixels.iter().map(|p| (p.x, p.y)).collect::<Vec<_>>(),
    );

    let (mut hits, mut same_splat, mut ray_agrees, mut ray_missed) = (0, 0, 0, 0);
    for (n, (pixel, expected)) in pixels.iter().zip(&reference).enumerate() {
        let picked = splat_hit(&headless, n);
        match (picked, expected) {
            (None, None) => {}
            (Some(hit), Some(expected)) => {
                hits += 1;
                assert_eq!(hit.cloud, cloud);
                // f32 against f64 may swap two splats that cross 0.5 together.
                same_splat += usize::from(hit.splat_index as usize == expected.splat);

                // The CPU ray cast along the same pointer ray.
                let position = pixel.as_vec2() + 0.5;
                let camera_entity = camera.entity;
                let cast = headless
                    .app
                    .world_mut()
                    .run_system_once(
                        move |cameras: Query<(&Camera, &GlobalTransform)>,
                              raycast: SplatRaycast| {
                            let (camera, transform) = cameras.get(camera_entity).ok()?;
                            let ray = camera.viewport_to_world(transform, position).ok()?;
                            raycast.cast(ray, &SplatRaycastSettings::default())
                        },
                    )
                    .expect("the cast runs");
                let Some(cast) = cast else {
                    // Where the surface is barely reached (silhouettes), the projected
                    // footprint (widened by the 0.3 px² blur) can cross 0.5 where the
                    // 3-D Gaussians along the ray do not.
                    eprintln!("pixel {pixel}: the ray cast missed");
                    ray_missed += 1;
                    continue;
                };
                assert_eq!(cast.entity, hit.cloud, "pixel {pixel}: another cloud");
                let apart = (cast.distance - hit.distance).abs() / hit.distance;
                eprintln!(
                    "pixel {pixel}: pick {} at {:.4}, ray cast {} at {:.4} ({:.2} %)",
                    hit.splat_index,
                    hit.distance,
                    cast.splat_index,
                    cast.distance,
                    apart * 100.0
                );
                if apart <= 0.01 {
                    ray_agrees += 1;
                }
                assert!(apart <= 0.05, "pixel {pixel}: ray cast {apart} away");
            }
            (picked, expected) => {
                panic!("pixel {pixel}: picked {picked:?}, the reference says {expected:?}")
            }
        }
    }
    eprintln!(
        "{hits} hits, {same_splat} on the reference's splat, {ray_agrees} within 1 % of the \
         ray cast, {ray_missed} missed by it"
    );
    assert!(hits >= 8, "the scan covers much of the view: {hits} hits");
    assert!(
        same_splat + 1 >= hits,
        "{same_splat} of {hits} on the same splat"
    );
    // The GPU finds the hit splat by the projected model, the ray cast by the 3-D one
    // (see docs/SURFACE.md); both then place the surface where their splat's Gaussian
    // peaks along the ray. Most surface depths agree within 1 % (the angel 9 of 10
    // here, the seal, a noisy phone capture, 8 of 9), the rest within a few per cent
    // where the two models pick different splats on a silhouette.
    assert!(
        ray_agrees * 100 >= hits * 75,
        "{ray_agrees} of {hits} within 1 %"
    );
    assert!(
        ray_missed * 8 <= hits,
        "the ray cast missed {ray_missed} of {hits}"
    );
}
