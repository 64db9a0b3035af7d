//! What a pointer hit on a cloud carries beyond Bevy's `HitData`.

use bevy::ecs::entity::Entity;
use bevy::math::Vec3;
use bevy::reflect::prelude::*;

/// The splat-specific part of a pointer hit on a cloud, attached to its `HitData`:
/// read it in an observer with `hit.extra_as::<SplatHit>()`.
#[derive(Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Debug, Clone, PartialEq)]
pub struct SplatHit {
    /// The cloud that was hit.
    pub cloud: Entity,
    /// The splat where the transmittance fell to 0.5, as an index into the cloud's
    /// asset (`GaussianSplats`).
    pub splat_index: u32,
    /// The surface point in world space (also `HitData::position`): where the hit
    /// splat's 3-D Gaussian peaks along the pointer's ray, as a ray cast places it.
    pub position: Vec3,
    /// Distance from the pointer ray's origin to the surface point (also
    /// `HitData::depth`).
    pub distance: f32,
    /// The surface point's camera-space depth: distance along the camera's forward axis.
    pub view_depth: f32,
}
