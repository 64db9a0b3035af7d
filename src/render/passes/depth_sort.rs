//! depth sort: the visible splats' slots sorted by view depth (the radix sort over a
//! 31-bit key), then their tile counts gathered in that order for the scan.
//!
//! Sorting splats by depth once and their (splat, tile) pairs by tile alone moves
//! less data than sorting every pair by a tile-and-depth key: at 1080p that was six
//! 8-bit passes over the pairs, now four over the visible splats and two over the
//! pairs.

use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::common::{bind_group, compute_pipeline, layout, shader_module, storage};
use super::indirect::VISIBLE_DISPATCH_OFFSET;

/// Bits of a depth key: a positive float's bit pattern (the sign bit is always 0).
pub const DEPTH_KEY_BITS: u32 = 31;

pub struct DepthSortPass {
    layout: BindGroupLayout,
    gather: ComputePipeline,
}

impl DepthSortPass {
    pub fn new(device: &Device) -> Self {
        let layout = layout(
            device,
            "splat depth order",
            &[storage(0, true), storage(1, true), storage(2, false)],
        );
        let module = shader_module(device, "splat depth order", include_str!("depth_sort.wgsl"));
        let gather = compute_pipeline(
            device,
            "splat depth order",
            &layout,
            &module,
            "gather_tile_counts",
        );
        Self { layout, gather }
    }

    /// `sorted_keys` are the depth sort's output keys, (depth, tile count) nearest
    /// first; their tile counts are copied into `tile_offsets` in that order.
    pub fn bind_group(
        &self,
        device: &Device,
        counters: &Buffer,
        sorted_keys: &Buffer,
        tile_offsets: &Buffer,
    ) -> BindGroup {
        bind_group(
            device,
            "splat depth order",
            &self.layout,
            &[
                counters.as_entire_binding(),
                sorted_keys.as_entire_binding(),
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
