//! Splats in Bevy's shadow maps. Every shadow view of a light (each cascade of a
//! directional light, per camera; the six faces of a point light; a spot light's
//! view) draws the clouds that cast into it through the same passes a camera draws
//! with, and writes their surface, the median depth where transmittance falls to 0.5
//! (`docs/SURFACE.md`), into the light's shadow map with the depth write, nearer-only,
//! after Bevy's shadow pass has drawn the meshes there. Meshes then receive the
//! splats' shadows through Bevy's ordinary PBR path.
//!
//! - [`casters`]: which clouds a shadow view draws (`NotShadowCaster`, the light's
//!   `RenderLayers`, the view's frustum) and how far before a cascade they reach;
//! - [`prepare`]: each shadow view's draw and buffers (`RenderSystems::PrepareResources`)
//!   and its frame's bind groups (`RenderSystems::PrepareBindGroups`), as components
//!   on Bevy's shadow view entities;
//! - [`record`]: the `Core3d` systems that record them, ordered after Bevy's shadow
//!   passes and before the main pass that samples the maps;
//! - [`still`]: views that stand still draw from a kept copy of their surface;
//! - `timing`: [`SplatShadowPassTimes`], which times every stage of every view;
//! - `stats`: [`SplatShadowStats`], what the GPU counted in every view, for the main
//!   world.
//!
//! Shadow views of one map size share their layer and working buffers
//! (`view::shared_work`), as large as the largest of them needs.
//!
//! Directional cascades are drawn in each camera's own run (every camera reuses the
//! same layers for its cascades); point and spot views in their own runs, once a
//! frame.

use bevy::render::extract_resource::ExtractResourcePlugin;

pub(crate) mod casters;
pub(crate) mod cells;
pub(crate) mod prepare;
pub(crate) mod record;
mod stats;
pub(crate) mod still;
mod timing;

pub use stats::SplatShadowStats;
pub use timing::SplatShadowPassTimes;

use bevy::app::SubApp;
use bevy::core_pipeline::schedule::{Core3d, Core3dSystems};
use bevy::ecs::prelude::*;
use bevy::pbr::{LATE_SHADOW_PASS, per_view_shadow_pass, shared_shadow_pass};
use bevy::render::{Render, RenderStartup, RenderSystems};

/// Adds what the main world sets for the shadow views.
pub(crate) fn add_to_main(app: &mut bevy::app::App) {
    app.register_type::<SplatShadowPassTimes>()
        .register_type::<SplatShadowStats>()
        .init_resource::<SplatShadowStats>()
        .add_plugins(ExtractResourcePlugin::<SplatShadowPassTimes>::default());
}

/// Adds the shadow views' systems to the render app, sharing `stats` with the main
/// world.
pub(crate) fn add_systems(render_app: &mut SubApp, stats: SplatShadowStats) {
    render_app
        .insert_resource(stats)
        .init_resource::<prepare::ShadowWork>()
        .add_systems(RenderStartup, prepare::NoSceneDepth::init)
        .add_systems(
            Render,
            (
                prepare::prepare_shadow_views.in_set(RenderSystems::PrepareResources),
                prepare::prepare_shadow_bind_groups.in_set(RenderSystems::PrepareBindGroups),
            ),
        )
        .add_systems(
            Core3d,
            (
                record::directional_splat_shadows
                    .after(per_view_shadow_pass::<LATE_SHADOW_PASS>)
                    .before(Core3dSystems::MainPass),
                record::point_and_spot_splat_shadows
                    .after(shared_shadow_pass::<LATE_SHADOW_PASS>)
                    .before(Core3dSystems::MainPass),
            ),
        );
}
