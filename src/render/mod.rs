//! The render side of the plugin: what an app puts on a camera to change how its
//! splats are drawn ([`SplatComposite`], [`SplatDepth`], [`SplatPassTimes`],
//! [`SplatPickRequest`]), what it reads back about the drawing ([`SplatStats`],
//! [`SplatMemory`], [`SplatPickAnswers`], [`SplatPipelinesStatus`], the diagnostics named by [`PASS_NAMES`]
//! under [`DIAGNOSTIC_SPAN`]) and the caps it may set below the device's limits
//! ([`SplatGpuLimits`]). The passes themselves are private; the GPU radix sort and
//! prefix scan they are built on are public in [`gpu_sort`](crate::gpu_sort).
//!
//! Per camera view, every frame:
//! preprocess → depth sort → scan → duplicate → tile sort → tile range → tile render →
//! composite.
//!
//! Inside (crate-private): `passes`, one module per compute pass, its WGSL beside it;
//! `view`, what each camera keeps across frames (its bands, their buffers, the
//! counters read back from the GPU, the statistics) and the frame it records; and
//! here the plugin, `extract`ion from the main world, `prepare` (sizes the views'
//! buffers and binds their frame), `record` (records the frame into the camera's
//! schedule), the GPU upload of each cloud (`gpu_cloud`, in the layout `compact`
//! encodes for [`SplatStorage::Compact`](crate::SplatStorage::Compact)), the GPU
//! memory accounting (`memory`) and the caps (`limits`).
//!
//! See `docs/ARCHITECTURE.md` for the whole map.

pub(crate) mod compact;
mod extract;
pub(crate) mod gpu_cloud;
mod lighting;
mod limits;
pub(crate) mod lod_reach;
pub(crate) mod lod_trees;
mod memory;
pub(crate) mod passes;
pub(crate) mod pipelines;
mod prepare;
mod record;
#[cfg(feature = "shadows")]
mod shadows;
mod stage;
pub(crate) mod stream_pages;
pub(crate) mod view;

use bevy::app::{App, Plugin};
use bevy::core_pipeline::core_3d::{
    main_opaque_pass_3d, main_transparent_pass_3d, prepare_core_3d_depth_textures,
};
use bevy::core_pipeline::schedule::{Core3d, Core3dSystems};
use bevy::ecs::prelude::*;
use bevy::render::extract_component::ExtractComponentPlugin;
use bevy::render::extract_resource::ExtractResourcePlugin;
use bevy::render::render_asset::RenderAssetPlugin;
use bevy::render::{ExtractSchedule, Render, RenderApp, RenderStartup, RenderSystems};

pub use limits::{MIN_STORAGE_BINDING_BYTES, SplatGpuLimits};
pub use memory::SplatMemory;
pub use passes::common::{BIN_SIZE, TILE_SIZE};
pub use passes::composite::SplatComposite;
pub use passes::depth_write::SplatDepth;
pub use passes::pick::MAX_PICKS;
pub use pipelines::SplatPipelinesStatus;
pub use record::DIAGNOSTIC_SPAN;
#[cfg(feature = "shadows")]
pub use shadows::record::SHADOW_DIAGNOSTIC_SPAN;
#[cfg(feature = "shadows")]
pub use shadows::{SplatShadowPassTimes, SplatShadowStats};
pub use stage::{PASS_NAMES, SplatStage};
pub use view::picks::{SplatPick, SplatPickAnswer, SplatPickAnswers, SplatPickRequest};
pub use view::stats::{SplatLodStats, SplatStats, SplatViewStats};
pub use view::timestamps::SplatPassTimes;

/// [`SplatPick`]'s name before the crate's naming scheme.
#[deprecated(note = "renamed to SplatPick")]
pub type GpuPick = SplatPick;
/// [`SplatPickAnswer`]'s name before the crate's naming scheme.
#[deprecated(note = "renamed to SplatPickAnswer")]
pub type PickAnswer = SplatPickAnswer;

use crate::cloud::GaussianCloud;
use gpu_cloud::GpuSplats;

/// Adds the splat passes to every 3D camera's render schedule.
pub(crate) struct SplatRenderPlugin;

impl Plugin for SplatRenderPlugin {
    fn build(&self, app: &mut App) {
        let memory = SplatMemory::default();
        let stats = SplatStats::default();
        let answers = SplatPickAnswers::default();
        let status = SplatPipelinesStatus::default();
        app.insert_resource(memory.clone())
            .insert_resource(stats.clone())
            .insert_resource(answers.clone())
            .insert_resource(status.clone())
            .init_resource::<SplatGpuLimits>()
            .register_type::<SplatGpuLimits>()
            .register_type::<SplatMemory>()
            .register_type::<SplatComposite>()
            .register_type::<SplatDepth>()
            .register_type::<SplatPassTimes>()
            .register_type::<SplatPickRequest>()
            .register_type::<SplatStats>()
            .register_type::<SplatPipelinesStatus>()
            .register_type::<SplatPickAnswers>();
        #[cfg(feature = "shadows")]
        shadows::add_to_main(app);
        // Without a renderer (a server, an asset tool) clouds are plain data.
        if app.get_sub_app(RenderApp).is_none() {
            return;
        }
        app.add_plugins((
            // Every shown cloud, not only those a camera sees: lights see others.
            ExtractComponentPlugin::<GaussianCloud>::default(),
            ExtractComponentPlugin::<SplatComposite>::default(),
            ExtractComponentPlugin::<SplatDepth>::default(),
            ExtractComponentPlugin::<SplatPickRequest>::default(),
            ExtractComponentPlugin::<SplatPassTimes>::default(),
            ExtractComponentPlugin::<crate::lod::SplatLod>::default(),
            ExtractComponentPlugin::<crate::lighting::RedrawSplatShadows>::default(),
            ExtractComponentPlugin::<crate::lighting::SplatShadowScale>::default(),
            RenderAssetPlugin::<GpuSplats>::default(),
            ExtractResourcePlugin::<SplatGpuLimits>::default(),
        ));
        // The WGSL modules the passes import, as shader libraries.
        passes::library::load_library_modules(app);
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            return;
        };
        render_app
            .insert_resource(memory)
            .insert_resource(stats)
            .insert_resource(answers)
            .insert_resource(status)
            .init_resource::<SplatGpuLimits>()
            .init_resource::<extract::SplatShaderTime>()
            .init_resource::<pipelines::QueuedKernels>()
            .init_resource::<lod_trees::GpuLodTrees>()
            .init_resource::<prepare::view_buffers::CameraWork>()
            .add_systems(
                ExtractSchedule,
                (extract::extract_shader_time, lod_trees::extract_lod_trees),
            )
            .add_systems(RenderStartup, pipelines::start_pipelines)
            .add_systems(
                Render,
                (
                    prepare::readable_depth::request_readable_depth
                        .before(prepare_core_3d_depth_textures)
                        .in_set(RenderSystems::PrepareResources),
                    pipelines::queue_splat_pipelines
                        .before(prepare::view_buffers::prepare_splat_view_buffers)
                        .in_set(RenderSystems::PrepareResources),
                    lod_trees::prepare_lod_trees
                        .after(pipelines::queue_splat_pipelines)
                        .before(prepare::view_buffers::prepare_splat_view_buffers)
                        .in_set(RenderSystems::PrepareResources),
                    prepare::view_buffers::prepare_splat_view_buffers
                        .in_set(RenderSystems::PrepareResources),
                    prepare::bind_groups::queue_fragment_pipelines
                        .after(pipelines::queue_splat_pipelines)
                        .in_set(RenderSystems::PrepareResources),
                    prepare::bind_groups::prepare_splat_bind_groups
                        .in_set(RenderSystems::PrepareBindGroups),
                ),
            )
            .add_systems(
                Core3d,
                record::splat_pass
                    .after(main_opaque_pass_3d)
                    .before(main_transparent_pass_3d)
                    .in_set(Core3dSystems::MainPass),
            );
        #[cfg(feature = "rad")]
        render_app
            .init_resource::<stream_pages::ExtractedStreams>()
            .add_systems(ExtractSchedule, stream_pages::extract_stream_pages)
            .add_systems(
                Render,
                lod_trees::prepare_stream_pages
                    .after(lod_trees::prepare_lod_trees)
                    .before(prepare::view_buffers::prepare_splat_view_buffers)
                    .in_set(RenderSystems::PrepareResources),
            );
        #[cfg(feature = "shadows")]
        {
            let shadow_stats = app.world().resource::<shadows::SplatShadowStats>().clone();
            let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
                return;
            };
            shadows::add_systems(render_app, shadow_stats);
            lighting::add_systems(render_app);
        }
    }

    fn finish(&self, app: &mut App) {
        if app.get_sub_app(RenderApp).is_none() {
            return;
        }
        // The entry shaders, and the splat shaders registered while the app was built,
        // become shader assets the render world's pipelines are queued with.
        let assets = pipelines::add_shader_assets(app);
        #[cfg(feature = "shadows")]
        lighting::add_shader_asset(app);
        if let Some(render_app) = app.get_sub_app_mut(RenderApp) {
            render_app.insert_resource(assets);
        }
    }
}
