//! tile range: the start and end of each tile's run in the sorted pairs.

use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::common::{ShaderChecks, bind_group, storage};
use super::indirect::PAIR_DISPATCH_OFFSET;
use super::library::wgsl_file;

pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("tile_range.wgsl"),
    checks: ShaderChecks::All,
};

pub struct TileRangePass {
    layout: BindGroupLayout,
    pipeline: ComputePipeline,
}

impl TileRangePass {
    pub fn new(builder: &mut dyn PipelineBuilder) -> Option<Self> {
        let layout = BindGroupLayoutDescriptor::new(
            "splat tile range",
            &[storage(0, true), storage(1, true), storage(2, false)],
        );
        let pipeline = builder.kernel(&Kernel {
            label: "splat tile range",
            layout: &layout,
            shader: SHADER,
            entry_point: "tile_range",
            defs: &[],
        })?;
        Some(Self {
            layout: builder.layout(&layout),
            pipeline,
        })
    }

    /// `sorted_keys` are the sort's output; `ranges` must be cleared to zero each frame.
    pub fn bind_group(
        &self,
        device: &Device,
        sorted_keys: &Buffer,
        counters: &Buffer,
        ranges: &Buffer,
    ) -> BindGroup {
        bind_group(
            device,
            "splat tile range",
            &self.layout,
            &[
                sorted_keys.as_entire_binding(),
                counters.as_entire_binding(),
                ranges.as_entire_binding(),
            ],
        )
    }

    /// One thread per kept pair, sized on the GPU.
    pub fn encode(&self, pass: &mut ComputePass<'_>, bind_group: &BindGroup, counters: &Buffer) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups_indirect(counters, PAIR_DISPATCH_OFFSET);
    }
}
