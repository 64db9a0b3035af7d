//! The GPU radix sort and prefix scan the splat passes are built on, for any wgpu
//! program: both work on plain [`wgpu`] buffers (the wgpu Bevy renders with) and
//! know nothing of Bevy's ECS.
//!
//! - [`RadixSort`]: a stable LSD sort of (key, value) pairs, 32- or 64-bit keys
//!   ([`SortKey`]) and `u32` values, over a pair count that only the GPU knows (it is
//!   read from a buffer when the sort runs). [`SortBuffers`] holds one sort's working
//!   buffers, its own or the caller's ([`SortStorage`]); [`SortAlgorithm`] picks
//!   between the classic count–scan–scatter passes and a one-sweep sort with
//!   decoupled look-back ([`LookBack`]) where the GPU suits it
//!   ([`SortAlgorithm::for_adapter`]); [`SortRanking`] how a block ranks its pairs,
//!   by subgroup ballots where the device has subgroups ([`SortRanking::for_device`]).
//! - [`PrefixScan`]: an exclusive prefix sum of `u32` values in place, with its
//!   buffers in [`ScanBuffers`]; the classic sort's digit offsets come from it.
//!
//! Build the pipelines once per device, the buffers once per use, then record into
//! an open compute pass:
//!
//! ```no_run
//! use bevy_splat::gpu_sort::{RadixSort, SortAlgorithm, SortBuffers, SortKey};
//!
//! # fn sort(device: &wgpu::Device, queue: &wgpu::Queue, count: &wgpu::Buffer) {
//! let sort = RadixSort::with_key(device, SortKey::U32, SortAlgorithm::Classic);
//! // Up to 1M pairs; n is the u32 at byte 0 of `count`.
//! let buffers = SortBuffers::new(device, &sort, 1 << 20, count, 0);
//! // ... fill buffers.keys[0] and buffers.values[0] ...
//! let mut encoder = device.create_command_encoder(&Default::default());
//! let sorted = {
//!     let mut pass = encoder.begin_compute_pass(&Default::default());
//!     sort.encode(&mut pass, &buffers, 32)
//! };
//! queue.submit([encoder.finish()]);
//! // The sorted pairs are in buffers.keys[sorted] and buffers.values[sorted].
//! # }
//! ```
//!
//! `tests/gpu_sort.rs` checks both against CPU references and benchmarks them.

pub use crate::render::passes::radix_sort::{
    KeyRange, LOOK_BACK_SPINS, LookBack, MAX_LOOK_BACK_SPINS, ONESWEEP_LARGEST_SORT, RADIX_BITS,
    RadixSort, SORT_BLOCK, SORT_ITEMS_PER_THREAD, SORT_WORKGROUP_SIZE, STORAGE_OFFSET_ALIGNMENT,
    SortAlgorithm, SortBuffers, SortKey, SortRanking, SortStorage, SortValues,
};
pub use crate::render::passes::scan::{
    PrefixScan, SCAN_BLOCK, SCAN_ITEMS_PER_THREAD, SCAN_WORKGROUP_SIZE, ScanBuffers,
};
