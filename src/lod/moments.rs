//! A splat as moments (weight, mean, covariance, colour) and the moment-matched merge
//! of several into one: the arithmetic of a level-of-detail tree's interior nodes.
//!
//! A merged node keeps its children's opacity-weighted coverage: each child weighs
//! `w = opacity × area`, where `area = s₁s₂ + s₂s₃ + s₃s₁` follows the ellipsoid's mean
//! projected area (up to a constant), so a parent seen from afar covers what its
//! children covered. The mean and covariance are the weighted mixture's own (the
//! children's covariances plus the spread of their means), the colour (every SH
//! coefficient) the weighted mean, and the opacity `min(1, Σw / area(parent))`.

use bevy::math::{DMat3, DQuat, DVec3, Quat};

use crate::asset::decoded::SplatGeometry;

/// The least variance a merged node keeps along any axis (as a standard deviation,
/// 1e-7 of a unit): a flat cluster stays a valid, if thin, Gaussian.
const MIN_SCALE: f64 = 1e-7;

/// One splat, or a merge of several, as the tree's build sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Moments {
    /// Opacity × area: what the splat contributes to its parent.
    pub weight: f64,
    /// The centre.
    pub mean: DVec3,
    /// The covariance's principal axes (a rotation; [`Moments::covariance`] is
    /// `axes · diag(scale²) · axesᵀ`).
    pub axes: DMat3,
    /// The standard deviations along `axes`.
    pub scale: DVec3,
    /// Opacity in 0..=1.
    pub opacity: f64,
}

impl Moments {
    /// A trained splat's moments (activated: unit quaternion, linear scales, opacity
    /// in 0..1). A splat the renderer culls (a zero or non-finite quaternion, scale or
    /// position) weighs nothing.
    pub fn of_splat(splat: &SplatGeometry) -> Self {
        let [w, x, y, z] = splat.rotation.map(f64::from);
        let rotation = DQuat::from_xyzw(x, y, z, w);
        let length = rotation.length();
        let scale = DVec3::from(splat.log_scale.map(f64::from)).exp();
        let mean = DVec3::from(splat.position.map(f64::from));
        let opacity = 1.0 / (1.0 + (-f64::from(splat.opacity_logit)).exp());
        let valid = length > 0.0
            && length.is_finite()
            && scale.is_finite()
            && mean.is_finite()
            && opacity.is_finite();
        if !valid {
            let mean = if mean.is_finite() { mean } else { DVec3::ZERO };
            return Self::weightless(mean);
        }
        Self {
            weight: opacity * area(scale),
            mean,
            axes: DMat3::from_quat(rotation / length),
            scale,
            opacity,
        }
    }

    /// A splat that covers nothing, at `mean`.
    pub fn weightless(mean: DVec3) -> Self {
        Self {
            weight: 0.0,
            mean,
            axes: DMat3::IDENTITY,
            scale: DVec3::ZERO,
            opacity: 0.0,
        }
    }

    /// The moment-matched merge of `children` (their weights and this module's rules);
    /// `None` when none of them weighs anything.
    pub fn merge<'a>(children: impl IntoIterator<Item = &'a Moments> + Clone) -> Option<Self> {
        let weight: f64 = children.clone().into_iter().map(|c| c.weight).sum();
        if !(weight > 0.0 && weight.is_finite()) {
            return None;
        }
        let mean = children
            .clone()
            .into_iter()
            .fold(DVec3::ZERO, |sum, c| sum + c.mean * c.weight)
            / weight;
        let covariance = children.into_iter().fold(DMat3::ZERO, |sum, c| {
            let d = c.mean - mean;
            let spread = DMat3::from_cols(d * d.x, d * d.y, d * d.z);
            sum + (c.covariance() + spread) * c.weight
        }) * (1.0 / weight);
        let (axes, scale) = principal_axes(&covariance);
        Some(Self {
            weight,
            mean,
            axes,
            scale,
            opacity: (weight / area(scale)).min(1.0),
        })
    }

    /// The covariance, symmetric (kept as its principal axes and scales: half the
    /// bytes of both, for a tree's build that is bound by memory).
    pub fn covariance(&self) -> DMat3 {
        self.axes * DMat3::from_diagonal(self.scale * self.scale) * self.axes.transpose()
    }

    /// The node as a splat in the asset's layout (log-scales, an opacity logit, a
    /// w-first quaternion).
    pub fn to_splat(&self) -> SplatGeometry {
        let rotation = Quat::from_mat3(&self.axes.as_mat3()).normalize();
        let scale = self.drawn_scale();
        let opacity = self.opacity.clamp(1e-6, 1.0 - 1e-6);
        SplatGeometry {
            position: self.mean.as_vec3().to_array(),
            opacity_logit: (opacity / (1.0 - opacity)).ln() as f32,
            rotation: [rotation.w, rotation.x, rotation.y, rotation.z],
            log_scale: scale.max(DVec3::splat(MIN_SCALE)).ln().as_vec3().to_array(),
            _pad: 0.0,
        }
    }

    /// The radius of the sphere holding the splat's 3σ ellipsoid, for a node's size on
    /// screen.
    pub fn radius(&self) -> f64 {
        3.0 * self.drawn_scale().max_element()
    }

    /// The scales the node is drawn with. A merge whose children cover more than a
    /// Gaussian of opacity 1 can (`weight / area > 1`: many overlapping children, a
    /// surface tiled by them) would be drawn with opacity `c > 1` and `α = min(1,
    /// c·G)`, a widened profile; a splat's opacity stops at 1, so the node is widened
    /// instead, by `√(1 + ln c)`: the Gaussian with that integral (∫min(1, c·e^(−r²/2))
    /// = 2π(1 + ln c)). Without it a cut is visibly thinner and darker than the splats
    /// it stands for.
    pub fn drawn_scale(&self) -> DVec3 {
        let coverage = self.weight / area(self.scale);
        if coverage > 1.0 && coverage.is_finite() {
            self.scale * (1.0 + coverage.ln()).sqrt()
        } else {
            self.scale
        }
    }
}

/// The mean projected area of an ellipsoid with semi-axes `scale`, up to a constant.
fn area(scale: DVec3) -> f64 {
    scale.x * scale.y + scale.y * scale.z + scale.z * scale.x
}

/// A symmetric matrix's principal axes: a rotation (its columns the axes, determinant
/// +1) and the standard deviations along them (square roots of the eigenvalues,
/// negative ones taken as zero). Jacobi's method, exact to rounding for 3×3.
pub fn principal_axes(matrix: &DMat3) -> (DMat3, DVec3) {
    let mut a = matrix.to_cols_array_2d();
    let mut v = DMat3::IDENTITY.to_cols_array_2d();
    for _ in 0..32 {
        let off = a[0][1].abs() + a[0][2].abs() + a[1][2].abs();
        let scale = a[0][0].abs() + a[1][1].abs() + a[2][2].abs();
        // 1e-13 of the diagonal: far below the f32 the nodes are stored in.
        if off.is_nan() || off <= 1e-13 * scale.max(f64::MIN_POSITIVE) {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            // The rotation in the (p, q) plane that zeroes a[p][q].
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            // A ← Jᵀ A J: first the columns p and q, then the rows.
            for row in &mut a {
                let (akp, akq) = (row[p], row[q]);
                row[p] = c * akp - s * akq;
                row[q] = s * akp + c * akq;
            }
            let (row_p, row_q) = (a[p], a[q]);
            a[p] = std::array::from_fn(|k| c * row_p[k] - s * row_q[k]);
            a[q] = std::array::from_fn(|k| s * row_p[k] + c * row_q[k]);
            for row in &mut v {
                let (vp, vq) = (row[p], row[q]);
                row[p] = c * vp - s * vq;
                row[q] = s * vp + c * vq;
            }
        }
    }
    // `v` holds the eigenvectors as the columns of a row-major array; glam's
    // from_cols_array_2d reads it column-major, so transpose.
    let mut axes = DMat3::from_cols_array_2d(&v).transpose();
    if axes.determinant() < 0.0 {
        axes.z_axis = -axes.z_axis;
    }
    let variances = DVec3::new(a[0][0], a[1][1], a[2][2]);
    (axes, variances.max(DVec3::ZERO).map(f64::sqrt))
}
