//! The steps a classic sort records: the setup, then per pass a count, a prefix scan
//! of the block histograms and a scatter. Its kernels are `classic.wgsl` and
//! `classic_slots.wgsl`; its block histograms and their scan are made with its
//! buffers (`buffers.rs`).

use super::buffers::SortBuffers;
use super::kernels::SortKernels;
use super::state::{RADIX_BITS, SCATTER_GRID_OFFSET, params_offset};
use crate::render::passes::scan::{PrefixScan, ScanBuffers};

/// Records a classic sort of `key_bits` (at least 1) bits: the setup and the scan's,
/// then per pass the count, the scan of the block histograms and the scatter, with
/// the timestamps of `RadixSort::encode_profiled` (`stamp`).
pub(super) fn encode(
    kernels: &SortKernels,
    scan: &PrefixScan,
    pass: &mut wgpu::ComputePass<'_>,
    (buffers, hist_scan): (&SortBuffers, &ScanBuffers),
    key_bits: u32,
    stamp: &dyn Fn(&mut wgpu::ComputePass<'_>, u32),
) {
    let passes = key_bits.div_ceil(RADIX_BITS);
    pass.set_pipeline(&kernels.setup);
    pass.set_bind_group(0, &buffers.setup_group, &[]);
    pass.dispatch_workgroups(1, 1, 1);
    scan.encode_setup(pass, hist_scan);
    for p in 0..passes {
        let src = (p % 2) as usize;
        let params = [params_offset(p, key_bits)];
        pass.set_pipeline(&kernels.count);
        pass.set_bind_group(0, &buffers.count_groups[src], &params);
        pass.dispatch_workgroups_indirect(&buffers.state, SCATTER_GRID_OFFSET);
        stamp(pass, 3 * p + 1);
        scan.encode_levels(pass, hist_scan);
        stamp(pass, 3 * p + 2);
        pass.set_pipeline(&kernels.scatter);
        pass.set_bind_group(0, &buffers.scatter_groups[src], &params);
        pass.dispatch_workgroups_indirect(&buffers.state, SCATTER_GRID_OFFSET);
        stamp(pass, 3 * p + 3);
    }
}
