use bevy::asset::prelude::AssetChanged;
use bevy::asset::{AsAssetId, AssetId, Assets, Handle};
use bevy::camera::primitives::Aabb;
use bevy::camera::visibility::{
    NoFrustumCulling, Visibility, VisibilityClass, add_visibility_class,
};
use bevy::ecs::prelude::*;
use bevy::reflect::prelude::*;
use bevy::transform::components::Transform;

use crate::asset::GaussianSplats;

/// A Gaussian splat cloud in the scene: to splats what `Mesh3d` is to meshes.
///
/// The cloud is drawn in its own frame under the entity's `Transform`, so it moves,
/// hides and despawns like any entity. Its `Aabb` is kept up to date from the asset,
/// so cameras skip clouds outside their frustum (add `NoFrustumCulling` to opt out).
#[derive(Component, Clone, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
#[require(Transform, Visibility, VisibilityClass)]
#[component(on_add = add_visibility_class::<GaussianCloud>)]
pub struct GaussianCloud(pub Handle<GaussianSplats>);

/// How a cloud's splats are rasterized, as gsplat's `rasterize_mode` says it. Without
/// this component a cloud follows its asset: antialiased where the file says it was
/// trained so ([`GaussianSplats::antialiased`]), classic otherwise.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq, Hash)]
pub enum SplatRasterMode {
    /// The 3DGS reference: each splat's screen footprint widened by 0.3 px².
    #[default]
    Classic,
    /// Mip-Splatting's 2-D filter: the same widening, with each splat's opacity scaled
    /// by √(det Σ₂ᴅ / det(Σ₂ᴅ + 0.3·I)) so its total weight is kept. For scenes
    /// trained that way; on others it makes small splats fainter.
    Antialiased,
}

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
