//! The median-depth surface rule: composite splats front to back and report
//! the first one at which the transmittance falls to the threshold.

use std::ops::ControlFlow;

use bevy::math::{Affine3A, Vec3};

use super::bvh::{SplatBvh, compositing_order};
use super::gaussian::{Contribution, Ray};

/// Smallest threshold used; smaller requests are raised to it. A threshold
/// of 0 could never be reached (each alpha is capped below 1).
pub const MIN_THRESHOLD: f32 = 1e-4;

/// Largest threshold used; larger requests are lowered to it. A threshold
/// of 1 would make the very first splat touched a hit, however faint.
pub const MAX_THRESHOLD: f32 = 0.9999;

/// Limits and threshold of one cast.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CastSettings {
    /// Splats whose peak lies before this distance are ignored. May be
    /// negative; must not be NaN.
    pub t_min: f32,
    /// Splats whose peak lies beyond this distance are ignored; may be
    /// infinite.
    pub t_max: f32,
    /// Transmittance at or below which the surface is reached; 0.5 gives the
    /// median depth. Clamped into [`MIN_THRESHOLD`, `MAX_THRESHOLD`]; NaN
    /// makes every cast return `None`.
    pub threshold: f32,
}

impl Default for CastSettings {
    fn default() -> Self {
        Self {
            t_min: 0.0,
            t_max: f32::INFINITY,
            threshold: 0.5,
        }
    }
}

impl CastSettings {
    /// The threshold a cast actually uses, or `None` when it is NaN.
    #[must_use]
    pub fn effective_threshold(&self) -> Option<f32> {
        (!self.threshold.is_nan()).then(|| self.threshold.clamp(MIN_THRESHOLD, MAX_THRESHOLD))
    }
}

/// The surface found by a cast.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// Index of the splat in the arrays the BVH was built from.
    pub splat: u32,
    /// Distance along the normalised ray direction to the splat's density
    /// peak on the ray.
    pub distance: f32,
    /// `origin + direction * distance`.
    pub position: Vec3,
    /// Transmittance just before compositing the hit splat (above the
    /// threshold by construction).
    pub transmittance_before: f32,
}

/// Running transmittance of one ray.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MedianDepth {
    transmittance: f32,
    threshold: f32,
}

impl MedianDepth {
    pub(crate) fn new(threshold: f32) -> Self {
        Self {
            transmittance: 1.0,
            threshold,
        }
    }

    /// Composites one more splat. Returns the transmittance before it if
    /// this splat brings the ray to the threshold.
    pub(crate) fn composite(&mut self, alpha: f32) -> Option<f32> {
        let before = self.transmittance;
        self.transmittance *= 1.0 - alpha;
        (self.transmittance <= self.threshold).then_some(before)
    }
}

fn hit_at(ray: &Ray, splat: u32, distance: f32, transmittance_before: f32) -> RayHit {
    RayHit {
        splat,
        distance,
        position: ray.point_at(distance),
        transmittance_before,
    }
}

impl SplatBvh {
    /// Casts a ray and returns the median-depth surface hit, if the ray's
    /// transmittance ever falls to the threshold.
    ///
    /// `ray_dir` need not be normalised. A non-finite origin, a zero or
    /// non-finite direction, a NaN bound, `t_min > t_max` or a NaN
    /// threshold give `None`.
    #[must_use]
    pub fn cast(&self, ray_origin: Vec3, ray_dir: Vec3, settings: &CastSettings) -> Option<RayHit> {
        let threshold = settings.effective_threshold()?;
        let ray = Ray::new(ray_origin, ray_dir, settings.t_min, settings.t_max)?;
        self.cast_ray(&ray, threshold)
    }

    /// [`SplatBvh::cast`] for an already validated ray; `threshold` is used
    /// as given.
    #[must_use]
    pub fn cast_ray(&self, ray: &Ray, threshold: f32) -> Option<RayHit> {
        let mut median = MedianDepth::new(threshold);
        let mut hit = None;
        self.visit_front_to_back(ray, |splat, contribution| {
            match median.composite(contribution.alpha) {
                Some(before) => {
                    hit = Some(hit_at(ray, splat, contribution.t, before));
                    ControlFlow::Break(())
                }
                None => ControlFlow::Continue(()),
            }
        });
        hit
    }

    /// The same answer as [`SplatBvh::cast`], computed without the tree:
    /// evaluate every splat, sort, composite. O(n log n) per ray; meant as
    /// the reference the tree traversal is tested against.
    #[must_use]
    pub fn cast_brute_force(
        &self,
        ray_origin: Vec3,
        ray_dir: Vec3,
        settings: &CastSettings,
    ) -> Option<RayHit> {
        let threshold = settings.effective_threshold()?;
        let ray = Ray::new(ray_origin, ray_dir, settings.t_min, settings.t_max)?;
        let mut contributions: Vec<(u32, Contribution)> = self
            .splats_with_sources()
            .filter_map(|(splat, source)| Some((source, splat.contribution(&ray)?)))
            .collect();
        contributions.sort_unstable_by(|(index_a, a), (index_b, b)| {
            compositing_order(a.t, *index_a, b.t, *index_b)
        });
        let mut median = MedianDepth::new(threshold);
        contributions.iter().find_map(|&(splat, contribution)| {
            median
                .composite(contribution.alpha)
                .map(|before| hit_at(&ray, splat, contribution.t, before))
        })
    }

    /// Casts a world-space ray against a cloud placed by `world_from_local`.
    ///
    /// `settings.t_min`/`t_max` and the returned distance are in world units
    /// along the normalised world direction; the position is in world space.
    /// Any invertible affine map works, non-uniform scale and shear
    /// included: an affine map carries the splat's Gaussian to the Gaussian
    /// with covariance `A Σ Aᵀ` and preserves Mahalanobis distances, so the
    /// peak point, its alpha and the front-to-back order are the same in
    /// both frames. Only distances change, by the factor `|A⁻¹ d|`: the
    /// world point `o + u d` is the local point `o' + u A⁻¹ d`. Dividing by
    /// that factor (rather than measuring `|hit - origin|`) keeps the sign
    /// when `t_min` is negative. A singular or non-finite transform gives
    /// `None`.
    #[must_use]
    pub fn cast_transformed(
        &self,
        world_from_local: Affine3A,
        world_origin: Vec3,
        world_dir: Vec3,
        settings: &CastSettings,
    ) -> Option<RayHit> {
        let threshold = settings.effective_threshold()?;
        // Validates and normalises the world ray (bounds, origin, direction).
        let world_ray = Ray::new(world_origin, world_dir, settings.t_min, settings.t_max)?;
        let (local_ray, stretch) = local_ray(world_from_local, &world_ray)?;
        let local_hit = self.cast_ray(&local_ray, threshold)?;
        let distance = local_hit.distance / stretch;
        Some(hit_at(
            &world_ray,
            local_hit.splat,
            distance,
            local_hit.transmittance_before,
        ))
    }
}

/// `world_ray` in the frame that `world_from_local` places, and the local distance
/// per unit of world distance along it; `None` for a singular or non-finite map.
pub(crate) fn local_ray(world_from_local: Affine3A, world_ray: &Ray) -> Option<(Ray, f32)> {
    let determinant = world_from_local.matrix3.determinant();
    if !world_from_local.is_finite() || !determinant.is_finite() || determinant == 0.0 {
        return None;
    }
    let local_from_world = world_from_local.inverse();
    if !local_from_world.is_finite() {
        return None;
    }
    let local_origin = local_from_world.transform_point3(world_ray.origin());
    let local_step = local_from_world.transform_vector3(world_ray.direction());
    let stretch = local_step.length();
    if !(stretch > 0.0 && stretch.is_finite()) {
        return None;
    }
    let local = Ray::new(
        local_origin,
        local_step,
        world_ray.t_min() * stretch,
        world_ray.t_max() * stretch,
    )?;
    Some((local, stretch))
}

#[cfg(test)]
mod tests {
    use bevy::math::Quat;

    use super::*;
    use crate::raycast::gaussian::isotropic;

    fn both_paths(
        bvh: &SplatBvh,
        origin: Vec3,
        dir: Vec3,
        settings: &CastSettings,
    ) -> Option<RayHit> {
        let fast = bvh.cast(origin, dir, settings);
        let reference = bvh.cast_brute_force(origin, dir, settings);
        assert_eq!(fast, reference);
        fast
    }

    #[test]
    fn single_splat_hit_at_its_centre() {
        let bvh = SplatBvh::from_shapes(&[isotropic(Vec3::new(0.0, 0.0, 5.0), 1.0, 0.9)]);
        let hit = both_paths(&bvh, Vec3::ZERO, Vec3::Z, &CastSettings::default()).expect("hit");
        assert_eq!(hit.splat, 0);
        assert!((hit.distance - 5.0).abs() < 1e-5, "{hit:?}");
        assert!(
            (hit.position - Vec3::new(0.0, 0.0, 5.0))
                .abs()
                .max_element()
                < 1e-5
        );
        assert_eq!(hit.transmittance_before, 1.0);

        // The alpha is exactly the opacity on a ray through the centre:
        // the transmittance after it is 0.1, so a threshold just above 0.1
        // is reached and one just below is not.
        let just_above = CastSettings {
            threshold: 0.1 + 1e-6,
            ..CastSettings::default()
        };
        let just_below = CastSettings {
            threshold: 0.1 - 1e-6,
            ..CastSettings::default()
        };
        assert!(both_paths(&bvh, Vec3::ZERO, Vec3::Z, &just_above).is_some());
        assert!(both_paths(&bvh, Vec3::ZERO, Vec3::Z, &just_below).is_none());

        // And directly from the per-splat evaluation.
        let splat = crate::raycast::gaussian::PreparedSplat::new(&isotropic(
            Vec3::new(0.0, 0.0, 5.0),
            1.0,
            0.9,
        ))
        .expect("valid splat");
        let ray = Ray::new(Vec3::ZERO, Vec3::Z, 0.0, f32::INFINITY).expect("valid ray");
        let contribution = splat.contribution(&ray).expect("contributes");
        assert!((contribution.alpha - 0.9).abs() < 1e-6);
        assert!((contribution.t - 5.0).abs() < 1e-5);
        assert_eq!(contribution.mahalanobis_sq, 0.0);

        // An unnormalised direction gives the same hit.
        let scaled = both_paths(&bvh, Vec3::ZERO, Vec3::Z * 7.5, &CastSettings::default());
        assert_eq!(scaled, Some(hit));
    }

    #[test]
    fn median_needs_enough_opacity() {
        let lone = SplatBvh::from_shapes(&[isotropic(Vec3::new(0.0, 0.0, 5.0), 1.0, 0.4)]);
        assert_eq!(
            both_paths(&lone, Vec3::ZERO, Vec3::Z, &CastSettings::default()),
            None
        );

        let pair = SplatBvh::from_shapes(&[
            isotropic(Vec3::new(0.0, 0.0, 9.0), 1.0, 0.4),
            isotropic(Vec3::new(0.0, 0.0, 5.0), 1.0, 0.4),
        ]);
        let hit = both_paths(&pair, Vec3::ZERO, Vec3::Z, &CastSettings::default()).expect("hit");
        // 0.6 · 0.6 = 0.36 <= 0.5 at the second splat along the ray, which
        // is input index 0.
        assert_eq!(hit.splat, 0);
        assert!((hit.distance - 9.0).abs() < 1e-5);
        assert!((hit.transmittance_before - 0.6).abs() < 1e-6);

        // From the other side the order flips.
        let back = both_paths(
            &pair,
            Vec3::new(0.0, 0.0, 20.0),
            -Vec3::Z,
            &CastSettings::default(),
        )
        .expect("hit");
        assert_eq!(back.splat, 1);
        assert!((back.distance - 15.0).abs() < 1e-5);
    }

    #[test]
    fn near_and_far_bounds() {
        let pair = SplatBvh::from_shapes(&[
            isotropic(Vec3::new(0.0, 0.0, 5.0), 0.5, 0.9),
            isotropic(Vec3::new(0.0, 0.0, 9.0), 0.5, 0.9),
        ]);
        let skip_first = CastSettings {
            t_min: 6.0,
            ..CastSettings::default()
        };
        let hit = both_paths(&pair, Vec3::ZERO, Vec3::Z, &skip_first).expect("hit");
        assert_eq!(hit.splat, 1);
        let stop_short = CastSettings {
            t_max: 4.0,
            ..CastSettings::default()
        };
        assert_eq!(both_paths(&pair, Vec3::ZERO, Vec3::Z, &stop_short), None);
        // Peak exactly at t_min still counts.
        let at_peak = CastSettings {
            t_min: 5.0,
            ..CastSettings::default()
        };
        assert_eq!(
            both_paths(&pair, Vec3::ZERO, Vec3::Z, &at_peak).map(|h| h.splat),
            Some(0)
        );
        // Negative t_min sees splats behind the origin.
        let behind = CastSettings {
            t_min: -100.0,
            ..CastSettings::default()
        };
        let hit = both_paths(&pair, Vec3::new(0.0, 0.0, 20.0), Vec3::Z, &behind).expect("hit");
        assert_eq!(hit.splat, 0);
        assert!((hit.distance + 15.0).abs() < 1e-5);
    }

    #[test]
    fn threshold_is_clamped_and_nan_rejected() {
        let bvh = SplatBvh::from_shapes(&[isotropic(Vec3::new(0.0, 0.0, 5.0), 1.0, 0.5)]);
        let with = |threshold| CastSettings {
            threshold,
            ..CastSettings::default()
        };
        assert_eq!(with(0.0).effective_threshold(), Some(MIN_THRESHOLD));
        assert_eq!(with(2.0).effective_threshold(), Some(MAX_THRESHOLD));
        assert_eq!(
            with(f32::NEG_INFINITY).effective_threshold(),
            Some(MIN_THRESHOLD)
        );
        assert_eq!(with(f32::NAN).effective_threshold(), None);
        assert!(both_paths(&bvh, Vec3::ZERO, Vec3::Z, &with(2.0)).is_some());
        assert!(both_paths(&bvh, Vec3::ZERO, Vec3::Z, &with(-1.0)).is_none());
        assert!(both_paths(&bvh, Vec3::ZERO, Vec3::Z, &with(f32::NAN)).is_none());
    }

    #[test]
    fn transformed_cast_scales_distances() {
        let bvh = SplatBvh::from_shapes(&[isotropic(Vec3::new(0.0, 0.0, 5.0), 1.0, 0.9)]);
        // Local z is stretched by 3 and the cloud moved by +2 in z.
        let world_from_local = Affine3A::from_scale_rotation_translation(
            Vec3::new(1.0, 1.0, 3.0),
            Quat::IDENTITY,
            Vec3::new(0.0, 0.0, 2.0),
        );
        let settings = CastSettings::default();
        let hit = bvh
            .cast_transformed(world_from_local, Vec3::ZERO, Vec3::Z, &settings)
            .expect("hit");
        assert!((hit.distance - 17.0).abs() < 1e-4, "{hit:?}");
        assert!(
            (hit.position - Vec3::new(0.0, 0.0, 17.0))
                .abs()
                .max_element()
                < 1e-4
        );
        // A world t_max short of the splat (but past its local distance).
        let short = CastSettings {
            t_max: 16.0,
            ..settings
        };
        assert_eq!(
            bvh.cast_transformed(world_from_local, Vec3::ZERO, Vec3::Z, &short),
            None
        );
        let singular = Affine3A::from_scale(Vec3::new(1.0, 0.0, 1.0));
        assert_eq!(
            bvh.cast_transformed(singular, Vec3::ZERO, Vec3::Z, &settings),
            None
        );
        let non_finite = Affine3A::from_translation(Vec3::new(f32::NAN, 0.0, 0.0));
        assert_eq!(
            bvh.cast_transformed(non_finite, Vec3::ZERO, Vec3::Z, &settings),
            None
        );
    }
}
