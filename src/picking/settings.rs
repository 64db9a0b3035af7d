//! Which cameras pick clouds.

use bevy::ecs::prelude::*;
use bevy::reflect::prelude::*;

/// Settings of [`SplatPickingPlugin`](super::SplatPickingPlugin).
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Default, Debug, Clone, PartialEq)]
pub struct SplatPickingSettings {
    /// Only cameras with [`SplatPickingCamera`] pick clouds (like
    /// `MeshPickingSettings::require_markers`). Off by default: every camera does.
    pub require_markers: bool,
}

/// Marks a camera that picks clouds when [`SplatPickingSettings::require_markers`] is set.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
pub struct SplatPickingCamera;
