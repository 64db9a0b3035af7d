//! Render-world wiring of the splat pipeline.
//!
//! Per camera view, every frame:
//! preprocess → depth sort → scan → duplicate → tile sort → tile range → tile render →
//! composite.
//!
//! - [`passes`]: one module per compute pass, its WGSL beside it;
//! - `view`: what each camera keeps across frames (its bands, their buffers, the
//!   counters read back from the GPU, the statistics) and the frame it records;
//! - here: the plugin, `extract`ion from the main world, `prepare` (sizes the
//!   views' buffers and binds their frame), the graph `node` that records it, the
//!   GPU upload of each cloud ([`gpu_cloud`]), the GPU memory accounting
//!   (`memory`, [`SplatMemory`]) and the caps an app may set below the device's
//!   limits (`limits`, [`SplatGpuLimits`]).
//!
//! See `docs/ARCHITECTURE.md` for the whole map.

pub mod compact;
mod extract;
pub mod gpu_cloud;
mod limits;
mod memory;
mod node;
pub mod passes;
mod prepare;
mod view;

use bevy::app::{App, Plugin};
use bevy::core_pipeline::core_3d::{
    main_opaque_pass_3d, main_transparent_pass_3d, prepare_core_3d_depth_textures,
};
use bevy::core_pipeline::schedule::{Core3d, Core3dSystems};
use bevy::ecs::prelude::*;
use bevy::render::extract_component::ExtractComponentPlugin;
use bevy::render::extract_resource::ExtractResourcePlugin;
use bevy::render::render_asset::RenderAssetPlugin;
use bevy::render::renderer::{RenderAdapterInfo, RenderDevice};
use bevy::render::{Render, RenderApp, RenderStartup, RenderSystems};

pub use gpu_cloud::GpuSplats;
pub use limits::{MIN_STORAGE_BINDING_BYTES, SplatGpuLimits};
pub use memory::SplatMemory;
pub use node::{DIAGNOSTIC_SPAN, STAGES as PASS_NAMES};
pub use passes::common::{BIN_SIZE, TILE_SIZE};
pub use passes::composite::SplatComposite;
pub use passes::depth_write::SplatDepth;
pub use passes::pick::MAX_PICKS;
pub use view::picks::{GpuPick, PickAnswer, SplatPickAnswers, SplatPickRequest};
pub use view::stats::{SplatStats, SplatViewStats};
pub use view::timestamps::SplatPassTimes;

use crate::cloud::GaussianCloud;
use passes::SplatPipelines;

fn init_pipelines(
    mut commands: Commands,
    device: Res<RenderDevice>,
    adapter: Res<RenderAdapterInfo>,
) {
    let sort = passes::radix_sort::SortAlgorithm::for_adapter(&adapter);
    bevy::log::info!("splat radix sort: {sort:?} on {}", adapter.name);
    commands.insert_resource(SplatPipelines::new(device.wgpu_device(), sort));
}

/// Adds the splat passes to every 3D camera's render schedule.
pub(crate) struct SplatRenderPlugin;

impl Plugin for SplatRenderPlugin {
    fn build(&self, app: &mut App) {
        let memory = SplatMemory::default();
        let stats = SplatStats::default();
        let answers = SplatPickAnswers::default();
        app.insert_resource(memory.clone())
            .insert_resource(stats.clone())
            .insert_resource(answers.clone())
            .init_resource::<SplatGpuLimits>()
            .register_type::<SplatGpuLimits>()
            .register_type::<SplatMemory>();
        // Without a renderer (a server, an asset tool) clouds are plain data.
        if app.get_sub_app(RenderApp).is_none() {
            return;
        }
        app.add_plugins((
            ExtractComponentPlugin::<GaussianCloud>::extract_visible(),
            ExtractComponentPlugin::<SplatComposite>::default(),
            ExtractComponentPlugin::<SplatDepth>::default(),
            ExtractComponentPlugin::<SplatPickRequest>::default(),
            ExtractComponentPlugin::<SplatPassTimes>::default(),
            RenderAssetPlugin::<GpuSplats>::default(),
            ExtractResourcePlugin::<SplatGpuLimits>::default(),
        ));
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            return;
        };
        render_app
            .insert_resource(memory)
            .insert_resource(stats)
            .insert_resource(answers)
            .init_resource::<SplatGpuLimits>()
            .init_resource::<prepare::SplatViews>()
            .add_systems(RenderStartup, init_pipelines)
            .add_systems(
                Render,
                (
                    prepare::request_readable_depth
                        .before(prepare_core_3d_depth_textures)
                        .in_set(RenderSystems::PrepareResources),
                    prepare::prepare_splat_views.in_set(RenderSystems::PrepareBindGroups),
                ),
            )
            .add_systems(
                Core3d,
                node::splat_pass
                    .after(main_opaque_pass_3d)
                    .before(main_transparent_pass_3d)
                    .in_set(Core3dSystems::MainPass),
            );
    }
}
