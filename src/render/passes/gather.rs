//! gather: once the depth sort (the radix sort of the visible splats' depth keys,
//! over the top [`DEPTH_KEY_BITS`] bits of the frame's depth-key range, the values
//! being the slots) has run, the visible splats' pair counts listed in depth order,
//! for the scan.
//!
//! Sorting splats by depth once and their (splat, tile) pairs by tile alone moves
//! less data than sorting every pair by a tile-and-depth key: at 1080p that was six
//! 8-bit passes over the pairs, now four over the visible splats and two over the
//! pairs.

use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::common::{ShaderChecks, bind_group, storage};
use super::indirect::VISIBLE_DISPATCH_OFFSET;
use super::library::wgsl_file;
#[cfg(doc)]
use super::preprocess::DEPTH_KEY_BITS;

pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("gather.wgsl"),
    checks: ShaderChecks::All,
};

pub struct GatherPass {
    layout: BindGroupLayout,
    gather: ComputePipeline,
}

impl GatherPass {
    pub fn new(builder: &mut dyn PipelineBuilder) -> Option<Self> {
        let layout = BindGroupLayoutDescriptor::new(
            "splat depth order",
            &[
                storage(0, true),
                storage(1, true),
                storage(2, true),
                storage(3, false),
            ],
        );
        let gather = builder.kernel(&Kernel {
            label: "splat depth order",
            layout: &layout,
            shader: SHADER,
            entry_point: "gather_pair_counts",
            defs: &[],
        })?;
        Some(Self {
            layout: builder.layout(&layout),
            gather,
        })
    }

    /// `by_depth` are the depth sort's output values (slots, nearest first); their
    /// `pair_counts` are copied into `first_pair_slots` in that order.
    pub fn bind_group(
        &self,
        device: &Device,
        counters: &Buffer,
        by_depth: wgpu::BufferBinding<'_>,
        pair_counts: &Buffer,
        first_pair_slots: &Buffer,
    ) -> BindGroup {
        bind_group(
            device,
            "splat depth order",
            &self.layout,
            &[
                counters.as_entire_binding(),
                wgpu::BindingResource::Buffer(by_depth),
                pair_counts.as_entire_binding(),
                first_pair_slots.as_entire_binding(),
            ],
        )
    }

    /// One thread per kept visible splat, sized on the GPU.
    pub fn encode(&self, pass: &mut ComputePass<'_>, bind_group: &BindGroup, counters: &Buffer) {
        pass.set_pipeline(&self.gather);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups_indirect(counters, VISIBLE_DISPATCH_OFFSET);
    }
}
