//! tile range: the start and end of each tile's run in the sorted pairs.

use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::common::{ShaderChecks, bind_group, compute_pipeline, layout, storage};
use super::indirect::PAIR_DISPATCH_OFFSET;
use super::library::{ShaderLibrary, wgsl_file};

pub struct TileRangePass {
    layout: BindGroupLayout,
    pipeline: ComputePipeline,
}

impl TileRangePass {
    pub fn new(device: &Device, library: &mut ShaderLibrary) -> Self {
        let layout = layout(
            device,
            "splat tile range",
            &[storage(0, true), storage(1, true), storage(2, false)],
        );
        let module = library.module(
            device,
            "splat tile range",
            wgsl_file!("tile_range.wgsl"),
            &[],
            ShaderChecks::All,
        );
        let pipeline = compute_pipeline(device, "splat tile range", &layout, &module, "tile_range");
        Self { layout, pipeline }
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
