//! The steps a one-sweep sort records: the setup, one histogram of every pass, then
//! one scatter per pass. Its kernels are `onesweep.wgsl` and, for the look-back,
//! `look_back.wgsl`; its status buffer is made with its buffers (`buffers.rs`), and
//! its bounds and [`LookBack`](super::LookBack) are in `options.rs`.

use super::buffers::SortBuffers;
use super::kernels::SortKernels;
use super::state::{HISTOGRAM_GRID_OFFSET, RADIX_BITS, SCATTER_GRID_OFFSET, params_offset};

/// Records a one-sweep sort of `key_bits` (at least 1) bits: the setup (unless a
/// kernel before it `prepared` the sort), the histogram of every pass (bound with the
/// last pass's parameters: they give the key width), then one scatter per pass, with
/// the timestamps of `RadixSort::encode_profiled` (`stamp`).
pub(super) fn encode(
    kernels: &SortKernels,
    pass: &mut wgpu::ComputePass<'_>,
    (buffers, prepared): (&SortBuffers, bool),
    key_bits: u32,
    stamp: &dyn Fn(&mut wgpu::ComputePass<'_>, u32),
) {
    let passes = key_bits.div_ceil(RADIX_BITS);
    if !prepared {
        pass.set_pipeline(&kernels.setup);
        pass.set_bind_group(0, &buffers.setup_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    pass.set_pipeline(&kernels.count);
    pass.set_bind_group(
        0,
        &buffers.count_groups[0],
        &[params_offset(passes - 1, key_bits)],
    );
    pass.dispatch_workgroups_indirect(&buffers.state, HISTOGRAM_GRID_OFFSET);
    for p in 0..passes {
        let src = (p % 2) as usize;
        stamp(pass, 3 * p + 1);
        stamp(pass, 3 * p + 2);
        pass.set_pipeline(&kernels.scatter);
        pass.set_bind_group(
            0,
            &buffers.scatter_groups[src],
            &[params_offset(p, key_bits)],
        );
        pass.dispatch_workgroups_indirect(&buffers.state, SCATTER_GRID_OFFSET);
        stamp(pass, 3 * p + 3);
    }
}
