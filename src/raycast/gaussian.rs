//! One splat against one ray: where along the ray the Gaussian peaks, how
//! much opacity it contributes there, and the 3σ box that bounds it.
//!
//! Everything here is deterministic on purpose: the BVH traversal and the
//! brute-force reference call exactly the same functions on exactly the same
//! stored data, which is what lets them agree bit for bit.

use bevy::math::{Mat3, Quat, Vec3, Vec4};

/// Contributions below one 8-bit step cannot change an 8-bit image, and
/// rasterisers drop them too; splats whose opacity is below it are not
/// indexed at all.
pub const MIN_ALPHA: f32 = 1.0 / 255.0;

/// Rasterisers cap a single splat's alpha below 1 so that no single splat can
/// make the ray fully opaque; the ray cast follows the same convention.
pub const MAX_ALPHA: f32 = 0.999;

/// Gaussians are truncated at this many standard deviations. The bounding
/// boxes use the same cut, so a splat that counts can always be found
/// through its box.
pub const CUTOFF_SIGMAS: f32 = 3.0;

/// [`CUTOFF_SIGMAS`] squared: the largest squared Mahalanobis distance at
/// which a splat still counts.
pub const CUTOFF_MAHALANOBIS_SQ: f32 = CUTOFF_SIGMAS * CUTOFF_SIGMAS;

/// Thinnest axis allowed, relative to the splat's largest axis. Thinner axes
/// are thickened to this. The peak search squares ratios of scales, and
/// beyond about 1e19 those squares leave the `f32` range; at 1e12 the flat
/// axis is already five orders of magnitude below `f32` position resolution,
/// so the thickening cannot be seen in any result.
pub const MIN_AXIS_RATIO: f32 = 1e-12;

/// One Gaussian as it comes from a splat file, in the cloud's local frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplatShape {
    /// The centre (the mean).
    pub centre: Vec3,
    /// Linear standard deviations along the splat's own axes (already
    /// exponentiated).
    pub scale: Vec3,
    /// Orientation of the splat's axes; need not be exactly unit length.
    pub rotation: Quat,
    /// Peak opacity in [0, 1] (already passed through the sigmoid).
    pub opacity: f32,
}

/// Axis-aligned box, `min <= max` on every axis for any box that holds
/// something.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// The least corner.
    pub min: Vec3,
    /// The greatest corner.
    pub max: Vec3,
}

impl Aabb {
    /// The identity of [`Aabb::union`]: holds nothing.
    pub const EMPTY: Self = Self {
        min: Vec3::INFINITY,
        max: Vec3::NEG_INFINITY,
    };

    /// The smallest box holding both.
    #[must_use]
    pub fn union(self, other: Self) -> Self {
        Self {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The box's centre.
    #[must_use]
    pub fn centroid(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Half the surface area: the surface-area heuristic only compares
    /// ratios, so the factor of two is never needed.
    #[must_use]
    pub fn half_area(&self) -> f32 {
        let size = self.max - self.min;
        if size.min_element() < 0.0 {
            return 0.0;
        }
        size.x * size.y + size.y * size.z + size.z * size.x
    }
}

/// A validated ray: finite origin, unit direction, `t_min <= t_max`.
///
/// Distances along it are in units of the (unit) direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    origin: Vec3,
    direction: Vec3,
    /// Per-axis reciprocal of the direction; infinite on axes the ray runs
    /// parallel to, which [`Ray::span`] treats separately.
    inv_direction: Vec3,
    t_min: f32,
    t_max: f32,
}

impl Ray {
    /// Returns `None` for a non-finite origin, a zero or non-finite
    /// direction, a NaN bound or `t_min > t_max`. The direction is
    /// normalised; infinite bounds are allowed.
    #[must_use]
    pub fn new(origin: Vec3, direction: Vec3, t_min: f32, t_max: f32) -> Option<Self> {
        if !origin.is_finite() || t_min.is_nan() || t_max.is_nan() || t_min > t_max {
            return None;
        }
        let direction = normalize_direction(direction)?;
        Some(Self {
            origin,
            direction,
            inv_direction: direction.recip(),
            t_min,
            t_max,
        })
    }

    /// Where the ray starts (at `t = 0`).
    #[must_use]
    pub fn origin(&self) -> Vec3 {
        self.origin
    }

    /// The unit direction.
    #[must_use]
    pub fn direction(&self) -> Vec3 {
        self.direction
    }

    /// The nearest distance the ray hits at.
    #[must_use]
    pub fn t_min(&self) -> f32 {
        self.t_min
    }

    /// The farthest distance the ray hits at.
    #[must_use]
    pub fn t_max(&self) -> f32 {
        self.t_max
    }

    /// The point at distance `t`.
    #[must_use]
    pub fn point_at(&self, t: f32) -> Vec3 {
        self.origin + self.direction * t
    }

    /// The part of `[t_min, t_max]` inside `aabb` (boundary included), as
    /// `(entry, exit)`.
    ///
    /// The result is monotone in the box: for `inner` contained in `outer`
    /// (component-wise, as floats) the entry into `outer` is never later than
    /// the entry into `inner`, and `outer` is hit whenever `inner` is. Each
    /// axis always takes its entry from the same face (chosen by the sign of
    /// the direction) and float rounding is monotone, so this holds exactly,
    /// not just up to rounding. The traversal's ordering guarantee rests on
    /// it.
    #[must_use]
    pub fn span(&self, aabb: &Aabb) -> Option<(f32, f32)> {
        let mut entry = self.t_min;
        let mut exit = self.t_max;
        for axis in 0..3 {
            let origin = self.origin[axis];
            let inv = self.inv_direction[axis];
            let (lo, hi) = (aabb.min[axis], aabb.max[axis]);
            if inv.is_finite() {
                let (entry_face, exit_face) = if inv >= 0.0 { (lo, hi) } else { (hi, lo) };
                // `face - origin` is never NaN (both are finite; it may
                // overflow to ±inf) and `inv` is finite and non-zero, so the
                // products are never NaN and `max`/`min` stay monotone.
                entry = entry.max((entry_face - origin) * inv);
                exit = exit.min((exit_face - origin) * inv);
            } else if origin < lo || origin > hi {
                // Parallel to this slab and outside it: never enters.
                return None;
            }
        }
        (entry <= exit).then_some((entry, exit))
    }
}

/// Normalises without overflowing for huge components or underflowing for
/// tiny ones: glam's `normalize` squares the components first.
fn normalize_direction(direction: Vec3) -> Option<Vec3> {
    if !direction.is_finite() {
        return None;
    }
    let largest = direction.abs().max_element();
    if largest == 0.0 {
        return None;
    }
    let scaled = direction / largest;
    let unit = scaled / scaled.length();
    unit.is_finite().then_some(unit)
}

/// Where a splat's density peaks along a ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayPeak {
    /// Distance along the ray (unit direction) of the density maximum.
    pub t: f32,
    /// Squared Mahalanobis distance from the splat centre at that point.
    pub mahalanobis_sq: f32,
}

/// What one splat adds to one ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contribution {
    /// Depth used for ordering and for the reported hit: the peak distance,
    /// kept inside the splat's own box span (see
    /// [`PreparedSplat::contribution`]).
    pub t: f32,
    /// The splat's opacity at its peak along the ray, at most [`MAX_ALPHA`].
    pub alpha: f32,
    /// Squared Mahalanobis distance from the splat centre at the peak.
    pub mahalanobis_sq: f32,
}

/// A splat reduced to what a ray cast needs, computed once at build time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PreparedSplat {
    centre: Vec3,
    /// Half-size of the 3σ box on each world axis.
    half_extent: Vec3,
    /// `diag(s_min / s) · Rᵀ`. The true whitening transform
    /// `diag(1 / s) · Rᵀ` is this times `whitening_gain`. Factoring the gain
    /// out keeps every entry within [-1, 1] and (with [`MIN_AXIS_RATIO`])
    /// above 1e-12 on the diagonal, so the peak search cannot overflow or
    /// underflow even for splats far smaller than 1e-19, where `1 / s²`
    /// would overflow.
    unit_whitening: Mat3,
    /// `1 / s_min`.
    whitening_gain: f32,
    opacity: f32,
}

impl PreparedSplat {
    /// Returns `None` for splats that can never contribute or that the maths
    /// cannot represent: any non-finite field, a scale component that is not
    /// positive (or so small that its reciprocal overflows), a rotation of
    /// (near) zero length, opacity below [`MIN_ALPHA`], or a 3σ box that
    /// overflows `f32`. Opacity above 1 is clamped to 1; axes thinner than
    /// [`MIN_AXIS_RATIO`] times the largest are thickened to it.
    #[must_use]
    pub fn new(shape: &SplatShape) -> Option<Self> {
        let SplatShape {
            centre,
            scale,
            rotation,
            opacity,
        } = *shape;
        if !(centre.is_finite() && scale.is_finite() && rotation.is_finite() && opacity.is_finite())
        {
            return None;
        }
        // Everything is finite from here on, so plain comparisons suffice.
        if opacity < MIN_ALPHA || scale.min_element() <= 0.0 {
            return None;
        }
        let rotation_length = rotation.length();
        if rotation_length <= 1e-6 {
            return None;
        }
        let rotation = Quat::from_vec4(Vec4::from(rotation) / rotation_length);
        let axes = Mat3::from_quat(rotation);

        let scale = scale.max(Vec3::splat(scale.max_element() * MIN_AXIS_RATIO));
        let smallest_scale = scale.min_element();
        let whitening_gain = smallest_scale.recip();
        if !whitening_gain.is_finite() {
            return None;
        }
        let unit_whitening =
            Mat3::from_diagonal(Vec3::splat(smallest_scale) / scale) * axes.transpose();

        let half_extent = three_sigma_half_extent(axes, scale);
        let bounds = Aabb {
            min: centre - half_extent,
            max: centre + half_extent,
        };
        if !(bounds.min.is_finite() && bounds.max.is_finite()) {
            return None;
        }
        Some(Self {
            centre,
            half_extent,
            unit_whitening,
            whitening_gain,
            opacity: opacity.min(1.0),
        })
    }

    /// The splat's centre.
    #[must_use]
    pub fn centre(&self) -> Vec3 {
        self.centre
    }

    /// The splat's peak opacity, at most 1.
    #[must_use]
    pub fn opacity(&self) -> f32 {
        self.opacity
    }

    /// The exact box of the 3σ ellipsoid. Always computed the same way, so
    /// the BVH nodes (unions of these) contain it exactly as floats.
    #[must_use]
    pub fn bounds(&self) -> Aabb {
        Aabb {
            min: self.centre - self.half_extent,
            max: self.centre + self.half_extent,
        }
    }

    /// The density maximum along the whole line `origin + t · unit_direction`
    /// (no near/far bounds, no cut-off). `None` when the maximum is not
    /// defined: the line runs exactly along a direction in which the splat
    /// is numerically flat, or the result overflows. The returned `t` is
    /// finite and `mahalanobis_sq` is never NaN (it may be +inf).
    #[must_use]
    pub fn peak_along_ray(&self, origin: Vec3, unit_direction: Vec3) -> Option<RayPeak> {
        // In the splat's whitened frame the density is exp(-|x|²/2), so the
        // peak is the foot of the perpendicular from the centre. The common
        // gain cancels in t and is applied only to the residual.
        let offset = self.unit_whitening * (origin - self.centre);
        let step = self.unit_whitening * unit_direction;
        let step_sq = step.dot(step);
        // Cannot be NaN (all factors are finite and at most 1); zero means
        // the line runs exactly along a numerically flat axis.
        if step_sq <= 0.0 {
            return None;
        }
        let t = -offset.dot(step) / step_sq;
        if !t.is_finite() {
            return None;
        }
        let residual = (offset + step * t) * self.whitening_gain;
        // May overflow to +inf far from the splat (then it is simply beyond
        // the cut); NaN is ruled out here so callers can compare plainly.
        let mahalanobis_sq = residual.dot(residual);
        if mahalanobis_sq.is_nan() {
            return None;
        }
        // `+ 0.0` turns -0.0 into +0.0 so that ordering by `total_cmp` and by
        // `<` agree on every depth.
        Some(RayPeak {
            t: t + 0.0,
            mahalanobis_sq,
        })
    }

    /// The splat's contribution to `ray` under the compositing rules: peak
    /// inside `[t_min, t_max]`, within the 3σ cut, alpha at least
    /// [`MIN_ALPHA`] and capped at [`MAX_ALPHA`].
    ///
    /// The returned depth is the peak distance clamped into the ray's span
    /// through this splat's own box. In exact arithmetic the peak of a
    /// counted splat always lies in that span (the peak point is inside the
    /// 3σ ellipsoid); in `f32` a very anisotropic splat seen at a grazing
    /// angle can put it a little outside. Clamping restores the invariant
    /// "depth ≥ entry into every box holding the splat" exactly, which the
    /// front-to-back traversal relies on; the shift is at rounding level.
    #[must_use]
    pub fn contribution(&self, ray: &Ray) -> Option<Contribution> {
        let (entry, exit) = ray.span(&self.bounds())?;
        let peak = self.peak_along_ray(ray.origin, ray.direction)?;
        // The peak's t is finite and m² is finite or +inf (never NaN), so
        // plain comparisons reject everything outside.
        if peak.t < ray.t_min || peak.t > ray.t_max {
            return None;
        }
        if peak.mahalanobis_sq > CUTOFF_MAHALANOBIS_SQ {
            return None;
        }
        let alpha = (self.opacity * (-0.5 * peak.mahalanobis_sq).exp()).min(MAX_ALPHA);
        if alpha < MIN_ALPHA {
            return None;
        }
        Some(Contribution {
            // `+ 0.0` again: a zero `entry` may carry the sign of `t_min`.
            t: peak.t.max(entry).min(exit) + 0.0,
            alpha,
            mahalanobis_sq: peak.mahalanobis_sq,
        })
    }
}

/// Half-size on each world axis of the box around the 3σ ellipsoid with
/// axes `axes` (columns) and standard deviations `scale`: the support of the
/// ellipsoid along world axis i is 3·sqrt(Σ_j (R_ij s_j)²).
#[must_use]
pub fn three_sigma_half_extent(axes: Mat3, scale: Vec3) -> Vec3 {
    let x = axes.x_axis * scale.x;
    let y = axes.y_axis * scale.y;
    let z = axes.z_axis * scale.z;
    (x * x + y * y + z * z).sqrt() * CUTOFF_SIGMAS
}

/// A round splat, for the unit tests here and in the other ray-cast modules.
#[cfg(test)]
pub(crate) fn isotropic(centre: Vec3, sigma: f32, opacity: f32) -> SplatShape {
    SplatShape {
        centre,
        scale: Vec3::splat(sigma),
        rotation: Quat::IDENTITY,
        opacity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_unusable_splats() {
        let good = isotropic(Vec3::ZERO, 1.0, 0.5);
        assert!(PreparedSplat::new(&good).is_some());
        let variants = [
            SplatShape {
                centre: Vec3::new(f32::NAN, 0.0, 0.0),
                ..good
            },
            SplatShape {
                scale: Vec3::new(1.0, 0.0, 1.0),
                ..good
            },
            SplatShape {
                scale: Vec3::new(1.0, -1.0, 1.0),
                ..good
            },
            SplatShape {
                scale: Vec3::new(1.0, f32::INFINITY, 1.0),
                ..good
            },
            SplatShape {
                scale: Vec3::splat(1e-40),
                ..good
            },
            SplatShape {
                scale: Vec3::splat(1e30),
                ..good
            },
            SplatShape {
                rotation: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
                ..good
            },
            SplatShape {
                rotation: Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
                ..good
            },
            SplatShape {
                opacity: 0.5 / 255.0,
                ..good
            },
            SplatShape {
                opacity: f32::NAN,
                ..good
            },
            SplatShape {
                opacity: f32::INFINITY,
                ..good
            },
        ];
        for (i, shape) in variants.iter().enumerate() {
            assert!(PreparedSplat::new(shape).is_none(), "variant {i} accepted");
        }
        // A single subnormal axis is merely extremely flat: thickened, kept.
        let flat = SplatShape {
            scale: Vec3::new(1.0, 1e-45, 1.0),
            ..good
        };
        let splat = PreparedSplat::new(&flat).expect("flat splat is kept");
        assert!(splat.bounds().max.y > 0.0);
    }

    #[test]
    fn box_matches_rotated_extent() {
        // A needle of length σ=2 along x, rotated 90° about z, lies along y.
        let rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
        let half = three_sigma_half_extent(Mat3::from_quat(rotation), Vec3::new(2.0, 0.1, 0.5));
        assert!(
            (half - Vec3::new(0.3, 6.0, 1.5)).abs().max_element() < 1e-5,
            "{half}"
        );
        // 45° about z mixes x and y equally.
        let rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
        let half = three_sigma_half_extent(Mat3::from_quat(rotation), Vec3::new(2.0, 1.0, 1.0));
        let expected_xy = 3.0 * (0.5f32 * 4.0 + 0.5).sqrt();
        assert!(
            (half - Vec3::new(expected_xy, expected_xy, 3.0))
                .abs()
                .max_element()
                < 1e-5
        );
    }

    #[test]
    fn isotropic_peak_is_the_closest_point() {
        let splat = PreparedSplat::new(&isotropic(Vec3::new(1.0, 2.0, 5.0), 0.5, 1.0))
            .expect("valid splat");
        let peak = splat
            .peak_along_ray(Vec3::ZERO, Vec3::Z)
            .expect("peak exists");
        assert!((peak.t - 5.0).abs() < 1e-6);
        // Squared distance 1² + 2² = 5, in units of σ² = 0.25.
        assert!((peak.mahalanobis_sq - 20.0).abs() < 1e-4);
    }

    #[test]
    fn tiny_and_flat_splats_stay_finite() {
        for sigma in [1e-7, 1e-20, 1e-37] {
            let shape = SplatShape {
                scale: Vec3::new(1.0, sigma, 1.0),
                ..isotropic(Vec3::new(0.0, 0.0, 3.0), 1.0, 0.9)
            };
            let splat = PreparedSplat::new(&shape).expect("valid splat");
            // Straight through the centre, across the flat axis and along it.
            for direction in [Vec3::Z, Vec3::new(0.0, 1.0, 1.0), Vec3::Y] {
                let origin = Vec3::new(0.0, 0.0, 3.0) - direction.normalize() * 3.0;
                let ray = Ray::new(origin, direction, 0.0, f32::INFINITY).expect("valid ray");
                if let Some(peak) = splat.peak_along_ray(ray.origin(), ray.direction()) {
                    assert!(peak.t.is_finite() && !peak.mahalanobis_sq.is_nan());
                }
                if let Some(c) = splat.contribution(&ray) {
                    assert!(c.t.is_finite() && c.alpha.is_finite());
                    assert!(
                        (c.t - 3.0).abs() < 1e-4,
                        "sigma {sigma} dir {direction}: {c:?}"
                    );
                }
            }
            // Through the centre the splat must be seen whatever its flatness.
            let ray = Ray::new(Vec3::ZERO, Vec3::Z, 0.0, f32::INFINITY).expect("valid ray");
            let c = splat.contribution(&ray).expect("ray through the centre");
            assert!((c.alpha - 0.9).abs() < 1e-6);
        }
    }

    #[test]
    fn span_handles_parallel_rays() {
        let aabb = Aabb {
            min: Vec3::ZERO,
            max: Vec3::ONE,
        };
        // Parallel to x, lying exactly in the y = 0 face: touches the box.
        let ray =
            Ray::new(Vec3::new(-1.0, 0.0, 0.5), Vec3::X, 0.0, f32::INFINITY).expect("valid ray");
        assert_eq!(ray.span(&aabb), Some((1.0, 2.0)));
        let ray =
            Ray::new(Vec3::new(-1.0, -1e-6, 0.5), Vec3::X, 0.0, f32::INFINITY).expect("valid ray");
        assert_eq!(ray.span(&aabb), None);
        // Starting inside: entry is clamped to t_min.
        let ray = Ray::new(Vec3::splat(0.5), -Vec3::Z, 0.0, f32::INFINITY).expect("valid ray");
        assert_eq!(ray.span(&aabb), Some((0.0, 0.5)));
    }

    #[test]
    fn ray_rejects_bad_input() {
        assert!(Ray::new(Vec3::ZERO, Vec3::ZERO, 0.0, 1.0).is_none());
        assert!(Ray::new(Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 1.0), 0.0, 1.0).is_none());
        assert!(Ray::new(Vec3::ZERO, Vec3::new(f32::INFINITY, 0.0, 1.0), 0.0, 1.0).is_none());
        assert!(Ray::new(Vec3::NAN, Vec3::Z, 0.0, 1.0).is_none());
        assert!(Ray::new(Vec3::ZERO, Vec3::Z, 2.0, 1.0).is_none());
        assert!(Ray::new(Vec3::ZERO, Vec3::Z, f32::NAN, 1.0).is_none());
        // Huge and tiny directions normalise fine.
        let ray = Ray::new(Vec3::ZERO, Vec3::new(3e38, 3e38, 0.0), 0.0, 1.0).expect("valid ray");
        assert!((ray.direction().length() - 1.0).abs() < 1e-6);
        let ray = Ray::new(Vec3::ZERO, Vec3::new(0.0, 1e-44, 0.0), 0.0, 1.0).expect("valid ray");
        assert_eq!(ray.direction(), Vec3::Y);
    }
}
