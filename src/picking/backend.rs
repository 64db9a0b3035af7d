//! The picking backend: each frame it asks the GPU about every pointer over a camera
//! (a `SplatPickRequest` on the camera) and turns the latest answer into
//! `PointerHits`.

use std::collections::{HashMap, VecDeque};

use bevy::asset::Assets;
use bevy::camera::Camera;
use bevy::ecs::prelude::*;
use bevy::math::{Affine3A, Ray3d, UVec2, Vec2, Vec3};
use bevy::picking::Pickable;
use bevy::picking::backend::ray::{RayId, RayMap};
use bevy::picking::backend::{HitData, PointerHits};
use bevy::picking::pointer::PointerId;
use bevy::transform::components::GlobalTransform;

use super::hit::SplatHit;
use super::settings::{SplatPickingCamera, SplatPickingSettings};
use crate::asset::{GaussianSplats, SplatGeometry};
use crate::cloud::GaussianCloud;
use crate::raycast::bvh_cache::shape_of;
use crate::raycast::cast::local_ray;
use crate::raycast::{PreparedSplat, Ray};
use crate::render::{MAX_PICKS, SplatPick, SplatPickAnswer, SplatPickAnswers, SplatPickRequest};

/// Requests kept per camera while their answers are on the way (answers come back a
/// frame or two late; older ones are dropped).
const REQUESTS_KEPT: usize = 8;

/// One request as sent: which pointer each pixel belongs to, and its ray then.
struct SentRequest {
    id: u64,
    pointers: Vec<(PointerId, Ray3d)>,
}

/// A camera's requests in flight and the hits of its latest answer.
#[derive(Default)]
struct CameraPicks {
    sent: VecDeque<SentRequest>,
    latest: Vec<(PointerId, SplatHit)>,
}

#[derive(Resource, Default)]
pub(super) struct PickLedger {
    next_id: u64,
    cameras: HashMap<Entity, CameraPicks>,
}

/// The physical pixel of `camera`'s viewport that `ray` (one of the `RayMap`'s) goes
/// through: found from the ray itself, so rays that other code adds to the map (a
/// render-to-texture indirection) pick too.
fn viewport_pixel(camera: &Camera, transform: &GlobalTransform, ray: Ray3d) -> Option<UVec2> {
    // A point in front of the ray's origin (on the near plane for a perspective camera).
    let ahead = ray.get_point(1.0);
    let position = camera.world_to_viewport(transform, ahead).ok()?;
    let rect = camera.logical_viewport_rect()?;
    let scale = camera.target_scaling_factor().unwrap_or(1.0);
    let pixel = ((position - rect.min) * scale).floor();
    let size = camera.physical_viewport_size()?;
    (pixel.cmpge(Vec2::ZERO).all() && pixel.x < size.x as f32 && pixel.y < size.y as f32)
        .then(|| pixel.as_uvec2())
}

/// The point on `ray` at camera-space depth `view_depth` (distance along the camera's
/// forward axis from its centre), and its distance from the ray's origin.
fn point_at_depth(ray: Ray3d, camera: &GlobalTransform, view_depth: f32) -> Option<(f32, Vec3)> {
    let forward = camera.forward();
    let along = ray.direction.dot(*forward);
    if along.abs() < 1e-6 {
        return None;
    }
    let origin_depth = (ray.origin - camera.translation()).dot(*forward);
    let distance = (view_depth - origin_depth) / along;
    (distance.is_finite() && distance >= 0.0).then(|| (distance, ray.get_point(distance)))
}

/// Where `splat`'s 3-D Gaussian peaks along `ray` (distance from the ray's origin):
/// the depth a ray cast gives that splat. The GPU finds which splat takes the pixel
/// to transmittance 0.5; this places the surface point on the pointer's own ray.
fn peak_distance(ray: Ray3d, world_from_cloud: Affine3A, splat: &SplatGeometry) -> Option<f32> {
    let world_ray = Ray::new(ray.origin, *ray.direction, 0.0, f32::INFINITY)?;
    let (local, stretch) = local_ray(world_from_cloud, &world_ray)?;
    let prepared = PreparedSplat::new(&shape_of(splat))?;
    let peak = prepared.peak_along_ray(local.origin(), local.direction())?;
    let distance = peak.t / stretch;
    (distance.is_finite() && distance >= 0.0).then_some(distance)
}

impl CameraPicks {
    /// Takes in an answer: each hit gets its pointer and the ray it was asked with.
    /// `peak` gives the hit splat's peak along that ray, where its asset is at hand.
    fn receive(
        &mut self,
        answer: SplatPickAnswer,
        camera: &GlobalTransform,
        peak: impl Fn(Entity, u32, Ray3d) -> Option<f32>,
    ) {
        while self.sent.front().is_some_and(|sent| sent.id < answer.id) {
            self.sent.pop_front();
        }
        let Some(sent) = self.sent.front().filter(|sent| sent.id == answer.id) else {
            return;
        };
        self.latest = sent
            .pointers
            .iter()
            .zip(&answer.hits)
            .filter_map(|(&(pointer, ray), hit)| {
                let SplatPick {
                    cloud,
                    splat_index,
                    view_depth,
                } = (*hit)?;
                // The splat's centre depth (the tile render's) when its asset is gone.
                let (distance, position) = match peak(cloud, splat_index, ray) {
                    Some(distance) => (distance, ray.get_point(distance)),
                    None => point_at_depth(ray, camera, view_depth)?,
                };
                let view_depth = (position - camera.translation()).dot(*camera.forward());
                let hit = SplatHit {
                    cloud,
                    splat_index,
                    position,
                    distance,
                    view_depth,
                };
                Some((pointer, hit))
            })
            .collect();
    }
}

pub(super) fn splat_picking(
    settings: Res<SplatPickingSettings>,
    ray_map: Res<RayMap>,
    answers: Res<SplatPickAnswers>,
    mut ledger: ResMut<PickLedger>,
    mut commands: Commands,
    cameras: Query<(Entity, &Camera, &GlobalTransform, Has<SplatPickingCamera>)>,
    clouds: Query<(Entity, Option<&Pickable>), With<GaussianCloud>>,
    placed: Query<(&GaussianCloud, &GlobalTransform)>,
    splats: Res<Assets<GaussianSplats>>,
    mut hits: MessageWriter<PointerHits>,
) {
    let ledger = &mut *ledger;
    let hoverable = |pickable: Option<&Pickable>| pickable.is_none_or(|p| p.is_hoverable);
    // Clouds that pointers pass through: the GPU composites the others without them.
    let ignored: Vec<Entity> = clouds
        .iter()
        .filter(|(_, pickable)| !hoverable(*pickable))
        .map(|(cloud, _)| cloud)
        .collect();
    let mut live = Vec::new();
    for (entity, camera, transform, marked) in &cameras {
        if !camera.is_active || (settings.require_markers && !marked) {
            continue;
        }
        live.push(entity);
        let picks = ledger.cameras.entry(entity).or_default();
        if let Some(answer) = answers.take(entity) {
            let peak = |cloud: Entity, index: u32, ray: Ray3d| {
                let (handle, world_from_cloud) = placed.get(cloud).ok()?;
                let splat = splats.get(&handle.0)?.geometry().get(index as usize)?;
                peak_distance(ray, world_from_cloud.affine(), splat)
            };
            picks.receive(answer, transform, peak);
        }

        // This frame's question: every pointer ray through the camera's viewport.
        let mut asked = Vec::new();
        let mut pixels = Vec::new();
        for (id, &ray) in ray_map.iter() {
            if id.camera != entity || pixels.len() == MAX_PICKS {
                continue;
            }
            if let Some(pixel) = viewport_pixel(camera, transform, ray) {
                asked.push((id.pointer, ray));
                pixels.push(pixel);
            }
        }
        ledger.next_id += 1;
        let id = ledger.next_id;
        picks.sent.push_back(SentRequest {
            id,
            pointers: asked,
        });
        while picks.sent.len() > REQUESTS_KEPT {
            picks.sent.pop_front();
        }
        // `try_insert`: another system may despawn the camera before this applies.
        commands.entity(entity).try_insert(SplatPickRequest {
            id,
            pixels,
            ignored: ignored.clone(),
        });

        // The latest answer, for the pointers still over this camera.
        let order = camera.order as f32;
        for (pointer, hit) in &picks.latest {
            if !ray_map.map.contains_key(&RayId::new(entity, *pointer)) {
                continue;
            }
            // The answer is a frame or two old: the cloud may be gone or ignored now.
            if !clouds
                .get(hit.cloud)
                .is_ok_and(|(_, pickable)| hoverable(pickable))
            {
                continue;
            }
            let data =
                HitData::new_with_extra(entity, hit.distance, Some(hit.position), None, *hit);
            hits.write(PointerHits::new(*pointer, vec![(hit.cloud, data)], order));
        }
    }
    ledger.cameras.retain(|camera, _| live.contains(camera));
    answers.retain(|camera| live.contains(camera));
}

#[cfg(test)]
mod tests {
    use bevy::math::{Dir3, Vec3};
    use bevy::transform::components::Transform;

    use super::*;

    #[test]
    fn the_point_at_a_view_depth_lies_on_the_ray() {
        // A camera at (0, 0, 5) looking down −Z; a ray from its near plane, tilted.
        let camera = GlobalTransform::from(Transform::from_xyz(0.0, 0.0, 5.0));
        let direction = Dir3::new(Vec3::new(0.3, 0.0, -1.0)).expect("a direction");
        let ray = Ray3d::new(Vec3::new(0.03, 0.0, 4.9), direction);
        let (distance, point) = point_at_depth(ray, &camera, 2.0).expect("in front");
        assert!((point.z - 3.0).abs() < 1e-5, "{point}");
        assert!((ray.get_point(distance) - point).length() < 1e-5);
        // Behind the ray's origin, along a ray parallel to the image plane, or at a
        // depth that is not a number: no point.
        assert!(point_at_depth(ray, &camera, 0.05).is_none());
        let sideways = Ray3d::new(Vec3::new(0.0, 0.0, 4.9), Dir3::X);
        assert!(point_at_depth(sideways, &camera, 2.0).is_none());
        assert!(point_at_depth(ray, &camera, f32::NAN).is_none());
        let nowhere = Ray3d::new(Vec3::NAN, direction);
        assert!(point_at_depth(nowhere, &camera, 2.0).is_none());
    }
}
