//! The BVH cast must give exactly the brute-force answer: same splat, same
//! distance, same transmittance, for every ray, including awkward ones.

use std::time::Instant;

use crate::random_clouds::{Rng, perpendicular, random_cloud, thinnest_axis};
use bevy::math::{Quat, Vec3};
use bevy_splat::raycast::{CastSettings, SplatBvh, SplatShape};

#[derive(Clone, Copy, Debug)]
struct TestRay {
    origin: Vec3,
    dir: Vec3,
    settings: CastSettings,
}

const RAY_KINDS: usize = 7;

/// One ray of kind `kind % RAY_KINDS`, aimed at the cloud in [-half, half]³.
fn make_ray(rng: &mut Rng, cloud: &[SplatShape], half: f32, kind: usize) -> TestRay {
    let target = rng.in_cube(half);
    let (origin, dir) = match kind % RAY_KINDS {
        // From outside, towards a point inside.
        0 => {
            let origin = rng.unit_vector() * half * rng.range(1.8, 4.0);
            (origin, target - origin)
        }
        // From inside, any direction.
        1 => (rng.in_cube(half), rng.unit_vector()),
        // Parallel to an axis, from a random point.
        2 => {
            let axis = [Vec3::X, Vec3::Y, Vec3::Z][rng.below(3)];
            let sign = if rng.chance(0.5) { 1.0 } else { -1.0 };
            (target - axis * sign * half * 2.0, axis * sign)
        }
        // Parallel to an axis, lying exactly in a face plane or through the
        // centre of some splat: exercises the parallel-slab cases.
        3 => {
            let splat = &cloud[rng.below(cloud.len())];
            let axis_index = rng.below(3);
            let mut origin = splat.centre;
            let other = (axis_index + 1 + rng.below(2)) % 3;
            if rng.chance(0.5) {
                // Offset by a box-ish amount so the ray lies near a face.
                origin[other] += splat.scale.max_element() * 3.0 * rng.range(-1.0, 1.0);
            }
            origin[axis_index] -= half * 3.0;
            let mut dir = Vec3::ZERO;
            dir[axis_index] = 1.0;
            (origin, dir)
        }
        // Grazing a flat splat: in its disc plane, offset about 3σ across.
        4 => {
            let splat = &cloud[rng.below(cloud.len())];
            let (thin_axis, thin_sigma) = thinnest_axis(splat);
            let dir = perpendicular(rng, thin_axis);
            let across = thin_axis * thin_sigma * rng.range(0.0, 3.2);
            let along = splat.scale.max_element() * rng.range(-1.0, 1.0);
            let side = perpendicular(rng, thin_axis).cross(thin_axis) * along;
            (
                splat.centre + across + side - dir * rng.range(0.5, 3.0) * half,
                dir,
            )
        }
        // Straight through a splat's centre (peaks exactly on the ray).
        5 => {
            let splat = &cloud[rng.below(cloud.len())];
            let dir = rng.unit_vector();
            (splat.centre - dir * rng.range(0.0, 2.0) * half, dir)
        }
        // Grazing the whole cloud's bounding cube along a face.
        _ => {
            let mut origin = target;
            let axis_index = rng.below(3);
            origin[axis_index] = half * 1.05 * if rng.chance(0.5) { 1.0 } else { -1.0 };
            let mut normal = Vec3::ZERO;
            normal[axis_index] = 1.0;
            let mut dir = perpendicular(rng, normal);
            // Exactly parallel to the face, not just to rounding.
            dir[axis_index] = 0.0;
            (origin - dir * half * 2.0, dir)
        }
    };
    // Unnormalised directions must not matter.
    let dir = dir * 10f32.powf(rng.range(-3.0, 3.0));
    let mut settings = CastSettings::default();
    match rng.below(6) {
        0 => settings.threshold = [0.1, 0.25, 0.9, 0.99][rng.below(4)],
        1 => settings.t_min = rng.range(0.0, 2.0 * half),
        2 => settings.t_max = rng.range(0.0, 4.0 * half),
        3 => settings.t_min = -rng.range(0.0, 2.0 * half),
        _ => {}
    }
    TestRay {
        origin,
        dir,
        settings,
    }
}

/// Casts `rays` both ways, asserts identical answers, returns the number of
/// hits.
fn assert_agreement(bvh: &SplatBvh, rays: &[TestRay], label: &str) -> usize {
    let mut hits = 0;
    for (index, ray) in rays.iter().enumerate() {
        let fast = bvh.cast(ray.origin, ray.dir, &ray.settings);
        let reference = bvh.cast_brute_force(ray.origin, ray.dir, &ray.settings);
        assert_eq!(fast, reference, "{label}: ray {index} {ray:?}");
        if let Some(hit) = fast {
            assert!(hit.distance.is_finite() && hit.position.is_finite());
            assert!(hit.transmittance_before > ray.settings.threshold.clamp(1e-4, 0.9999));
            hits += 1;
        }
    }
    hits
}

#[test]
fn random_clouds_match_brute_force() {
    for (seed, count, ray_count) in [(1, 1_000, 4_000), (2, 5_000, 3_000), (3, 50_000, 1_000)] {
        let mut rng = Rng::new(seed);
        let half = 10.0;
        let cloud = random_cloud(&mut rng, count, half);
        let bvh = SplatBvh::from_shapes(&cloud);
        assert!(bvh.len() > count * 9 / 10, "most random splats are valid");
        let rays: Vec<TestRay> = (0..ray_count)
            .map(|i| make_ray(&mut rng, &cloud, half, i))
            .collect();
        let hits = assert_agreement(&bvh, &rays, &format!("cloud {count}"));
        println!("cloud of {count}: {hits} of {ray_count} rays hit");
        // Both outcomes must be well represented or the test says little.
        assert!(hits > ray_count / 10, "only {hits} hits");
        assert!(
            hits < ray_count * 9 / 10,
            "{hits} hits: misses barely tested"
        );
    }
}

#[test]
fn every_ray_kind_hits_sometimes() {
    let mut rng = Rng::new(7);
    let half = 5.0;
    let cloud = random_cloud(&mut rng, 3_000, half);
    let bvh = SplatBvh::from_shapes(&cloud);
    for kind in 0..RAY_KINDS {
        let rays: Vec<TestRay> = (0..300)
            .map(|_| make_ray(&mut rng, &cloud, half, kind))
            .collect();
        let hits = assert_agreement(&bvh, &rays, &format!("kind {kind}"));
        println!("ray kind {kind}: {hits} of 300 hit");
        // The cube-face graze (kind 6) runs just outside the cloud.
        if kind != 6 {
            assert!(hits > 0, "ray kind {kind} never hits");
        }
    }
}

#[test]
fn dense_opaque_cloud_and_tiny_splats() {
    // Heavy overlap: many splats at nearly the same depth.
    let mut rng = Rng::new(11);
    let mut cloud = random_cloud(&mut rng, 20_000, 1.0);
    for shape in cloud.iter_mut().step_by(3) {
        shape.scale *= 1e-5;
    }
    for shape in cloud.iter_mut().step_by(7) {
        shape.scale = Vec3::splat(1e-7);
    }
    let bvh = SplatBvh::from_shapes(&cloud);
    let rays: Vec<TestRay> = (0..1_500)
        .map(|i| make_ray(&mut rng, &cloud, 1.0, i))
        .collect();
    let hits = assert_agreement(&bvh, &rays, "dense");
    assert!(hits > 100, "{hits}");
}

#[test]
fn bad_rays_give_none() {
    let mut rng = Rng::new(5);
    let cloud = random_cloud(&mut rng, 500, 1.0);
    let bvh = SplatBvh::from_shapes(&cloud);
    let settings = CastSettings::default();
    let origin = Vec3::new(0.0, 0.0, -5.0);
    // The ray itself is fine: make sure the None below come from the input.
    assert!(!bvh.is_empty());
    assert!(bvh.cast(origin, Vec3::Z, &settings).is_some());
    let bad_dirs = [
        Vec3::ZERO,
        Vec3::NAN,
        Vec3::new(0.0, f32::NAN, 1.0),
        Vec3::new(f32::INFINITY, 0.0, 1.0),
        Vec3::NEG_INFINITY,
    ];
    for dir in bad_dirs {
        assert_eq!(bvh.cast(origin, dir, &settings), None, "dir {dir}");
        assert_eq!(bvh.cast_brute_force(origin, dir, &settings), None);
    }
    for origin in [Vec3::NAN, Vec3::new(0.0, f32::INFINITY, 0.0)] {
        assert_eq!(bvh.cast(origin, Vec3::Z, &settings), None);
        assert_eq!(bvh.cast_brute_force(origin, Vec3::Z, &settings), None);
    }
    let nan_bounds = [
        CastSettings {
            t_min: f32::NAN,
            ..settings
        },
        CastSettings {
            t_max: f32::NAN,
            ..settings
        },
        CastSettings {
            t_min: 3.0,
            t_max: 1.0,
            ..settings
        },
    ];
    for bad in nan_bounds {
        assert_eq!(bvh.cast(origin, Vec3::Z, &bad), None);
    }
}

#[test]
fn empty_and_degenerate_clouds() {
    let settings = CastSettings::default();
    let empty = SplatBvh::from_shapes(&[]);
    assert_eq!(empty.cast(Vec3::ZERO, Vec3::Z, &settings), None);
    assert_eq!(empty.cast_brute_force(Vec3::ZERO, Vec3::Z, &settings), None);
    let empty = SplatBvh::build(&[], &[], &[], &[]);
    assert!(empty.is_empty());

    let degenerate = |centre: Vec3, scale: Vec3, rotation: Quat, opacity: f32| SplatShape {
        centre,
        scale,
        rotation,
        opacity,
    };
    let all_bad = [
        degenerate(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Quat::IDENTITY, 1.0),
        degenerate(Vec3::new(0.0, 0.0, 5.0), -Vec3::ONE, Quat::IDENTITY, 1.0),
        degenerate(Vec3::new(0.0, 0.0, 5.0), Vec3::ONE, Quat::IDENTITY, 0.0),
        degenerate(
            Vec3::new(0.0, 0.0, 5.0),
            Vec3::ONE,
            Quat::IDENTITY,
            f32::NAN,
        ),
        degenerate(Vec3::NAN, Vec3::ONE, Quat::IDENTITY, 1.0),
        degenerate(Vec3::new(0.0, 0.0, 5.0), Vec3::NAN, Quat::IDENTITY, 1.0),
        degenerate(Vec3::new(0.0, 0.0, 5.0), Vec3::ONE, Quat::NAN, 1.0),
        degenerate(
            Vec3::new(0.0, 0.0, 5.0),
            Vec3::ONE,
            Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            1.0,
        ),
        degenerate(
            Vec3::new(0.0, 0.0, 5.0),
            Vec3::INFINITY,
            Quat::IDENTITY,
            1.0,
        ),
    ];
    let bvh = SplatBvh::from_shapes(&all_bad);
    assert!(bvh.is_empty());
    assert_eq!(bvh.bounds(), None);
    assert_eq!(bvh.cast(Vec3::ZERO, Vec3::Z, &settings), None);
    assert_eq!(bvh.cast_brute_force(Vec3::ZERO, Vec3::Z, &settings), None);
}

#[test]
fn corrupted_fields_are_skipped() {
    let mut rng = Rng::new(13);
    let half = 4.0;
    let mut cloud = random_cloud(&mut rng, 4_000, half);
    // Rays are aimed using the clean shapes (the aiming maths would choke on
    // the NaNs, which is the test's problem, not the library's).
    let rays: Vec<TestRay> = (0..1_000)
        .map(|i| make_ray(&mut rng, &cloud, half, i))
        .collect();
    let mut corrupted = vec![false; cloud.len()];
    for (index, shape) in cloud.iter_mut().enumerate() {
        if !rng.chance(0.25) {
            continue;
        }
        corrupted[index] = true;
        let bad = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -1.0][rng.below(5)];
        match rng.below(4) {
            0 => shape.centre[rng.below(3)] = if bad.is_finite() { f32::NAN } else { bad },
            1 => shape.scale[rng.below(3)] = bad,
            2 => {
                shape.rotation = if bad.is_finite() {
                    Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)
                } else {
                    Quat::from_xyzw(bad, 0.0, 0.0, 1.0)
                }
            }
            _ => shape.opacity = if bad.is_finite() { 0.001 } else { bad },
        }
    }
    let bvh = SplatBvh::from_shapes(&cloud);
    let corrupted_count = corrupted.iter().filter(|&&c| c).count();
    assert!(bvh.len() <= cloud.len() - corrupted_count);
    let mut hits = 0;
    for ray in &rays {
        let fast = bvh.cast(ray.origin, ray.dir, &ray.settings);
        assert_eq!(
            fast,
            bvh.cast_brute_force(ray.origin, ray.dir, &ray.settings)
        );
        if let Some(hit) = fast {
            assert!(!corrupted[hit.splat as usize], "hit a corrupted splat");
            hits += 1;
        }
    }
    assert!(hits > 50, "{hits}");
}

#[test]
fn coincident_splats_build_fast_and_agree() {
    let centre = Vec3::new(1.0, -2.0, 3.0);
    let count = 100_000;
    // Identical splats: every depth ties, so the order is decided by index
    // alone.
    let identical = vec![
        SplatShape {
            centre,
            scale: Vec3::new(0.3, 0.2, 0.1),
            rotation: Quat::from_rotation_y(0.3),
            opacity: 0.02,
        };
        count
    ];
    // Same centre, otherwise random.
    let mut rng = Rng::new(17);
    let mut varied = random_cloud(&mut rng, count, 1.0);
    for shape in &mut varied {
        shape.centre = centre;
    }
    for (label, cloud) in [("identical", &identical), ("varied", &varied)] {
        let start = Instant::now();
        let bvh = SplatBvh::from_shapes(cloud);
        let elapsed = start.elapsed();
        println!("{label}: {count} coincident splats built in {elapsed:?}");
        // Only splats with opacity below 1/255 are dropped.
        assert!(bvh.len() > cloud.len() * 99 / 100);
        let rays: Vec<TestRay> = (0..100)
            .map(|i| {
                let mut ray = make_ray(&mut rng, cloud, 1.0, [0, 1, 5][i % 3]);
                ray.settings = CastSettings::default();
                ray
            })
            .collect();
        let hits = assert_agreement(&bvh, &rays, label);
        assert!(hits > 10, "{label}: {hits}");
    }
    // With identical splats the 35th one along any ray through the point is
    // the hit: 0.98^35 = 0.4931 <= 0.5 < 0.98^34. Ties go by index, so it is
    // splat 34.
    let bvh = SplatBvh::from_shapes(&identical);
    let hit = bvh
        .cast(centre - Vec3::Z * 5.0, Vec3::Z, &CastSettings::default())
        .expect("hit");
    assert_eq!(hit.splat, 34);
    assert!((hit.distance - 5.0).abs() < 1e-5);
}
