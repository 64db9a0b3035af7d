//! The compute passes of the splat pipeline, one module per pass with its WGSL beside
//! it under the same stem. In frame order, per band of a view:
//!
//! 1. `preprocess`: project every splat, evaluate its SH colour, count its tiles and
//!    write its depth key;
//! 2. `indirect`: turn the GPU's counts into dispatch arguments;
//! 3. depth sort: [`radix_sort`] of the visible splats by depth, then `gather`
//!    lists their pair counts in that order;
//! 4. [`scan`]: the counts become each splat's first pair slot;
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
//! shared constants); `library` composes the WGSL files with naga_oil, shared code
//! as `#import`ed modules (`common.wgsl` is `bevy_splat::common`) and variants as
//! shader defs. Passes know nothing of Bevy's ECS: they take wgpu buffers, so the
//! GPU tests can drive them on their own.

pub(crate) mod common;
pub(crate) mod composite;
#[cfg(test)]
mod contract;
pub(crate) mod depth_write;
pub(crate) mod duplicate;
pub(crate) mod fullscreen;
pub(crate) mod gather;
pub(crate) mod indirect;
pub(crate) mod library;
pub(crate) mod pick;
pub(crate) mod preprocess;
pub mod radix_sort;
pub mod scan;
pub(crate) mod tile_order;
pub(crate) mod tile_range;
pub(crate) mod tile_render;
pub(crate) mod tile_split;

use bevy::ecs::resource::Resource;

/// Every pipeline of the splat passes, built once per render device.
#[derive(Resource)]
pub struct SplatPipelines {
    pub(crate) preprocess: preprocess::PreprocessPass,
    pub(crate) indirect: indirect::IndirectPass,
    pub(crate) gather: gather::GatherPass,
    pub(crate) scan: scan::PrefixScan,
    pub(crate) duplicate: duplicate::DuplicatePass,
    /// Sorts 32-bit keys: the visible splats by depth, pairs by tile, tiles by work.
    pub(crate) sort: radix_sort::RadixSort,
    pub(crate) tile_range: tile_range::TileRangePass,
    pub(crate) tile_split: tile_split::TileSplitPass,
    pub(crate) tile_order: tile_order::TileOrderPass,
    pub(crate) tile_render: tile_render::TileRenderPass,
    pub(crate) pick: pick::PickPass,
    pub(crate) composite: composite::CompositePass,
    pub(crate) depth_write: depth_write::DepthWritePass,
}

impl SplatPipelines {
    /// Every pipeline, one pass at a time: between passes it gives way to the
    /// executor, so on a single-threaded one (the web) frames run in between. `sort`:
    /// the radix sort's algorithm, [`radix_sort::SortAlgorithm::for_adapter`] of the
    /// device's adapter; `shaders`: the app's splat shaders, each a variant of the
    /// preprocess.
    pub async fn build(
        device: &wgpu::Device,
        sort: radix_sort::SortAlgorithm,
        shaders: &[crate::shader::SplatShaderSource],
    ) -> Self {
        use bevy::tasks::futures_lite::future::yield_now;
        let mut library = shader_library();
        let library = &mut library;
        let mut preprocess = preprocess::PreprocessPass::new(device, library);
        preprocess.add_shaders(device, library, shaders).await;
        yield_now().await;
        let indirect = indirect::IndirectPass::new(device, library);
        let gather = gather::GatherPass::new(device, library);
        let scan = scan::PrefixScan::new(device);
        let duplicate = duplicate::DuplicatePass::new(device, library);
        yield_now().await;
        let sort = radix_sort::RadixSort::with_key(device, radix_sort::SortKey::U32, sort);
        yield_now().await;
        let tile_range = tile_range::TileRangePass::new(device, library);
        let tile_split = tile_split::TileSplitPass::new(device, library);
        let tile_order = tile_order::TileOrderPass::new(device, library);
        yield_now().await;
        let tile_render = tile_render::TileRenderPass::new(device, library);
        yield_now().await;
        let pick = pick::PickPass::new(device, library);
        yield_now().await;
        let composite = composite::CompositePass::new(device, library);
        let depth_write = depth_write::DepthWritePass::new(device, library);
        Self {
            preprocess,
            indirect,
            gather,
            scan,
            duplicate,
            sort,
            tile_range,
            tile_split,
            tile_order,
            tile_render,
            pick,
            composite,
            depth_write,
        }
    }
}

/// A `library::ShaderLibrary` with the crate's defs: the constants the host and the
/// WGSL share, from their one definition on the Rust side.
pub(crate) fn shader_library() -> library::ShaderLibrary {
    use library::ShaderDef;
    let sizes = [
        ShaderDef::UInt("TILE_SIZE", common::TILE_SIZE),
        ShaderDef::UInt("WORK_CLASSES", common::WORK_CLASSES),
        ShaderDef::UInt("WORKGROUP_SIZE", common::WORKGROUP_SIZE),
    ];
    let defs = sizes
        .into_iter()
        .chain(indirect::counter_defs())
        .chain(preprocess::shared_defs())
        .chain(radix_sort::state::shared_defs())
        .chain(scan::shared_defs())
        .collect();
    library::ShaderLibrary::new(defs)
}
