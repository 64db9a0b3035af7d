//! `SplatSystems`: the sets the plugins' main-world systems run in.

use bevy::ecs::schedule::SystemSet;

/// The system sets the plugins' main-world systems run in, to order your own systems
/// against them: `app.add_systems(Update, my_system.after(SplatSystems::SceneSpawn))`.
///
/// Each set lives in one schedule (named below); ordering against it only means
/// something in that schedule.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SplatSystems {
    /// `PostUpdate`, inside `VisibilitySystems::CalculateBounds` (from
    /// [`GaussianSplatPlugin`](crate::GaussianSplatPlugin)): each cloud's `Aabb` is inserted or refreshed from its
    /// asset once the asset is loaded or changes, before frustum culling reads it.
    Bounds,
    /// `Update` (from [`GaussianSplatPlugin`](crate::GaussianSplatPlugin), with the `gltf` feature): each
    /// `GaussianSceneRoot` whose scene has loaded gets its node and cloud entities and
    /// a `GaussianSceneSpawned`. Systems after it see them (commands are applied
    /// between).
    SceneSpawn,
    /// `PreUpdate` (from [`SplatRaycastPlugin`](crate::SplatRaycastPlugin)): a BVH build starts for each splat
    /// asset that loaded or changed, and builds that finished are taken in. Ray casts
    /// ([`SplatRaycast`](crate::SplatRaycast)) after it use the trees ready this frame.
    Bvh,
    /// `PreUpdate` (from [`GaussianSplatPlugin`](crate::GaussianSplatPlugin)): while a
    /// camera has [`SplatLod`](crate::SplatLod), a level-of-detail tree build starts for
    /// each splat asset without one, and builds that finished are taken in.
    Lod,
    /// `PreUpdate`, inside `PickingSystems::Backend` (from `SplatPickingPlugin`, with
    /// the `picking` feature): pointer pixels are sent to the GPU and the latest answers
    /// become `PointerHits` on clouds.
    Picking,
    /// `PostUpdate`, after transform propagation (from
    /// [`GaussianSplatPlugin`](crate::GaussianSplatPlugin), with the `rad` feature):
    /// streamed clouds take in the chunks that arrived and plan their fetches and
    /// evictions from the cameras (`crate::streaming`).
    Streaming,
}
