//! Stable LSD radix sort of (key, value) pairs on the GPU, for a pair count that only
//! the GPU knows.
//!
//! A key is 64 bits stored as `vec2<u32>` (x = low word, y = high word) or, for a
//! sort built with [`SortKey::U32`], one `u32`; a value is a `u32`. The sort takes
//! [`RADIX_BITS`] bits per pass, as many passes as the caller's `key_bits` needs, low
//! word first. Every pass scatters blocks of [`SORT_BLOCK`] pairs: each pair goes to
//! the first output slot of its (digit, block) plus its rank among the earlier pairs
//! of its block with the same digit, so the pass is stable. The rank is found by
//! subgroup ballots where the device has subgroups, else by per-digit thread masks in
//! workgroup memory ([`SortRanking`]). The block is first put in
//! that order in workgroup memory, so that neighbouring threads write neighbouring
//! slots. The [`SortAlgorithm`] says how a block learns its first slots:
//!
//! - [`SortAlgorithm::Classic`], three steps per pass: `count` stores every block's
//!   digit histogram digit-major, an exclusive [prefix scan](super::scan) of them gives
//!   every (digit, block) its first slot, and `scatter` reads it.
//! - [`SortAlgorithm::OneSweep`]: one `histogram` kernel counts every pass's digits in
//!   one read of the keys, then each pass is a single `scatter` whose blocks add up
//!   the counts the blocks before them publish (decoupled look-back). Fewer reads and
//!   dispatches, for GPUs that keep running a workgroup once it has started, and for
//!   sorts of up to [`ONESWEEP_LARGEST_SORT`] pairs (a sort's buffers pick, see
//!   [`RadixSort::algorithm_for`]). No wait is unbounded: a block that waits too long
//!   for an earlier one counts that block's digits from its keys itself ([`LookBack`]).
//!
//! A setup kernel turns n into dispatch arguments first (2-D grids, so no dispatch
//! exceeds the per-dimension workgroup limit).
//!
//! No kernel loops without bound, so no input or GPU can hang one. The one-sweep
//! look-back once waited for each earlier block as long as it took, and on lavapipe
//! that sort went wrong now and then (wrong keys, or a crash). The cause, with the
//! evidence, is at the top of `look_back.wgsl`: not the memory order of the
//! look-back words, and not a wait that never ended, but lavapipe's silent budget of
//! 65,535 loop iterations per invocation, which a block waiting on a descheduled CPU
//! thread spent. Each wait now ends after [`LOOK_BACK_SPINS`] reads, and the waiting
//! block counts the late block's digits from its keys itself ([`LookBack`]), which
//! keeps the sort exact; `tests/gpu_sort.rs` checks thousands of key sets against a
//! CPU stable sort, and the fallback alone (`LookBack::CountEveryBlock`).
//!
//! Limit: `keys[i]` is bound whole, so `capacity` keys (8 or 4 bytes each) must fit
//! `max_storage_buffer_binding_size` (128 MiB on lavapipe: 16M pairs; 2 GiB on big
//! GPUs); the caller chunks above it.
//!
//! The Rust side, by file (each uses only those before it): `state` what the host and
//! the WGSL share (the sizes, and the state, pass parameters and one-sweep status as
//! `#[repr(C)]` structs); `options` what a sort can be asked for ([`SortKey`],
//! [`SortValues`], [`KeyRange`], [`SortAlgorithm`], [`SortRanking`], [`LookBack`]);
//! `kernels`
//! [`RadixSort`], its pipelines and the shader defs their modules are composed with;
//! `buffers` [`SortBuffers`] and [`SortStorage`]; `classic` and `onesweep` each
//! algorithm's recorded steps; and this module the public API, with the recording of
//! a sort ([`RadixSort::encode`]).
//! The WGSL, composed through the crate's `ShaderLibrary`: `state.wgsl`
//! (`bevy_splat::radix_sort::state`, the twins of `state`'s structs), `keys.wgsl`
//! (`…::keys`, the bindings a pass reads and a key's digits), `scatter.wgsl`
//! (`…::scatter`, the ranking and the scatter of a block), `classic_slots.wgsl` and
//! `look_back.wgsl` (`…::classic_slots` and `…::look_back`, where a block's digits
//! start, which the scatter imports by the shader def `SORT_ONESWEEP`), and the entry
//! files `setup.wgsl`, `classic.wgsl` (count, scatter) and `onesweep.wgsl`
//! (histogram, scatter).

mod buffers;
mod classic;
pub(crate) mod kernels;
mod onesweep;
mod options;
pub(crate) mod state;

pub use buffers::{STORAGE_OFFSET_ALIGNMENT, SortBuffers, SortStorage};
pub use kernels::RadixSort;
pub use options::{
    KeyRange, LOOK_BACK_SPINS, LookBack, MAX_LOOK_BACK_SPINS, ONESWEEP_LARGEST_SORT, SortAlgorithm,
    SortKey, SortRanking, SortValues,
};
pub use state::{RADIX_BITS, SORT_BLOCK, SORT_ITEMS_PER_THREAD, SORT_WORKGROUP_SIZE};

impl RadixSort {
    /// Records the sort into an open compute pass: sorts pairs `0..n` by the low
    /// `key_bits` bits of the key (1..=64, at most 32 for `u32` keys; higher bits are
    /// ignored), stable (equal keys
    /// keep their input order). Runs `ceil(key_bits / 8)` passes and returns the index
    /// (0 or 1) of the `keys`/`values` buffers that hold the sorted pairs. The other
    /// buffers' contents are clobbered; slots past n are not written.
    /// `key_bits == 0` records nothing and returns 0.
    pub fn encode(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        buffers: &SortBuffers,
        key_bits: u32,
    ) -> usize {
        self.encode_inner(pass, buffers, key_bits, None, false)
    }

    /// [`RadixSort::encode`] for a sort that a kernel before it prepared
    /// ([`preparing_defs`](kernels::preparing_defs)): the same dispatches but the setup. A classic
    /// sort (whose [`SortBuffers::preparation`] is `None`) sets itself up as ever.
    pub(crate) fn encode_prepared(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        buffers: &SortBuffers,
        key_bits: u32,
    ) -> usize {
        self.encode_inner(
            pass,
            buffers,
            key_bits,
            None,
            buffers.preparation().is_some(),
        )
    }

    /// [`RadixSort::encode`] with timestamps for profiling: query 0 before the sort,
    /// then for every pass `p` queries `3p + 1`, `3p + 2`, `3p + 3` after its count,
    /// scan and scatter steps (25 queries for 64 bits). A one-sweep sort has no scan
    /// and counts every pass in its first: its histogram is pass 0's count. Needs
    /// `Features::TIMESTAMP_QUERY_INSIDE_PASSES`.
    pub fn encode_profiled(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        buffers: &SortBuffers,
        key_bits: u32,
        timestamps: &wgpu::QuerySet,
    ) -> usize {
        self.encode_inner(pass, buffers, key_bits, Some(timestamps), false)
    }

    /// Which of the `keys`/`values` buffers (0 or 1) a sort of `key_bits` bits leaves
    /// its result in, as [`RadixSort::encode`] returns.
    pub fn output_index(key_bits: u32) -> usize {
        (key_bits.min(64).div_ceil(RADIX_BITS) % 2) as usize
    }

    fn encode_inner(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        buffers: &SortBuffers,
        key_bits: u32,
        timestamps: Option<&wgpu::QuerySet>,
        prepared: bool,
    ) -> usize {
        let key_bits = key_bits.min(8 * self.key.bytes() as u32);
        if key_bits == 0 {
            return 0;
        }
        pass.push_debug_group("radix sort");
        let stamp = |pass: &mut wgpu::ComputePass<'_>, index: u32| {
            if let Some(queries) = timestamps {
                pass.write_timestamp(queries, index);
            }
        };
        stamp(pass, 0);
        match (&buffers.hist_scan, &self.onesweep) {
            (Some(hist_scan), _) => classic::encode(
                &self.classic,
                &self.scan,
                pass,
                (buffers, hist_scan),
                key_bits,
                &stamp,
            ),
            (None, Some(onesweep)) => {
                onesweep::encode(onesweep, pass, (buffers, prepared), key_bits, &stamp)
            }
            (None, None) => panic!("one-sweep sort buffers recorded by a classic sort"),
        }
        pass.pop_debug_group();
        Self::output_index(key_bits)
    }
}
