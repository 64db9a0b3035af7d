//! Ray casts from gameplay code against every cloud in the world.

use std::ops::ControlFlow;

use bevy::asset::Assets;
use bevy::camera::visibility::InheritedVisibility;
use bevy::ecs::entity::Entity;
use bevy::ecs::system::{Query, Res, SystemParam};
use bevy::math::{Ray3d, Vec3};
use bevy::transform::components::GlobalTransform;

use super::bvh_cache::{SplatBvhs, shape_of};
use super::cast::{MedianDepth, local_ray};
use super::gaussian::{MAX_ALPHA, MIN_ALPHA, Ray};
use crate::asset::GaussianSplats;
use crate::cloud::GaussianCloud;
use crate::crop::SplatCrop;
use crate::tint::SplatTint;

/// How [`SplatRaycast::cast`] looks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplatRaycastSettings {
    /// Hits farther than this along the ray (world units) are ignored.
    pub max_distance: f32,
    /// The transmittance at which the ray has met the surface: 0.5, the median depth,
    /// is the plugin's one definition of a cloud's surface.
    pub threshold: f32,
    /// Cast against clouds that are hidden too (by default only those whose
    /// `InheritedVisibility` is visible count).
    pub include_hidden: bool,
}

impl Default for SplatRaycastSettings {
    fn default() -> Self {
        Self {
            max_distance: f32::INFINITY,
            threshold: 0.5,
            include_hidden: false,
        }
    }
}

/// Where a ray met the splats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplatRayHit {
    /// The cloud whose splat brought the ray's transmittance to the threshold.
    pub entity: Entity,
    /// That splat's index in its asset.
    pub splat_index: u32,
    /// World position of the hit: the splat's peak along the ray.
    pub position: Vec3,
    /// World distance from the ray's origin.
    pub distance: f32,
}

/// Casts rays against the clouds, as their splats are seen: the median-depth surface
/// (see the module docs), with every cloud's transform and visibility, several clouds
/// composited together along the ray. Needs [`SplatRaycastPlugin`](super::SplatRaycastPlugin);
/// a cloud whose BVH is still being built is not hit yet.
///
/// A cloud's [`SplatCrop`] and [`SplatTint`] apply as they do to drawing: cropped
/// splats are passed through, opacities are scaled (a tint of opacity 0 is never hit).
#[derive(SystemParam)]
pub struct SplatRaycast<'w, 's> {
    bvhs: Res<'w, SplatBvhs>,
    assets: Res<'w, Assets<GaussianSplats>>,
    clouds: Query<
        'w,
        's,
        (
            Entity,
            &'static GaussianCloud,
            &'static GlobalTransform,
            Option<&'static InheritedVisibility>,
            Option<&'static SplatTint>,
            Option<&'static SplatCrop>,
        ),
    >,
}

/// One splat's share along a world ray.
struct Step {
    distance: f32,
    alpha: f32,
    entity: Entity,
    splat: u32,
}

impl SplatRaycast<'_, '_> {
    /// The nearest surface point along `ray`, if its transmittance ever falls to the
    /// threshold within `max_distance`. A ray with a non-finite origin gives `None`.
    pub fn cast(&self, ray: Ray3d, settings: &SplatRaycastSettings) -> Option<SplatRayHit> {
        let threshold = settings.threshold;
        if !(threshold > 0.0 && threshold < 1.0) || settings.max_distance.is_nan() {
            return None;
        }
        let world_ray = Ray::new(ray.origin, *ray.direction, 0.0, settings.max_distance)?;
        // Each cloud alone up to its own hit: the joint hit can come no later than
        // the nearest of those, so every step before it is in these lists.
        let mut steps = Vec::new();
        for (entity, cloud, transform, visibility, tint, crop) in &self.clouds {
            let hidden = visibility.is_some_and(|v| !v.get());
            if hidden && !settings.include_hidden {
                continue;
            }
            let (Some(bvh), Some(splats)) =
                (self.bvhs.get(cloud.0.id()), self.assets.get(&cloud.0))
            else {
                continue;
            };
            let fade = tint.map_or(1.0, |t| t.sanitized()[3]);
            if fade < MIN_ALPHA {
                continue;
            }
            let Some((local, stretch)) = local_ray(transform.affine(), &world_ray) else {
                continue;
            };
            let geometry = splats.geometry();
            let mut alone = MedianDepth::new(threshold);
            bvh.visit_front_to_back(&local, |splat, contribution| {
                let Some(splat_data) = geometry.get(splat as usize) else {
                    return ControlFlow::Continue(());
                };
                if crop.is_some_and(|c| !c.keeps(Vec3::from(splat_data.position))) {
                    return ControlFlow::Continue(());
                }
                let alpha = if fade < 1.0 {
                    // As the preprocess does it: the opacity scaled, then the cap.
                    let opacity = shape_of(splat_data).opacity * fade;
                    (opacity * (-0.5 * contribution.mahalanobis_sq).exp()).min(MAX_ALPHA)
                } else {
                    contribution.alpha
                };
                if alpha < MIN_ALPHA {
                    return ControlFlow::Continue(());
                }
                steps.push(Step {
                    distance: contribution.t / stretch,
                    alpha,
                    entity,
                    splat,
                });
                match alone.composite(alpha) {
                    Some(_) => ControlFlow::Break(()),
                    None => ControlFlow::Continue(()),
                }
            });
        }
        steps.sort_by(|a, b| {
            a.distance
                .total_cmp(&b.distance)
                .then(a.entity.cmp(&b.entity))
                .then(a.splat.cmp(&b.splat))
        });
        let mut joint = MedianDepth::new(threshold);
        steps.iter().find_map(|step| {
            joint.composite(step.alpha).map(|_| SplatRayHit {
                entity: step.entity,
                splat_index: step.splat,
                position: world_ray.point_at(step.distance),
                distance: step.distance,
            })
        })
    }
}
