//! tile split: each bin's sorted pairs become the lists of its 2×2 tiles.
//!
//! Pairs are made and sorted per bin of 2×2 tiles, which sorts about 0.6× the pairs
//! that one per tile would (BENCHMARKS.md), and the tile render still reads one list
//! per 8×8 tile: this pass writes those lists, front to back, into the sort's four
//! buffers (one per place of a tile in its bin), and each tile's range, and files each
//! tile by its pair count for the tile order.

use bevy::math::UVec2;
use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::common::{ShaderChecks, bind_group, storage, uniform};
use super::library::wgsl_file;

/// The bins (2×2 tiles) over a grid of `tiles`.
pub fn bins_for(tiles: UVec2) -> UVec2 {
    UVec2::new(tiles.x.div_ceil(2), tiles.y.div_ceil(2))
}

/// The four buffers of the tile lists, by a tile's place in its bin, (x & 1) + 2·(y & 1).
/// The first holds the bin pairs sorted by bin (the sort's values) until the split
/// rewrites it; the others are the sort's keys and scratch, free by then.
pub struct TileLists<'a>(pub [&'a Buffer; 4]);

/// Its loops run over a bin's range of sorted pairs and over constant counts; it
/// indexes workgroup words by thread, lists within the bin's range, the tile work by
/// class and by tile of the band.
pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("tile_split.wgsl"),
    checks: ShaderChecks::None,
};

pub struct TileSplitPass {
    layout: BindGroupLayout,
    pipeline: ComputePipeline,
}

impl TileSplitPass {
    pub fn new(builder: &mut dyn PipelineBuilder) -> Option<Self> {
        let layout = BindGroupLayoutDescriptor::new(
            "splat tile split",
            &[
                uniform(0, false),
                storage(1, true),
                storage(2, false),
                storage(3, false),
                storage(4, false),
                storage(5, false),
                storage(6, false),
                storage(7, false),
            ],
        );
        let pipeline = builder.kernel(&Kernel {
            label: "splat tile split",
            layout: &layout,
            shader: SHADER,
            entry_point: "tile_split",
            defs: &[],
        })?;
        Some(Self {
            layout: builder.layout(&layout),
            pipeline,
        })
    }

    /// `bin_ranges` are the tile range pass's runs of the sorted pairs per bin; every
    /// tile of the band gets its range in `tile_ranges` and its work class's place in
    /// `tile_work` (whose counts must be cleared).
    pub fn bind_group(
        &self,
        device: &Device,
        view_uniform: &Buffer,
        bin_ranges: &Buffer,
        lists: &TileLists<'_>,
        tile_ranges: &Buffer,
        tile_work: &Buffer,
    ) -> BindGroup {
        bind_group(
            device,
            "splat tile split",
            &self.layout,
            &[
                view_uniform.as_entire_binding(),
                bin_ranges.as_entire_binding(),
                lists.0[0].as_entire_binding(),
                lists.0[1].as_entire_binding(),
                lists.0[2].as_entire_binding(),
                lists.0[3].as_entire_binding(),
                tile_ranges.as_entire_binding(),
                tile_work.as_entire_binding(),
            ],
        )
    }

    /// One workgroup per bin of the band's `bins` grid.
    pub fn encode(&self, pass: &mut ComputePass<'_>, bind_group: &BindGroup, bins: UVec2) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(bins.x, bins.y, 1);
    }
}
