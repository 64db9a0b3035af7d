//! The view's counters buffer and the tiny kernels that turn its GPU-only counts into
//! indirect dispatch arguments.

use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::common::{bind_group, compute_pipeline, layout, shader_module, storage, uniform};

/// Byte offsets of the counters buffer (see `indirect.wgsl`).
pub const PAIRS_NEEDED_OFFSET: u64 = 4;
pub const PAIRS_KEPT_OFFSET: u64 = 8;
pub const VISIBLE_KEPT_OFFSET: u64 = 12;
pub const VISIBLE_DISPATCH_OFFSET: u64 = 16;
pub const PAIR_DISPATCH_OFFSET: u64 = 32;
/// The largest depth key the preprocess wrote, then the complement of the smallest.
pub const DEPTH_KEY_RANGE_OFFSET: u64 = 48;
/// Size of the counters buffer.
pub const COUNTERS_SIZE: u64 = 64;

pub struct IndirectPass {
    layout: BindGroupLayout,
    visible: ComputePipeline,
    pairs: ComputePipeline,
}

impl IndirectPass {
    pub fn new(device: &Device) -> Self {
        let layout = layout(
            device,
            "splat indirect args",
            &[storage(0, false), uniform(1, false)],
        );
        let module = shader_module(device, "splat indirect args", include_str!("indirect.wgsl"));
        let visible = compute_pipeline(
            device,
            "splat visible dispatch",
            &layout,
            &module,
            "visible_dispatch",
        );
        let pairs = compute_pipeline(
            device,
            "splat pair dispatch",
            &layout,
            &module,
            "pair_dispatch",
        );
        Self {
            layout,
            visible,
            pairs,
        }
    }

    /// `capacities` is a uniform of two u32: the pair capacity, the splat capacity.
    pub fn bind_group(&self, device: &Device, counters: &Buffer, capacities: &Buffer) -> BindGroup {
        bind_group(
            device,
            "splat indirect args",
            &self.layout,
            &[counters.as_entire_binding(), capacities.as_entire_binding()],
        )
    }

    /// After preprocess: clamps the visible count to the capacity, and the grid over
    /// the kept splats.
    pub fn encode_visible(&self, pass: &mut ComputePass<'_>, bind_group: &BindGroup) {
        pass.set_pipeline(&self.visible);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// After the scan: clamps the pair count to the capacity, and the grid over pairs.
    pub fn encode_pairs(&self, pass: &mut ComputePass<'_>, bind_group: &BindGroup) {
        pass.set_pipeline(&self.pairs);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
}
