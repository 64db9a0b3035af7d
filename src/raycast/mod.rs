//! Ray casts against splat clouds on the CPU.
//!
//! # The surface of a cloud
//!
//! Everything in the plugin that asks where a cloud is along a ray or a pixel uses one
//! definition: walking the ray from its origin, each splat contributes its opacity
//! where its 3-D Gaussian peaks on the ray, composited front to back as the tile render
//! does (`T ← T·(1 − α)`, `α = min(0.999, opacity·exp(−½m²))`, splats beyond 3σ or
//! below 1/255 skipped); the surface is where the transmittance `T` first falls to
//! 0.5 — the median depth — and the splat that takes it there is the hit splat.
//!
//! - [`gaussian`]: one splat against one ray (the peak, its α, the 3σ box);
//! - [`bvh`]: a binned-SAH tree over the 3σ boxes, walked front to back in exact depth
//!   order;
//! - [`cast`]: the median-depth rule over one cloud (and the brute force it is tested
//!   against);
//! - [`bvh_cache`]: one tree per loaded asset, built on a worker thread;
//! - [`raycast_param`]: [`SplatRaycast`], casts over every cloud in the world.

pub mod bvh;
pub mod bvh_cache;
pub mod cast;
pub mod gaussian;
pub mod raycast_param;

use bevy::app::{App, Plugin, PreUpdate};
use bevy::ecs::schedule::IntoScheduleConfigs;

use crate::systems::SplatSystems;

pub use bvh::SplatBvh;
pub use bvh_cache::SplatBvhs;
pub use cast::{CastSettings, MAX_THRESHOLD, MIN_THRESHOLD, RayHit};
pub use gaussian::{
    Aabb, CUTOFF_MAHALANOBIS_SQ, CUTOFF_SIGMAS, Contribution, MAX_ALPHA, MIN_ALPHA, MIN_AXIS_RATIO,
    PreparedSplat, Ray, RayPeak, SplatShape, three_sigma_half_extent,
};
pub use raycast_param::{SplatRayHit, SplatRaycast, SplatRaycastSettings};

/// Builds a ray-cast BVH for every splat asset that loads (on a worker thread) and
/// makes [`SplatRaycast`] work. Opt-in: the trees cost about 85 bytes per splat.
#[derive(Default)]
pub struct SplatRaycastPlugin;

impl Plugin for SplatRaycastPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<SplatBvhs>().add_systems(
            PreUpdate,
            (bvh_cache::start_bvh_builds, bvh_cache::finish_bvh_builds)
                .chain()
                .in_set(SplatSystems::Bvh),
        );
    }
}
