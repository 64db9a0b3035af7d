use bevy::camera::primitives::Aabb;
use bevy::math::Vec3;

use super::decoded::SplatGeometry;

/// How many standard deviations of a splat the bounding box holds. A splat's visible
/// extent is at most 3.33σ (opacity 1, α ≥ 1/255), so 3.33 keeps frustum culling exact.
const SIGMAS: f32 = 3.33;

/// The box around every finite splat, each grown by its largest axis.
///
/// Non-finite splats are skipped: the renderer culls them, and one NaN would otherwise
/// turn the whole box into NaN and hide the cloud.
pub(crate) fn splat_bounds(geometry: &[SplatGeometry]) -> Option<Aabb> {
    let mut min = Vec3::splat(f32::INFINITY);
    let mut max = Vec3::splat(f32::NEG_INFINITY);
    for splat in geometry {
        let centre = Vec3::from_array(splat.position);
        let log_scale = splat.log_scale[0]
            .max(splat.log_scale[1])
            .max(splat.log_scale[2]);
        let radius = SIGMAS * log_scale.exp();
        if !centre.is_finite() || !radius.is_finite() {
            continue;
        }
        min = min.min(centre - radius);
        max = max.max(centre + radius);
    }
    (min.x <= max.x).then(|| Aabb::from_min_max(min, max))
}
