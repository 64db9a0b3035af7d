//! tile range: the start and end of each bin's run in the sorted pairs.

use bevy::math::UVec2;
use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::common::{ShaderChecks, WORKGROUP_SIZE, bind_group, storage, uniform};
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
            &[
                uniform(0, false),
                storage(1, true),
                storage(2, true),
                storage(3, false),
            ],
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

    /// `sorted_keys` are the sort's output; every bin of the band gets its run in
    /// `ranges`.
    pub fn bind_group(
        &self,
        device: &Device,
        view_uniform: &Buffer,
        sorted_keys: &Buffer,
        counters: &Buffer,
        ranges: &Buffer,
    ) -> BindGroup {
        bind_group(
            device,
            "splat tile range",
            &self.layout,
            &[
                view_uniform.as_entire_binding(),
                sorted_keys.as_entire_binding(),
                counters.as_entire_binding(),
                ranges.as_entire_binding(),
            ],
        )
    }

    /// One thread per bin of the band's `bins` grid.
    pub fn encode(&self, pass: &mut ComputePass<'_>, bind_group: &BindGroup, bins: UVec2) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(bins.element_product().div_ceil(WORKGROUP_SIZE), 1, 1);
    }
}
