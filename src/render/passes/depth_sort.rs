//! depth sort: the visible splats' slots sorted by view depth (the radix sort of
//! 32-bit keys over the top 24 bits of the frame's depth-key range, the values being
//! the slots), then their tile counts gathered in that order for the scan.
//!
//! Sorting splats by depth once and their (splat, tile) pairs by tile alone moves
//! less data than sorting every pair by a tile-and-depth key: at 1080p that was six
//! 8-bit passes over the pairs, now four over the visible splats and two over the
//! pairs.

use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::common::{ShaderChecks, bind_group, compute_pipeline, layout, storage};
use super::indirect::VISIBLE_DISPATCH_OFFSET;
use super::library::{ShaderLibrary, wgsl_file};

/// Bits of a depth key the sort orders by. A key is a positive float's bit pattern
/// (view distance, 31 bits); the preprocess records the smallest and largest it
/// wrote, and the sort orders by the top 24 bits of (key − smallest): three passes
/// instead of four. Exact while the frame's distances span less than 2^24 float steps
/// (two octaves, e.g. 5 to 20 m); beyond, splats whose distances agree to the span's
/// top 24 bits (about 1e-6 relative for a 1 : 1000 range) keep their input order.
pub const DEPTH_KEY_BITS: u32 = 24;

pub struct DepthSortPass {
    layout: BindGroupLayout,
    gather: ComputePipeline,
}

impl DepthSortPass {
    pub fn new(device: &Device, library: &mut ShaderLibrary) -> Self {
        let layout = layout(
            device,
            "splat depth order",
            &[
                storage(0, true),
                storage(1, true),
                storage(2, true),
                storage(3, false),
            ],
        );
        let module = library.module(
            device,
            "splat depth order",
            wgsl_file!("depth_sort.wgsl"),
            &[],
            ShaderChecks::All,
        );
        let gather = compute_pipeline(
            device,
            "splat depth order",
            &layout,
            &module,
            "gather_tile_counts",
        );
        Self { layout, gather }
    }

    /// `by_depth` are the depth sort's output values (slots, nearest first); their
    /// `tile_counts` are copied into `tile_offsets` in that order.
    pub fn bind_group(
        &self,
        device: &Device,
        counters: &Buffer,
        by_depth: wgpu::BufferBinding<'_>,
        tile_counts: &Buffer,
        tile_offsets: &Buffer,
    ) -> BindGroup {
        bind_group(
            device,
            "splat depth order",
            &self.layout,
            &[
                counters.as_entire_binding(),
                wgpu::BindingResource::Buffer(by_depth),
                tile_counts.as_entire_binding(),
                tile_offsets.as_entire_binding(),
            ],
        )
    }

    /// One thread per kept visible splat, sized on the GPU.
    pub fn encode_gather(
        &self,
        pass: &mut ComputePass<'_>,
        bind_group: &BindGroup,
        counters: &Buffer,
    ) {
        pass.set_pipeline(&self.gather);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups_indirect(counters, VISIBLE_DISPATCH_OFFSET);
    }
}
