//! Render-world wiring and the compute passes of the splat pipeline.
//!
//! Per camera view, every frame:
//! preprocess → depth sort → scan → duplicate → tile sort → tile range → tile render →
//! composite.
//! Each pass has its module here and its WGSL in `shaders/`.

mod band_buffers;
mod bands;
mod composite;
mod depth_sort;
mod duplicate;
mod extract;
mod frame;
pub mod gpu_cloud;
pub mod gpu_util;
mod indirect;
mod memory;
mod node;
mod prepare;
mod preprocess;
pub mod radix_sort;
mod readback;
pub mod scan;
mod stats;
mod tile_order;
mod tile_range;
mod tile_render;
mod view_buffers;
mod view_sizing;
mod view_uniform;

use bevy::app::{App, Plugin};
use bevy::core_pipeline::core_3d::{
    main_opaque_pass_3d, main_transparent_pass_3d, prepare_core_3d_depth_textures,
};
use bevy::core_pipeline::schedule::{Core3d, Core3dSystems};
use bevy::ecs::prelude::*;
use bevy::render::extract_component::ExtractComponentPlugin;
use bevy::render::render_asset::RenderAssetPlugin;
use bevy::render::renderer::RenderDevice;
use bevy::render::{Render, RenderApp, RenderStartup, RenderSystems};

pub use gpu_cloud::GpuSplats;
pub use memory::SplatMemory;
pub use node::{DIAGNOSTIC_SPAN, STAGES as PASS_NAMES};
pub use stats::{SplatStats, SplatViewStats};

use crate::cloud::GaussianCloud;

/// How a camera's finished splat layer is written into its image.
///
/// Trained colours are sRGB-encoded display values. By default they are converted to
/// Bevy's linear working space, so the camera's output encoding gives the trained
/// colours back. `Passthrough` writes the layer's values untouched, as the reference
/// rasterizer does: use it with an `Rgba8Unorm` render target for a parity render.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SplatComposite {
    #[default]
    Linearize,
    Passthrough,
}

/// Every pipeline of the splat passes, built once per render device.
#[derive(Resource)]
pub struct SplatPipelines {
    preprocess: preprocess::PreprocessPass,
    indirect: indirect::IndirectPass,
    depth_sort: depth_sort::DepthSortPass,
    scan: scan::PrefixScan,
    duplicate: duplicate::DuplicatePass,
    /// Sorts 64-bit keys: the visible splats by depth.
    sort: radix_sort::RadixSort,
    /// Sorts 32-bit keys: pairs by tile, tiles by work.
    tile_sort: radix_sort::RadixSort,
    tile_range: tile_range::TileRangePass,
    tile_order: tile_order::TileOrderPass,
    tile_render: tile_render::TileRenderPass,
    composite: composite::CompositePass,
}

impl SplatPipelines {
    pub fn new(device: &wgpu::Device) -> Self {
        Self {
            preprocess: preprocess::PreprocessPass::new(device),
            indirect: indirect::IndirectPass::new(device),
            depth_sort: depth_sort::DepthSortPass::new(device),
            scan: scan::PrefixScan::new(device),
            duplicate: duplicate::DuplicatePass::new(device),
            sort: radix_sort::RadixSort::new(device),
            tile_sort: radix_sort::RadixSort::with_key(device, radix_sort::SortKey::U32),
            tile_range: tile_range::TileRangePass::new(device),
            tile_order: tile_order::TileOrderPass::new(device),
            tile_render: tile_render::TileRenderPass::new(device),
            composite: composite::CompositePass::new(device),
        }
    }
}

fn init_pipelines(mut commands: Commands, device: Res<RenderDevice>) {
    commands.insert_resource(SplatPipelines::new(device.wgpu_device()));
}

/// Adds the splat passes to every 3D camera's render schedule.
pub(crate) struct SplatRenderPlugin;

impl Plugin for SplatRenderPlugin {
    fn build(&self, app: &mut App) {
        let memory = SplatMemory::default();
        let stats = SplatStats::default();
        app.insert_resource(memory.clone())
            .insert_resource(stats.clone());
        // Without a renderer (a server, an asset tool) clouds are plain data.
        if app.get_sub_app(RenderApp).is_none() {
            return;
        }
        app.add_plugins((
            ExtractComponentPlugin::<GaussianCloud>::extract_visible(),
            ExtractComponentPlugin::<SplatComposite>::default(),
            RenderAssetPlugin::<GpuSplats>::default(),
        ));
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            return;
        };
        render_app
            .insert_resource(memory)
            .insert_resource(stats)
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
