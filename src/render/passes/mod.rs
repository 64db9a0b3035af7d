//! The compute passes of the splat pipeline, one module per pass with its WGSL beside
//! it under the same stem. In frame order, per band of a view:
//!
//! 1. `preprocess`: project every splat, evaluate its SH colour, count its tiles and
//!    write its depth key;
//! 2. `indirect`: turn the GPU's counts into dispatch arguments (and prepare a
//!    one-sweep depth sort);
//! 3. depth sort: [`radix_sort`] of the visible splats by depth;
//! 4. `pair_slots`: their pair counts, carried in the sorted values, become each
//!    splat's first pair slot (a prefix scan), and the kept pairs' grid (and a
//!    one-sweep bin sort is prepared);
//! 5. `duplicate`: one (bin, splat) pair per bin (2×2 tiles) a splat touches;
//! 6. tile sort: a stable [`radix_sort`] of the pairs by bin;
//! 7. `tile_range`: each bin's run of pairs, `tile_split`: each bin's run split
//!    into its tiles' lists, and `tile_order`: the busiest tiles first;
//! 8. `tile_render`: blend each tile's splats front to back into the splat layer,
//!    and for a view with pointers over it, `pick`: the same blend at each pointer
//!    pixel, up to the splat where the transmittance falls to 0.5;
//!
//! and once per view, `composite`: the layer over the camera's image, then, for a
//! camera with `SplatDepth`, `depth_write`: the splats' median depth into its depth
//! buffer.
//!
//! `common` holds what every pass is built with (layout and bind group helpers, the
//! shared constants); `library` lists the WGSL modules, shared code that passes
//! `#import` (`common.wgsl` is `bevy_splat::common`), with variants as shader defs;
//! `builder` is where a pass gets its pipelines: Bevy's `PipelineCache` in an app,
//! or plain wgpu through naga_oil (the public GPU sort, the kernel tests). Passes
//! know nothing of Bevy's ECS: they take wgpu buffers, so the GPU tests can drive
//! them on their own.

pub(crate) mod builder;
pub(crate) mod common;
pub(crate) mod composite;
#[cfg(test)]
mod contract;
pub(crate) mod depth_write;
pub(crate) mod duplicate;
pub(crate) mod indirect;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod kernel_stats;
pub(crate) mod library;
pub(crate) mod pair_slots;
pub(crate) mod pick;
pub(crate) mod preprocess;
pub mod radix_sort;
pub mod scan;
pub(crate) mod tile_order;
pub(crate) mod tile_quads;
pub(crate) mod tile_range;
pub(crate) mod tile_render;
pub(crate) mod tile_split;

use bevy::ecs::resource::Resource;

use crate::render::pipelines::CachedBuilder;

/// Every pipeline of the splat passes, built once per render device.
#[derive(Resource)]
pub struct SplatPipelines {
    pub(crate) preprocess: preprocess::PreprocessPass,
    pub(crate) indirect: indirect::IndirectPass,
    pub(crate) pair_slots: pair_slots::PairSlotsPass,
    pub(crate) duplicate: duplicate::DuplicatePass,
    /// Sorts 32-bit keys: the visible splats by depth, pairs by tile, tiles by work.
    pub(crate) sort: radix_sort::RadixSort,
    pub(crate) tile_range: tile_range::TileRangePass,
    pub(crate) tile_split: tile_split::TileSplitPass,
    pub(crate) tile_order: tile_order::TileOrderPass,
    pub(crate) tile_render: tile_render::TileRenderPass,
    pub(crate) pick: pick::PickPass,
}

/// The passes that read the splat layer over the drawn tiles (the composite and the
/// depth write, `tile_quads`), made when the render
/// world starts so that each view's pipelines for its target are queued while the
/// compute pipelines still compile.
#[derive(Resource)]
pub struct FragmentPasses {
    pub(crate) composite: composite::CompositePass,
    pub(crate) depth_write: depth_write::DepthWritePass,
}

impl FragmentPasses {
    pub(crate) fn new(builder: &CachedBuilder<'_>) -> Self {
        Self {
            composite: composite::CompositePass::new(builder),
            depth_write: depth_write::DepthWritePass::new(builder),
        }
    }
}

impl SplatPipelines {
    /// Every compute pipeline through `builder` (in an app, Bevy's `PipelineCache`), or
    /// `None` while any is being compiled (the first call queues them all). `sort`: the
    /// radix sort's algorithm, [`radix_sort::SortAlgorithm::for_adapter`] of the
    /// device's adapter. The preprocess has no splat shader variants yet
    /// (`PreprocessPass::set_splat_shaders`).
    pub(crate) fn build(
        builder: &mut dyn builder::PipelineBuilder,
        sort: radix_sort::SortAlgorithm,
    ) -> Option<Self> {
        let sort_options = radix_sort::kernels::KernelOptions {
            key: radix_sort::SortKey::U32,
            look_back: radix_sort::LookBack::DEFAULT,
            ranking: radix_sort::SortRanking::for_device(builder::PipelineBuilder::device(builder)),
            max_groups_x: builder::PipelineBuilder::device(builder)
                .limits()
                .max_compute_workgroups_per_dimension,
        };
        // Every pass is asked before any answer is used, so the first call queues all.
        let preprocess = preprocess::PreprocessPass::new(builder);
        // The one-sweep sorts are prepared by the kernels that count what they sort.
        let onesweep =
            (sort == radix_sort::SortAlgorithm::OneSweep).then_some(sort_options.max_groups_x);
        let indirect = indirect::IndirectPass::new(builder, onesweep);
        let pair_slots = pair_slots::PairSlotsPass::new(builder, onesweep);
        let duplicate = duplicate::DuplicatePass::new(builder);
        let sort = radix_sort::RadixSort::with_builder(builder, &sort_options, sort);
        let tile_range = tile_range::TileRangePass::new(builder);
        let tile_split = tile_split::TileSplitPass::new(builder);
        let tile_order = tile_order::TileOrderPass::new(builder);
        let tile_render = tile_render::TileRenderPass::new(builder);
        let pick = pick::PickPass::new(builder);
        Some(Self {
            preprocess: preprocess?,
            indirect: indirect?,
            pair_slots: pair_slots?,
            duplicate: duplicate?,
            sort: sort?,
            tile_range: tile_range?,
            tile_split: tile_split?,
            tile_order: tile_order?,
            tile_render: tile_render?,
            pick: pick?,
        })
    }
}

/// Every entry shader of the passes: in an app, each is a shader asset with its
/// runtime checks (`render::pipelines::add_entry_shaders`).
pub(crate) const ENTRY_SHADERS: [builder::EntryShader; 17] = [
    preprocess::SHADER,
    indirect::SHADER,
    pair_slots::SHADER,
    scan::SETUP_SHADER,
    scan::SCAN_SHADER,
    duplicate::SHADER,
    radix_sort::kernels::SETUP_SHADER,
    radix_sort::kernels::CLASSIC_SHADER,
    radix_sort::kernels::ONESWEEP_SHADER,
    tile_range::SHADER,
    tile_split::SHADER,
    tile_order::SHADER,
    tile_render::SHADER,
    pick::SHADER,
    composite::SHADER,
    depth_write::SHADER,
    tile_quads::SHADER,
];

/// The defs every module is composed with: the constants the host and the WGSL
/// share, from their one definition on the Rust side.
pub(crate) fn crate_defs() -> Vec<library::ShaderDef> {
    use library::ShaderDef;
    let sizes = [
        ShaderDef::UInt("TILE_SIZE", common::TILE_SIZE),
        ShaderDef::UInt("WORK_CLASSES", common::WORK_CLASSES),
        ShaderDef::UInt("TILE_CHUNK_PAIRS", common::TILE_CHUNK_PAIRS),
        ShaderDef::UInt("WORKGROUP_SIZE", common::WORKGROUP_SIZE),
        ShaderDef::UInt(
            "LAYER_CELLS",
            crate::render::view::uniform::MAX_LAYER_CELLS as u32,
        ),
    ];
    sizes
        .into_iter()
        .chain(indirect::counter_defs())
        .chain(preprocess::shared_defs())
        .chain(radix_sort::state::shared_defs())
        .chain(scan::shared_defs())
        .collect()
}

/// A `library::ShaderLibrary` with the crate's defs ([`crate_defs`]).
pub(crate) fn shader_library() -> library::ShaderLibrary {
    library::ShaderLibrary::new(crate_defs())
}
