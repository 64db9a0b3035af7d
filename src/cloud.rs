use bevy::asset::prelude::AssetChanged;
use bevy::asset::{AsAssetId, AssetId, Assets, Handle};
use bevy::camera::primitives::Aabb;
use bevy::camera::visibility::{
    NoFrustumCulling, Visibility, VisibilityClass, add_visibility_class,
};
use bevy::ecs::prelude::*;
use bevy::transform::components::Transform;

use crate::asset::GaussianSplats;

/// A Gaussian splat cloud in the scene: to splats what `Mesh3d` is to meshes.
///
/// The cloud is drawn in its own frame under the entity's `Transform`, so it moves,
/// hides and despawns like any entity. Its `Aabb` is kept up to date from the asset,
/// so cameras skip clouds outside their frustum (add `NoFrustumCulling` to opt out).
#[derive(Component, Clone, Debug, Default, PartialEq, Eq)]
#[require(Transform, Visibility, VisibilityClass)]
#[component(on_add = add_visibility_class::<GaussianCloud>)]
pub struct GaussianCloud(pub Handle<GaussianSplats>);

impl From<Handle<GaussianSplats>> for GaussianCloud {
    fn from(handle: Handle<GaussianSplats>) -> Self {
        Self(handle)
    }
}

impl AsAssetId for GaussianCloud {
    type Asset = GaussianSplats;

    fn as_asset_id(&self) -> AssetId<GaussianSplats> {
        self.0.id()
    }
}

/// Inserts or refreshes each cloud's `Aabb` once its asset is available.
pub(crate) fn update_cloud_bounds(
    mut commands: Commands,
    splats: Res<Assets<GaussianSplats>>,
    missing: Query<(Entity, &GaussianCloud), (Without<Aabb>, Without<NoFrustumCulling>)>,
    changed: Query<
        (Entity, &GaussianCloud),
        (
            With<Aabb>,
            Without<NoFrustumCulling>,
            Or<(Changed<GaussianCloud>, AssetChanged<GaussianCloud>)>,
        ),
    >,
) {
    for (entity, cloud) in missing.iter().chain(changed.iter()) {
        let Some(asset) = splats.get(&cloud.0) else {
            continue;
        };
        // An empty or all-invalid cloud draws nothing; a zero box at the origin
        // keeps it culled instead of leaving it unbounded.
        let aabb = asset.bounds().unwrap_or_default();
        commands.entity(entity).try_insert(aabb);
    }
}
