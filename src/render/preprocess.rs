//! preprocess: projects each cloud's splats into the view, culls them, evaluates
//! their colour and counts the tiles each touches (compacted output).

use bytemuck::{Pod, Zeroable};
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::gpu_util::{
    bind_group, compute_pipeline, grid_for, layout, shader_module, slice, storage, uniform,
};

/// Per-cloud parameters of one preprocess dispatch (`CloudUniform` in WGSL).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct CloudUniform {
    /// Camera space (x right, y down, z forward) from the cloud's own frame.
    pub cam_from_cloud: [[f32; 4]; 4],
    /// Camera centre in the cloud's frame (w unused).
    pub camera_in_cloud: [f32; 4],
    pub splat_count: u32,
    pub sh_degree: u32,
    pub sh_stride: u32,
    pub grid_width: u32,
}

/// Uniform offsets must be multiples of this on every adapter.
pub const CLOUD_UNIFORM_STRIDE: u64 = 256;

pub struct PreprocessPass {
    pub layout: BindGroupLayout,
    pipeline: ComputePipeline,
}

impl PreprocessPass {
    pub fn new(device: &Device) -> Self {
        let layout = layout(
            device,
            "splat preprocess",
            &[
                uniform(0, false),
                uniform(1, true),
                storage(2, true),
                storage(3, true),
                storage(4, false),
                storage(5, false),
                storage(6, false),
            ],
        );
        let module = shader_module(
            device,
            "splat preprocess",
            include_str!("shaders/preprocess.wgsl"),
        );
        let pipeline = compute_pipeline(device, "splat preprocess", &layout, &module, "preprocess");
        Self { layout, pipeline }
    }

    /// Binds one chunk of a cloud's splats to the view's outputs.
    pub fn bind_group(
        &self,
        device: &Device,
        view_uniform: &Buffer,
        cloud_uniforms: &Buffer,
        geometry: &Buffer,
        sh: &Buffer,
        projected: &Buffer,
        tile_counts: &Buffer,
        counters: &Buffer,
    ) -> BindGroup {
        bind_group(
            device,
            "splat preprocess",
            &self.layout,
            &[
                view_uniform.as_entire_binding(),
                slice(cloud_uniforms, 0, size_of::<CloudUniform>() as u64),
                geometry.as_entire_binding(),
                sh.as_entire_binding(),
                projected.as_entire_binding(),
                tile_counts.as_entire_binding(),
                slice(counters, 0, 4),
            ],
        )
    }

    /// The x width (in threads) of the grid that `splat_count` threads need.
    pub fn grid_width(splat_count: u32) -> u32 {
        grid_for(splat_count).0 * super::gpu_util::WORKGROUP_SIZE
    }

    /// Records one chunk: `uniform_offset` selects its `CloudUniform`.
    pub fn encode(
        &self,
        pass: &mut ComputePass<'_>,
        bind_group: &BindGroup,
        uniform_offset: u32,
        splat_count: u32,
    ) {
        let (x, y) = grid_for(splat_count);
        if x == 0 {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, bind_group, &[uniform_offset]);
        pass.dispatch_workgroups(x, y, 1);
    }
}
