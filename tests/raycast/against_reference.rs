//! The crate's f32 maths against an independent f64 model built from the
//! full covariance (or its inverse) rather than the whitened frame.

use crate::random_clouds::Rng;
use bevy::math::{Affine3A, DAffine3, DMat3, DQuat, DVec3, Mat3, Quat, Vec3};
use bevy_splat::raycast::{CastSettings, PreparedSplat, SplatBvh, SplatShape};

/// A splat in the reference model: centre and precision matrix Σ⁻¹.
struct ReferenceSplat {
    centre: DVec3,
    precision: DMat3,
    opacity: f64,
}

fn rotation_f64(rotation: Quat) -> DMat3 {
    let q = DQuat::from_xyzw(
        rotation.x as f64,
        rotation.y as f64,
        rotation.z as f64,
        rotation.w as f64,
    );
    DMat3::from_quat(q.normalize())
}

/// Σ⁻¹ = R·diag(1/s²)·Rᵀ, straight from the definition.
fn precision_from_shape(shape: &SplatShape) -> DMat3 {
    let r = rotation_f64(shape.rotation);
    let s = shape.scale.as_dvec3();
    r * DMat3::from_diagonal(DVec3::ONE / (s * s)) * r.transpose()
}

/// Squared Mahalanobis distance of `x` from the splat.
fn mahalanobis_sq(splat: &ReferenceSplat, x: DVec3) -> f64 {
    let offset = x - splat.centre;
    offset.dot(splat.precision * offset)
}

/// Closed-form peak of the quadratic m²(t) along `origin + t·dir`.
fn reference_peak(splat: &ReferenceSplat, origin: DVec3, dir: DVec3) -> (f64, f64) {
    let p_dir = splat.precision * dir;
    let t = p_dir.dot(splat.centre - origin) / p_dir.dot(dir);
    (t, mahalanobis_sq(splat, origin + dir * t))
}

/// The peak found by sampling the ray finely and then narrowing the best
/// bracket by ternary search. m²(t) is convex, so its minimum lies within
/// one step of the best sample.
fn sampled_peak(
    splat: &ReferenceSplat,
    origin: DVec3,
    dir: DVec3,
    t_lo: f64,
    t_hi: f64,
) -> (f64, f64) {
    let samples = 20_000;
    let step = (t_hi - t_lo) / samples as f64;
    let at = |t: f64| mahalanobis_sq(splat, origin + dir * t);
    let best = (0..=samples)
        .map(|k| t_lo + step * k as f64)
        .min_by(|a, b| at(*a).total_cmp(&at(*b)))
        .unwrap_or(t_lo);
    let (mut lo, mut hi) = (best - step, best + step);
    for _ in 0..200 {
        let a = lo + (hi - lo) / 3.0;
        let b = hi - (hi - lo) / 3.0;
        if at(a) < at(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    let t = 0.5 * (lo + hi);
    (t, at(t))
}

#[test]
fn peak_matches_numerical_minimisation() {
    let mut rng = Rng::new(21);
    let scales = [
        Vec3::new(1.0, 1.0, 1.0),
        Vec3::new(2.0, 0.3, 0.05),
        Vec3::new(0.01, 1.5, 0.2),
        Vec3::new(1.0, 1.0, 1e-3),
    ];
    let mut worst_t = 0.0f64;
    let mut worst_m = 0.0f64;
    let mut checked = 0;
    let mut inside_cut = 0;
    let (mut worst_t_inside, mut worst_m_inside) = (0.0f64, 0.0f64);
    for scale in scales {
        for _ in 0..40 {
            let shape = SplatShape {
                centre: rng.in_cube(3.0),
                scale,
                rotation: rng.rotation(),
                opacity: 1.0,
            };
            let splat = PreparedSplat::new(&shape).expect("valid splat");
            let reference = ReferenceSplat {
                centre: shape.centre.as_dvec3(),
                precision: precision_from_shape(&shape),
                opacity: 1.0,
            };
            for ray_index in 0..10 {
                // Rays passing within a few σ of the centre (half of them
                // measured in σ units along the splat's own axes), from up
                // to 10 units away.
                let dir = rng.unit_vector();
                let miss = if ray_index % 2 == 0 {
                    shape.rotation * (scale * rng.unit_vector() * rng.range(0.0, 3.5))
                } else {
                    rng.unit_vector() * scale.max_element() * rng.range(0.0, 2.0)
                };
                let distance = rng.range(1.0, 10.0);
                let origin = shape.centre + miss - dir * distance;
                let peak = splat.peak_along_ray(origin, dir).expect("peak exists");
                let (t_sampled, m_sampled) =
                    sampled_peak(&reference, origin.as_dvec3(), dir.as_dvec3(), -1e4, 1e4);
                // What f32 can resolve: positions are known to a few ulps of
                // the coordinates involved; the tolerances are what that
                // uncertainty alone can do to t* and m², from their
                // gradients with respect to the ray origin (∂t*/∂o =
                // -Pd/(dᵀPd), ∂m²/∂o = 2Pr with r the offset at the peak).
                // For a disc seen edge-on t* is ill-conditioned: the first
                // gradient grows like s_max/s_min. Far outside the 3σ cut the
                // dot products in the closed form round at the scale of m
                // (last term), and beyond 10σ, where the density is below
                // e⁻⁵⁰ and nothing depends on the value, the tolerance is
                // relaxed tenfold.
                let position_ulps = 8.0
                    * f32::EPSILON as f64
                    * (origin.length() + shape.centre.length() + peak.t.abs()) as f64;
                let (d, p) = (dir.as_dvec3(), reference.precision);
                let sigma_along = 1.0 / d.dot(p * d).sqrt();
                let t_gradient = (p * d).length() / d.dot(p * d);
                let offset = origin.as_dvec3() + d * t_sampled - reference.centre;
                let m_gradient = 2.0 * (p * offset).length();
                let p_norm =
                    (p * DVec3::X).length() + (p * DVec3::Y).length() + (p * DVec3::Z).length();
                let relaxed = if m_sampled > 100.0 { 10.0 } else { 1.0 };
                let t_tolerance = relaxed
                    * (1e-4 * sigma_along
                        + position_ulps * (1.0 + t_gradient)
                        + 8.0 * f32::EPSILON as f64 * sigma_along * m_sampled.sqrt());
                let m_tolerance = 1e-4 * (1.0 + m_sampled)
                    + position_ulps * m_gradient
                    + position_ulps * position_ulps * p_norm;
                let t_error = (peak.t as f64 - t_sampled).abs() / t_tolerance;
                let m_error = (peak.mahalanobis_sq as f64 - m_sampled).abs() / m_tolerance;
                assert!(
                    t_error < 1.0,
                    "t {} vs {t_sampled} (σ {sigma_along})",
                    peak.t
                );
                assert!(m_error < 1.0, "m² {} vs {m_sampled}", peak.mahalanobis_sq);
                // The closed form agrees with the sampling too, so the
                // sampling is trustworthy.
                let (t_closed, m_closed) =
                    reference_peak(&reference, origin.as_dvec3(), dir.as_dvec3());
                assert!(
                    (t_closed - t_sampled).abs() < 1e-5 * sigma_along * (1.0 + m_closed.sqrt()),
                    "closed {t_closed} sampled {t_sampled} σ {sigma_along} m² {m_closed}"
                );
                assert!((m_closed - m_sampled).abs() < 1e-6 * (1.0 + m_closed));
                if m_sampled <= 9.0 {
                    inside_cut += 1;
                    worst_t_inside = worst_t_inside.max(t_error);
                    worst_m_inside = worst_m_inside.max(m_error);
                }
                worst_t = worst_t.max(t_error);
                worst_m = worst_m.max(m_error);
                checked += 1;
            }
        }
    }
    println!(
        "{checked} rays ({inside_cut} within 3σ): worst t error {worst_t:.3} of tolerance, \
         worst m² error {worst_m:.3} of tolerance; within 3σ {worst_t_inside:.3} and \
         {worst_m_inside:.3}"
    );
    assert_eq!(checked, 1600);
    assert!(inside_cut > 400, "{inside_cut}");
}

/// Outcome of the f64 reference cast.
struct ReferenceCast {
    hit: Option<(u32, f64)>,
    /// True when a rounding-sized change (a cut boundary, a near tie in
    /// depth, the threshold) could change the answer: f32 and f64 may then
    /// legitimately disagree.
    ambiguous: bool,
}

fn reference_cast(
    splats: &[(u32, ReferenceSplat)],
    origin: DVec3,
    dir: DVec3,
    settings: &CastSettings,
) -> ReferenceCast {
    // Several times the f32 errors seen in practice (relative depth errors
    // around 1e-6).
    const M_SLACK: f64 = 1e-3;
    const T_SLACK: f64 = 1e-5;
    const TRANSMITTANCE_SLACK: f64 = 1e-4;
    let (t_min, t_max) = (settings.t_min as f64, settings.t_max as f64);
    let threshold = settings.threshold as f64;
    let mut ambiguous = false;
    let mut along: Vec<(f64, u32, f64)> = Vec::new();
    for (index, splat) in splats {
        let (t, m_sq) = reference_peak(splat, origin, dir);
        let raw_alpha = splat.opacity * (-0.5 * m_sq).exp();
        let near_cut = (m_sq - 9.0).abs() < M_SLACK
            || (raw_alpha - 1.0 / 255.0).abs() < 1e-6
            || (t - t_min).abs() < T_SLACK * (1.0 + t.abs())
            || (t - t_max).abs() < T_SLACK * (1.0 + t.abs());
        let counts = m_sq <= 9.0 && raw_alpha >= 1.0 / 255.0 && t >= t_min && t <= t_max;
        if counts || near_cut {
            // Marked by a negative alpha when it is only near the cut.
            along.push((t, *index, if counts { raw_alpha.min(0.999) } else { -1.0 }));
        }
    }
    along.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut transmittance = 1.0;
    let mut previous_t = f64::NEG_INFINITY;
    for (position, &(t, index, alpha)) in along.iter().enumerate() {
        if (t - previous_t).abs() < T_SLACK * (1.0 + t.abs()) {
            ambiguous = true;
        }
        previous_t = t;
        if alpha < 0.0 {
            ambiguous = true;
            continue;
        }
        let before = transmittance;
        transmittance *= 1.0 - alpha;
        if transmittance <= threshold {
            if let Some(next) = along.get(position + 1)
                && (next.0 - t).abs() < T_SLACK * (1.0 + t.abs())
            {
                ambiguous = true;
            }
            if before - threshold < TRANSMITTANCE_SLACK {
                ambiguous = true;
            }
            return ReferenceCast {
                hit: Some((index, t)),
                ambiguous,
            };
        }
    }
    ReferenceCast {
        hit: None,
        ambiguous: ambiguous || transmittance - threshold < TRANSMITTANCE_SLACK,
    }
}

#[test]
fn transformed_cast_matches_world_space_reference() {
    let mut rng = Rng::new(31);
    let half = 4.0;
    // Moderate anisotropy (up to 1:100) keeps the f64 inverse of the world
    // covariance well conditioned.
    let cloud: Vec<SplatShape> = (0..3_000)
        .map(|_| {
            let base = 0.25;
            let mut scale = Vec3::new(
                base * (0.5 * rng.normal()).exp(),
                base * (0.5 * rng.normal()).exp(),
                base * (0.5 * rng.normal()).exp(),
            );
            if rng.chance(0.2) {
                scale.z *= rng.range(0.01, 0.1);
            }
            SplatShape {
                centre: rng.in_cube(half),
                scale,
                rotation: rng.rotation(),
                opacity: rng.range(0.05, 1.0),
            }
        })
        .collect();
    let bvh = SplatBvh::from_shapes(&cloud);

    let world_from_local = Affine3A::from_scale_rotation_translation(
        Vec3::new(2.0, 0.5, 1.3),
        Quat::from_euler(bevy::math::EulerRot::YXZ, 0.7, -0.4, 1.9),
        Vec3::new(3.0, -2.0, 5.0),
    );
    let world_from_local_f64 = DAffine3::from_mat3_translation(
        Mat3::from(world_from_local.matrix3).as_dmat3(),
        world_from_local.translation.as_dvec3(),
    );
    let linear = world_from_local_f64.matrix3;
    // The hand-transformed cloud: μ' = Aμ + b, Σ' = L Σ Lᵀ, inverted in f64.
    let world_splats: Vec<(u32, ReferenceSplat)> = (0u32..)
        .zip(&cloud)
        .map(|(index, shape)| {
            let r = rotation_f64(shape.rotation);
            let s = shape.scale.as_dvec3();
            let covariance = r * DMat3::from_diagonal(s * s) * r.transpose();
            let world_covariance = linear * covariance * linear.transpose();
            (
                index,
                ReferenceSplat {
                    centre: world_from_local_f64.transform_point3(shape.centre.as_dvec3()),
                    precision: world_covariance.inverse(),
                    opacity: shape.opacity as f64,
                },
            )
        })
        .collect();

    let world_centre = world_from_local.transform_point3(Vec3::ZERO);
    let world_half = half * 2.5;
    let mut compared = 0;
    let mut ambiguous = 0;
    let mut hits = 0;
    let mut worst_distance_error = 0.0f64;
    let ray_count = 2_000;
    for i in 0..ray_count {
        let target = world_centre + rng.in_cube(world_half * 0.6);
        let origin = if i % 2 == 0 {
            world_centre + rng.unit_vector() * world_half * 2.0
        } else {
            world_centre + rng.in_cube(world_half * 0.5)
        };
        let dir = (target - origin) * rng.range(0.1, 10.0);
        let mut settings = CastSettings::default();
        match i % 4 {
            1 => settings.t_min = rng.range(0.0, world_half),
            2 => settings.t_max = rng.range(0.0, 3.0 * world_half),
            3 => settings.t_min = -rng.range(0.0, world_half),
            _ => {}
        }
        let hit = bvh.cast_transformed(world_from_local, origin, dir, &settings);
        let unit_dir = dir.as_dvec3().normalize();
        let reference = reference_cast(&world_splats, origin.as_dvec3(), unit_dir, &settings);
        if reference.ambiguous {
            ambiguous += 1;
            continue;
        }
        compared += 1;
        match (hit, reference.hit) {
            (None, None) => {}
            (Some(hit), Some((splat, distance))) => {
                assert_eq!(hit.splat, splat, "ray {i}");
                let error = (hit.distance as f64 - distance).abs() / (1.0 + distance.abs());
                assert!(error < 1e-4, "ray {i}: {} vs {distance}", hit.distance);
                let on_ray = origin.as_dvec3() + unit_dir * distance;
                assert!(
                    (hit.position.as_dvec3() - on_ray).length() < 1e-3 * (1.0 + distance.abs())
                );
                worst_distance_error = worst_distance_error.max(error);
                hits += 1;
            }
            (fast, reference) => panic!("ray {i}: {fast:?} vs reference {reference:?}"),
        }
    }
    println!(
        "{compared} rays compared ({hits} hits), {ambiguous} ambiguous skipped, \
         worst relative distance error {worst_distance_error:.2e}"
    );
    assert!(ambiguous * 20 < ray_count, "{ambiguous} ambiguous rays");
    assert!(
        hits > compared / 5 && hits < compared * 9 / 10,
        "{hits} of {compared}"
    );
}
