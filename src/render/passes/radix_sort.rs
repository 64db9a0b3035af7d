//! Stable LSD radix sort of (key, value) pairs on the GPU, for a pair count that only
//! the GPU knows.
//!
//! A key is 64 bits stored as `vec2<u32>` (x = low word, y = high word) or, for a
//! sort built with [`SortKey::U32`], one `u32`; a value is a `u32`. The sort takes
//! [`RADIX_BITS`] bits per pass, as many passes as the caller's `key_bits` needs, low
//! word first. Every pass scatters blocks of [`SORT_BLOCK`] pairs: each pair goes to
//! the first output slot of its (digit, block) plus its rank among the earlier pairs
//! of its block with the same digit (found with per-digit thread masks in workgroup
//! memory, no subgroup operations), so the pass is stable. The block is first put in
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
//! evidence, is at the top of `radix_sort_onesweep.wgsl`: not the memory order of the
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

use std::num::NonZeroU64;

use wgpu::util::DeviceExt;

use super::common::{
    ShaderChecks, buffer_entry, compute_pipeline, standalone_shader_module, storage, word_binding,
};
use super::scan::{PrefixScan, ScanBuffers};

/// Threads per workgroup of the count and scatter kernels.
pub const SORT_WORKGROUP_SIZE: u32 = 256;
/// Pairs per thread of the count and scatter kernels.
pub const SORT_ITEMS_PER_THREAD: u32 = 8;
/// Pairs handled by one workgroup.
pub const SORT_BLOCK: u32 = SORT_WORKGROUP_SIZE * SORT_ITEMS_PER_THREAD;
/// The keys a sort takes: 64 bits as `vec2<u32>` (low word first), or one `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    U64,
    U32,
}

impl SortKey {
    /// Bytes of one key.
    pub const fn bytes(self) -> u64 {
        match self {
            SortKey::U64 => 8,
            SortKey::U32 => 4,
        }
    }

    /// The WGSL the kernels are compiled with for this key type.
    fn wgsl(self) -> &'static str {
        match self {
            SortKey::U64 => {
                "alias SortKey = vec2<u32>;
                 const KEY_WORDS: u32 = 2u;
                 fn key_word(key: SortKey, word: u32) -> u32 { return select(key.x, key.y, word != 0u); }
                 fn store_key_word(index: u32, word: u32, value: u32) {
                     if word == 0u { keys_out[index].x = value; } else { keys_out[index].y = value; }
                 }
"
            }
            SortKey::U32 => {
                "alias SortKey = u32;
                 const KEY_WORDS: u32 = 1u;
                 fn key_word(key: SortKey, word: u32) -> u32 { return key; }
                 fn store_key_word(index: u32, word: u32, value: u32) { keys_out[index] = value; }
"
            }
        }
    }
}
/// Where a sort's values come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortValues {
    /// The caller fills `values[0]`.
    Given,
    /// Each pair's value is its index in the input (`values[0]` is neither read nor
    /// needed): the sorted values say where each sorted key came from.
    InputIndex,
}

/// How the blocks of a pass learn where their digits start (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortAlgorithm {
    /// Count, scan, scatter per pass: runs on any GPU.
    Classic,
    /// One histogram, then one scatter per pass with decoupled look-back: a block
    /// waits for the blocks that started before it, which is fast where the GPU keeps
    /// running a started workgroup while another waits. Where it does not, a block
    /// that waited [`LOOK_BACK_SPINS`] reads counts the late block's keys itself
    /// ([`LookBack`]): slower, still exact, never a hang. A sort that prefers it still
    /// runs the classic steps above [`ONESWEEP_LARGEST_SORT`] pairs.
    OneSweep,
}

impl SortAlgorithm {
    /// [`Self::OneSweep`] on NVIDIA and AMD GPUs through a native API, where it is the
    /// faster and a started workgroup keeps running; [`Self::Classic`] elsewhere:
    /// browsers (WebGPU promises no progress between workgroups), Apple and mobile
    /// GPUs, and CPU adapters, whose threads a busy machine shares between many
    /// workgroups that would wait on one another. The one-sweep sort is exact on all
    /// of them (its waits are bounded, [`LookBack`]); where a started workgroup may
    /// stall, it would only be slower.
    pub fn for_adapter(info: &wgpu::AdapterInfo) -> Self {
        const NVIDIA: u32 = 0x10de;
        const AMD: u32 = 0x1002;
        let native = matches!(
            info.backend,
            wgpu::Backend::Vulkan | wgpu::Backend::Dx12 | wgpu::Backend::Metal
        );
        let gpu = matches!(
            info.device_type,
            wgpu::DeviceType::DiscreteGpu | wgpu::DeviceType::IntegratedGpu
        );
        if native && gpu && (info.vendor == NVIDIA || info.vendor == AMD) {
            Self::OneSweep
        } else {
            Self::Classic
        }
    }
}

/// How a block of the one-sweep sort learns the digit counts of the blocks before it
/// (see `radix_sort_onesweep.wgsl`). Either way its sums are exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookBack {
    /// Reads the counts the earlier blocks publish; one that it finds unpublished
    /// `spins + 1` times in a row it counts from its keys instead (at most
    /// [`MAX_LOOK_BACK_SPINS`], so that every look-back's bound fits in 32 bits).
    /// [`LookBack::DEFAULT`] waits [`LOOK_BACK_SPINS`].
    Wait { spins: u32 },
    /// Counts every earlier block from its keys and reads nothing they publish, so
    /// that no block ever waits for another: the fallback for every block, for tests.
    /// Each block reads all the keys before it, so only for small sorts.
    CountEveryBlock,
}

impl LookBack {
    /// The look-back of sorts built without one: [`LookBack::Wait`] for
    /// [`LOOK_BACK_SPINS`].
    pub const DEFAULT: Self = Self::Wait {
        spins: LOOK_BACK_SPINS,
    };

    /// The kernels' `LOOK_BACK_SPINS` and `LOOK_BACK_READS`.
    fn shader_constants(self) -> (u32, bool) {
        match self {
            Self::Wait { spins } => (spins.min(MAX_LOOK_BACK_SPINS), true),
            Self::CountEveryBlock => (0, false),
        }
    }
}

/// The most spins a [`LookBack::Wait`] takes: a look-back's bound, blocks ×
/// (spins + 1), stays within 32 bits up to [`ONESWEEP_LARGEST_SORT`] pairs.
pub const MAX_LOOK_BACK_SPINS: u32 = 1 << 16;
const _: () = assert!(
    (ONESWEEP_LARGEST_SORT / SORT_BLOCK) as u64 * (MAX_LOOK_BACK_SPINS as u64 + 1)
        <= u32::MAX as u64
);

/// Key bits sorted per pass.
pub const RADIX_BITS: u32 = 8;
const RADIX: u32 = 1 << RADIX_BITS;
// The kernels let thread t own digit t.
const _: () = assert!(RADIX == SORT_WORKGROUP_SIZE && SORT_WORKGROUP_SIZE.is_multiple_of(32));

/// Words of the scatter's workgroup memory: the ranking's per-digit masks over a
/// round of pairs, then the whole block staged in sorted order.
const STAGE_WORDS: u32 = {
    let masks = SORT_WORKGROUP_SIZE / 32 * RADIX;
    if masks > SORT_BLOCK {
        masks
    } else {
        SORT_BLOCK
    }
};

/// Most passes: 64 key bits.
const MAX_PASSES: u32 = 64u32.div_ceil(RADIX_BITS);
/// Stride of the per-pass parameters (a multiple of every allowed
/// `min_uniform_buffer_offset_alignment`). Entry `pass * RADIX_BITS + bits - 1` holds
/// the parameters of pass `pass` taking `bits` bits.
const PARAMS_STRIDE: u64 = 256;
/// Words of the sort state, see `radix_sort_setup.wgsl`.
const STATE_WORDS: usize = 20;
const STATE_ARGS_OFFSET: u64 = 6 * 4;
const STATE_HISTOGRAM_ARGS_OFFSET: u64 = 16 * 4;
const STATE_HIST_LEN_OFFSET: u64 = 9 * 4;
const STATE_HIST_TOTAL_OFFSET: u64 = 10 * 4;
/// `state[2]` of a sort without a key range.
const NO_RANGE: u32 = u32::MAX;

/// Sort blocks counted by one workgroup of the one-sweep histogram: fewer global
/// atomics on the digit totals.
const HISTOGRAM_BLOCKS: u32 = 4;
/// The one-sweep status buffer (see `radix_sort_onesweep.wgsl`): block counters, then
/// digit totals per pass (cleared by every sort's setup), then the fallback counter
/// (see [`SortBuffers::look_back_fallbacks`], never cleared), then two regions of
/// look-back words.
const STATUS_TOTALS: u32 = MAX_PASSES;
const STATUS_FALLBACKS: u32 = STATUS_TOTALS + MAX_PASSES * RADIX;
const STATUS_REGIONS: u32 = STATUS_FALLBACKS + 1;
/// Earlier blocks one step of the one-sweep look-back reads at once.
const LOOK_BACK_WINDOW: u32 = 4;
/// How many more times the one-sweep look-back reads an earlier block's counts after
/// finding them unpublished, before it counts that block's digits from its keys itself
/// ([`LookBack::Wait`]). A block publishes its counts once it has loaded and counted
/// its keys, and it started before the block that waits for it, so where it keeps
/// running a few reads find them. On an H200 (`benchmark_sort_and_scan`, 8 M pairs,
/// four key sets, each sorted for a second and then 12 times): with 4 spins blocks
/// fell back 0.9 to 17 million times per key set and sorts took 1.7 to 1.8 times as
/// long; with 16, up to 2,000 times, at no cost; with 32 and 128 never, and the times
/// equalled those of a wait of 65,536 spins (uniform 64-bit keys 2.173 ms against
/// 2.171; 2.691 classic). 128 leaves the fallback to a block that has stalled, and
/// is small for lavapipe's loop budget (65,535 iterations per invocation, every loop
/// of the kernel together): a block finds only the few blocks that run beside it
/// unpublished.
pub const LOOK_BACK_SPINS: u32 = 128;
/// The largest sort (in pairs of capacity) that a sort preferring
/// [`SortAlgorithm::OneSweep`] runs that way; larger ones run the classic steps. On an
/// H200 the one-sweep sort was the faster up to about 12 M pairs (fewer dispatches)
/// and the slower from about 16 M (its blocks wait longer for the running totals of
/// the blocks before them): BENCHMARKS.md, History. Also keeps the look-back's counts
/// within their 30 bits.
pub const ONESWEEP_LARGEST_SORT: u32 = 1 << 24;

const SETUP_SHADER: &str = include_str!("radix_sort_setup.wgsl");
const SORT_SHADER: &str = include_str!("radix_sort.wgsl");
const CLASSIC_SHADER: &str = include_str!("radix_sort_classic.wgsl");
const ONESWEEP_SHADER: &str = include_str!("radix_sort_onesweep.wgsl");

/// The pipelines of the radix sort (and of the prefix scan the classic algorithm
/// uses); create once per device.
pub struct RadixSort {
    key: SortKey,
    scan: PrefixScan,
    count_layout: wgpu::BindGroupLayout,
    scatter_layout: wgpu::BindGroupLayout,
    classic: SortKernels,
    /// Built when the sort's algorithm is [`SortAlgorithm::OneSweep`].
    onesweep: Option<SortKernels>,
}

/// The kernels of one algorithm.
struct SortKernels {
    setup_layout: wgpu::BindGroupLayout,
    setup: wgpu::ComputePipeline,
    /// The classic sort's per-pass `count`, or the one-sweep `histogram` of all passes.
    count: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
}

/// The ping-pong key and value buffers a sort works in. A caller may build them from
/// buffers its other passes use at other times of the frame (see
/// [`SortBuffers::in_storage`]); each must hold `capacity` keys or values.
pub struct SortStorage {
    pub keys: [wgpu::Buffer; 2],
    pub values: [wgpu::Buffer; 2],
    /// Where in its buffer each values array starts, in bytes: a multiple of
    /// [`STORAGE_OFFSET_ALIGNMENT`], so that one buffer can hold a values array beside
    /// another array the caller keeps there.
    pub values_offset: [u64; 2],
}

/// Every adapter's `min_storage_buffer_offset_alignment` is at most this (WebGPU).
pub const STORAGE_OFFSET_ALIGNMENT: u64 = 256;

impl SortStorage {
    /// Four new buffers for `capacity` pairs of `key` keys (usage `STORAGE | COPY_SRC |
    /// COPY_DST`).
    pub fn allocate(device: &wgpu::Device, key: SortKey, capacity: u32) -> Self {
        let make = |label: &str, bytes_per_item: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: u64::from(capacity.max(1)) * bytes_per_item,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        Self {
            keys: [
                make("radix sort keys 0", key.bytes()),
                make("radix sort keys 1", key.bytes()),
            ],
            values: [
                make("radix sort values 0", 4),
                make("radix sort values 1", 4),
            ],
            values_offset: [0; 2],
        }
    }

    fn bytes(&self) -> u64 {
        self.keys
            .iter()
            .chain(&self.values)
            .map(wgpu::Buffer::size)
            .sum()
    }
}

/// Keys whose low words the GPU bounds each frame: `count` holds, at `offset`, the
/// largest low word and then the complement of the smallest, and the sort orders by
/// the top `bits` bits of the span (see [`SortBuffers::with_key_range`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyRange {
    pub offset: u64,
    pub bits: u32,
}

/// Ping-pong key/value buffers of one sort, its block histograms, indirect dispatch
/// arguments and bind groups.
pub struct SortBuffers {
    /// `keys[0]` is the input the caller fills; the sorted keys end in the buffer
    /// whose index [`RadixSort::encode`] returns. `vec2<u32>` per key, low word first,
    /// or `u32` (see [`SortKey`]).
    pub keys: [wgpu::Buffer; 2],
    /// `values[0]` is the input the caller fills, like `keys`.
    pub values: [wgpu::Buffer; 2],
    /// Where each values array starts in its buffer (see [`SortStorage`]).
    values_offset: [u64; 2],
    capacity: u32,
    /// Bytes of the key and value buffers this sort allocated itself.
    own_storage_bytes: u64,
    state: wgpu::Buffer,
    params: wgpu::Buffer,
    /// Classic: the block histograms. One-sweep: the status words.
    hist: wgpu::Buffer,
    /// The scan of `hist`, for a classic sort: `None` is a one-sweep sort (see
    /// [`RadixSort::algorithm_for`]).
    hist_scan: Option<ScanBuffers>,
    setup_group: wgpu::BindGroup,
    /// Indexed by the pass's source buffer (0 or 1).
    count_groups: [wgpu::BindGroup; 2],
    scatter_groups: [wgpu::BindGroup; 2],
}

impl RadixSort {
    /// A classic sort of 64-bit keys.
    pub fn new(device: &wgpu::Device) -> Self {
        Self::with_key(device, SortKey::U64, SortAlgorithm::Classic)
    }

    /// A sort of `key` keys by `algorithm`.
    pub fn with_key(device: &wgpu::Device, key: SortKey, algorithm: SortAlgorithm) -> Self {
        Self::build(
            device,
            device.limits().max_compute_workgroups_per_dimension,
            key,
            algorithm,
            LookBack::DEFAULT,
        )
    }

    /// A one-sweep sort of `key` keys whose blocks learn the counts before them as
    /// `look_back` says (tests and benchmarks of the look-back's fallback).
    pub fn with_look_back(device: &wgpu::Device, key: SortKey, look_back: LookBack) -> Self {
        Self::build(
            device,
            device.limits().max_compute_workgroups_per_dimension,
            key,
            SortAlgorithm::OneSweep,
            look_back,
        )
    }

    /// A sort of 64-bit keys by `algorithm`, with the dispatches' grids limited to
    /// `max_groups_x` workgroups along x (more rows instead). Tests use a small limit to
    /// exercise the 2-D grid path without 65,536 workgroups' worth of data.
    pub fn with_max_workgroups_per_dimension(
        device: &wgpu::Device,
        algorithm: SortAlgorithm,
        max_groups_x: u32,
    ) -> Self {
        Self::build(
            device,
            max_groups_x,
            SortKey::U64,
            algorithm,
            LookBack::DEFAULT,
        )
    }

    /// The algorithm that sorts up to `capacity` pairs: [`SortAlgorithm::OneSweep`]
    /// only where this sort prefers it and `capacity` is at most
    /// [`ONESWEEP_LARGEST_SORT`].
    pub fn algorithm_for(&self, capacity: u32) -> SortAlgorithm {
        if self.onesweep.is_some() && capacity <= ONESWEEP_LARGEST_SORT {
            SortAlgorithm::OneSweep
        } else {
            SortAlgorithm::Classic
        }
    }

    fn build(
        device: &wgpu::Device,
        max_groups_x: u32,
        key: SortKey,
        algorithm: SortAlgorithm,
        look_back: LookBack,
    ) -> Self {
        let max_groups_x = max_groups_x.max(1);
        let scan = PrefixScan::with_max_workgroups_per_dimension(device, max_groups_x);
        let params_entry = wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: NonZeroU64::new(16),
            },
            count: None,
        };
        let count_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("radix sort count"),
            entries: &[
                params_entry,
                storage(1, true),
                storage(2, true),
                storage(3, false),
            ],
        });
        let scatter_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("radix sort scatter"),
            entries: &[
                params_entry,
                storage(1, true),
                storage(2, true),
                storage(3, false),
                storage(4, true),
                storage(5, false),
                storage(6, false),
            ],
        });
        let setup_module = standalone_shader_module(
            device,
            "radix sort setup",
            &format!(
                "const SORT_BLOCK: u32 = {SORT_BLOCK}u;\nconst RADIX: u32 = {RADIX}u;\n\
                 const MAX_GROUPS_X: u32 = {max_groups_x}u;\n\
                 const HISTOGRAM_BLOCKS: u32 = {HISTOGRAM_BLOCKS}u;\n\
                 const STATUS_CLEARED: u32 = {STATUS_FALLBACKS}u;\n"
            ),
            SETUP_SHADER,
            ShaderChecks::All,
        );
        let kernels = |algorithm| {
            SortKernels::build(
                device,
                key,
                algorithm,
                look_back,
                &setup_module,
                &count_layout,
                &scatter_layout,
            )
        };
        let classic = kernels(SortAlgorithm::Classic);
        let onesweep =
            (algorithm == SortAlgorithm::OneSweep).then(|| kernels(SortAlgorithm::OneSweep));
        Self {
            key,
            scan,
            count_layout,
            scatter_layout,
            classic,
            onesweep,
        }
    }

    fn kernels(&self, algorithm: SortAlgorithm) -> &SortKernels {
        match (algorithm, &self.onesweep) {
            (SortAlgorithm::OneSweep, Some(onesweep)) => onesweep,
            _ => &self.classic,
        }
    }

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
        self.encode_inner(pass, buffers, key_bits, None)
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
        self.encode_inner(pass, buffers, key_bits, Some(timestamps))
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
    ) -> usize {
        let key_bits = key_bits.min(8 * self.key.bytes() as u32);
        let passes = key_bits.div_ceil(RADIX_BITS);
        if passes == 0 {
            return 0;
        }
        let stamp = |pass: &mut wgpu::ComputePass<'_>, index: u32| {
            if let Some(queries) = timestamps {
                pass.write_timestamp(queries, index);
            }
        };
        pass.push_debug_group("radix sort");
        stamp(pass, 0);
        let kernels = self.kernels(buffers.algorithm());
        pass.set_pipeline(&kernels.setup);
        pass.set_bind_group(0, &buffers.setup_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        let params_offset = |p: u32| {
            let bits = (key_bits - p * RADIX_BITS).min(RADIX_BITS);
            (u64::from(p * RADIX_BITS + bits - 1) * PARAMS_STRIDE) as u32
        };
        // Classic: every pass counts, then scans the block histograms. One-sweep: one
        // histogram for all passes first, which reads the last pass's parameters (they
        // give the key width).
        let hist_scan = buffers.hist_scan.as_ref();
        match hist_scan {
            Some(hist_scan) => self.scan.encode_setup(pass, hist_scan),
            None => {
                pass.set_pipeline(&kernels.count);
                pass.set_bind_group(0, &buffers.count_groups[0], &[params_offset(passes - 1)]);
                pass.dispatch_workgroups_indirect(&buffers.state, STATE_HISTOGRAM_ARGS_OFFSET);
            }
        }
        for p in 0..passes {
            let src = (p % 2) as usize;
            if hist_scan.is_some() {
                pass.set_pipeline(&kernels.count);
                pass.set_bind_group(0, &buffers.count_groups[src], &[params_offset(p)]);
                pass.dispatch_workgroups_indirect(&buffers.state, STATE_ARGS_OFFSET);
            }
            stamp(pass, 3 * p + 1);
            if let Some(hist_scan) = hist_scan {
                self.scan.encode_levels(pass, hist_scan);
            }
            stamp(pass, 3 * p + 2);
            pass.set_pipeline(&kernels.scatter);
            pass.set_bind_group(0, &buffers.scatter_groups[src], &[params_offset(p)]);
            pass.dispatch_workgroups_indirect(&buffers.state, STATE_ARGS_OFFSET);
            stamp(pass, 3 * p + 3);
        }
        pass.pop_debug_group();
        Self::output_index(key_bits)
    }
}

impl SortKernels {
    fn build(
        device: &wgpu::Device,
        key: SortKey,
        algorithm: SortAlgorithm,
        look_back: LookBack,
        setup_module: &wgpu::ShaderModule,
        count_layout: &wgpu::BindGroupLayout,
        scatter_layout: &wgpu::BindGroupLayout,
    ) -> Self {
        let onesweep = algorithm == SortAlgorithm::OneSweep;
        let setup_entries = [storage(0, true), storage(1, false), storage(2, false)];
        let setup_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("radix sort setup"),
            entries: &setup_entries[..if onesweep { 3 } else { 2 }],
        });
        let (variant, setup_kernel, first_kernel) = if onesweep {
            (ONESWEEP_SHADER, "setup_onesweep", "histogram")
        } else {
            (CLASSIC_SHADER, "setup", "count")
        };
        let (spins, reads) = look_back.shader_constants();
        let module = standalone_shader_module(
            device,
            "radix sort",
            &format!(
                "const WG: u32 = {SORT_WORKGROUP_SIZE}u;\nconst SORT_ITEMS: u32 = {SORT_ITEMS_PER_THREAD}u;\n\
                 const SORT_BLOCK: u32 = {SORT_BLOCK}u;\nconst RADIX: u32 = {RADIX}u;\n\
                 const RADIX_BITS: u32 = {RADIX_BITS}u;\nconst STAGE_WORDS: u32 = {STAGE_WORDS}u;\n\
                 const MAX_PASSES: u32 = {MAX_PASSES}u;\nconst TOTALS: u32 = {STATUS_TOTALS}u;\n\
                 const FALLBACKS: u32 = {STATUS_FALLBACKS}u;\nconst REGIONS: u32 = {STATUS_REGIONS}u;\n\
                 const HISTOGRAM_BLOCKS: u32 = {HISTOGRAM_BLOCKS}u;\n\
                 const LOOK_BACK_WINDOW: u32 = {LOOK_BACK_WINDOW}u;\n\
                 const LOOK_BACK_SPINS: u32 = {spins}u;\nconst LOOK_BACK_READS: bool = {reads};\n{}",
                key.wgsl()
            ),
            &format!("{SORT_SHADER}\n{variant}"),
            // Every loop runs a constant count, up to n, or (the one-sweep look-back)
            // up to its block index times LOOK_BACK_SPINS + 1; every index is below n,
            // the capacity or a workgroup array's length (tests/gpu_sort.rs). No
            // kernel waits without bound for another, so none can hang a GPU.
            ShaderChecks::None,
        );
        let setup = compute_pipeline(
            device,
            "radix sort setup",
            &setup_layout,
            setup_module,
            setup_kernel,
        );
        let count = compute_pipeline(
            device,
            &format!("radix sort {first_kernel}"),
            count_layout,
            &module,
            first_kernel,
        );
        let scatter = compute_pipeline(
            device,
            "radix sort scatter",
            scatter_layout,
            &module,
            "scatter",
        );
        Self {
            setup_layout,
            setup,
            count,
            scatter,
        }
    }
}

impl SortBuffers {
    /// Ping-pong buffers for up to `capacity` pairs (`keys[0]`/`values[0]` are the
    /// input the caller fills; usage `STORAGE | COPY_SRC | COPY_DST`). `count` holds n
    /// as a u32 at byte offset `count_offset` (a multiple of 4); a larger n than
    /// `capacity` is clamped to it.
    ///
    /// `capacity` keys must not exceed `max_storage_buffer_binding_size` (checked
    /// by the caller; wgpu reports a validation error otherwise).
    pub fn new(
        device: &wgpu::Device,
        sort: &RadixSort,
        capacity: u32,
        count: &wgpu::Buffer,
        count_offset: u64,
    ) -> Self {
        let storage = SortStorage::allocate(device, sort.key, capacity);
        let own_bytes = storage.bytes();
        Self::in_storage(
            device,
            sort,
            storage,
            capacity,
            count,
            count_offset,
            None,
            SortValues::Given,
        )
        .owning(own_bytes)
    }

    /// Like [`SortBuffers::new`], for keys whose low words the GPU bounds each time:
    /// `count` also holds, at `range_offset`, the largest low word and then the
    /// complement of the smallest (both zero when there are no keys). The sort then
    /// orders by the top `bits` bits of (low word − smallest), so a sort of `bits`
    /// bits (`ceil(bits / 8)` passes) is exact whenever the keys span fewer than
    /// 2^`bits` values, and otherwise ignores only the lowest bits of the span. The
    /// high word of 64-bit keys is not sorted. `values` says whether the caller fills
    /// `values[0]` or the values are the pairs' input indices.
    pub fn with_key_range(
        device: &wgpu::Device,
        sort: &RadixSort,
        capacity: u32,
        count: &wgpu::Buffer,
        count_offset: u64,
        range_offset: u64,
        bits: u32,
        values: SortValues,
    ) -> Self {
        let storage = SortStorage::allocate(device, sort.key, capacity);
        let own_bytes = storage.bytes();
        Self::in_storage(
            device,
            sort,
            storage,
            capacity,
            count,
            count_offset,
            Some(KeyRange {
                offset: range_offset,
                bits,
            }),
            values,
        )
        .owning(own_bytes)
    }

    /// Like [`SortBuffers::new`] or, with a `range`, [`SortBuffers::with_key_range`],
    /// working in the caller's `storage` instead of buffers of its own: the sort
    /// clobbers all four buffers while it runs and leaves its result where
    /// [`RadixSort::output_index`] says. [`SortBuffers::gpu_bytes`] leaves them out.
    ///
    /// # Panics
    /// If a buffer of `storage` cannot hold `capacity` keys or values.
    pub fn in_storage(
        device: &wgpu::Device,
        sort: &RadixSort,
        storage: SortStorage,
        capacity: u32,
        count: &wgpu::Buffer,
        count_offset: u64,
        range: Option<KeyRange>,
        values_kind: SortValues,
    ) -> Self {
        let need = |item_bytes: u64| u64::from(capacity.max(1)) * item_bytes;
        assert!(
            storage
                .keys
                .iter()
                .all(|b| b.size() >= need(sort.key.bytes()))
                && storage
                    .values
                    .iter()
                    .zip(storage.values_offset)
                    .all(|(b, offset)| {
                        offset.is_multiple_of(STORAGE_OFFSET_ALIGNMENT)
                            && b.size() >= offset + need(4)
                    }),
            "a sort's storage must hold its capacity"
        );
        let SortStorage {
            keys,
            values,
            values_offset,
        } = storage;
        let value_binding = |i: usize| wgpu::BufferBinding {
            buffer: &values[i],
            offset: values_offset[i],
            size: None,
        };

        // One binding reaches n and, for a ranged sort, the two range words after it.
        let first_word = range.map_or(count_offset, |r| count_offset.min(r.offset));
        let last_word = range.map_or(count_offset, |r| count_offset.max(r.offset + 4));
        let (mut count_binding, _) = word_binding(count, first_word);
        assert!(
            last_word + 4 <= count.size(),
            "the key range lies outside its buffer"
        );
        let start = count_binding.offset;
        count_binding.size = NonZeroU64::new(last_word + 4 - start);
        let index_of = |offset: u64| {
            assert!(
                offset >= start && offset.is_multiple_of(4),
                "the count and the key range must be 4-byte words"
            );
            ((offset - start) / 4) as u32
        };
        let mut init = [0u32; STATE_WORDS];
        init[0] = index_of(count_offset);
        init[1] = capacity;
        init[2] = NO_RANGE;
        if let Some(range) = range {
            init[2] = index_of(range.offset);
            init[3] = range.bits.clamp(1, 32);
        }
        init[13] = u32::from(values_kind == SortValues::InputIndex);
        let state = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("radix sort state"),
            contents: bytemuck::cast_slice(&init),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
        });

        // Parameters of every (pass, digit width): which word, shift and mask.
        let entries = (MAX_PASSES * RADIX_BITS) as usize;
        let mut params = vec![0u32; entries * PARAMS_STRIDE as usize / 4];
        for p in 0..MAX_PASSES {
            for bits in 1..=RADIX_BITS {
                let at = (p * RADIX_BITS + bits - 1) as usize * PARAMS_STRIDE as usize / 4;
                let first_bit = p * RADIX_BITS;
                params[at] = first_bit / 32;
                params[at + 1] = first_bit % 32;
                params[at + 2] = (1u32 << bits) - 1;
            }
        }
        let params_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("radix sort pass params"),
            contents: bytemuck::cast_slice(&params),
            usage: wgpu::BufferUsages::UNIFORM,
        });

        let blocks = capacity.div_ceil(SORT_BLOCK);
        let algorithm = sort.algorithm_for(capacity);
        let (hist, hist_scan) = match algorithm {
            SortAlgorithm::Classic => {
                let hist_capacity = blocks * RADIX;
                let hist = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("radix sort block histograms"),
                    size: u64::from(hist_capacity.max(1)) * 4,
                    usage: wgpu::BufferUsages::STORAGE,
                    mapped_at_creation: false,
                });
                let hist_scan = ScanBuffers::new(
                    device,
                    &sort.scan,
                    hist_capacity,
                    &hist,
                    &state,
                    STATE_HIST_LEN_OFFSET,
                    &state,
                    STATE_HIST_TOTAL_OFFSET,
                );
                (hist, Some(hist_scan))
            }
            SortAlgorithm::OneSweep => {
                let words = u64::from(STATUS_REGIONS) + 2 * u64::from(blocks) * u64::from(RADIX);
                let status = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("radix sort one-sweep status"),
                    size: words * 4,
                    // COPY_SRC: the fallback counter is read back by tests.
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                (status, None)
            }
        };

        let setup_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("radix sort setup"),
            layout: &sort.kernels(algorithm).setup_layout,
            entries: &[
                buffer_entry(0, count_binding),
                buffer_entry(1, state.as_entire_buffer_binding()),
                buffer_entry(2, hist.as_entire_buffer_binding()),
            ][..if hist_scan.is_some() { 2 } else { 3 }],
        });
        let params_binding = wgpu::BufferBinding {
            buffer: &params_buffer,
            offset: 0,
            size: NonZeroU64::new(16),
        };
        let count_groups = [0, 1].map(|src| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("radix sort count"),
                layout: &sort.count_layout,
                entries: &[
                    buffer_entry(0, params_binding.clone()),
                    buffer_entry(1, state.as_entire_buffer_binding()),
                    buffer_entry(2, keys[src].as_entire_buffer_binding()),
                    buffer_entry(3, hist.as_entire_buffer_binding()),
                ],
            })
        });
        let scatter_groups = [0, 1].map(|src| {
            let dst = 1 - src;
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("radix sort scatter"),
                layout: &sort.scatter_layout,
                entries: &[
                    buffer_entry(0, params_binding.clone()),
                    buffer_entry(1, state.as_entire_buffer_binding()),
                    buffer_entry(2, keys[src].as_entire_buffer_binding()),
                    buffer_entry(3, hist.as_entire_buffer_binding()),
                    buffer_entry(4, value_binding(src)),
                    buffer_entry(5, keys[dst].as_entire_buffer_binding()),
                    buffer_entry(6, value_binding(dst)),
                ],
            })
        });

        Self {
            keys,
            values,
            values_offset,
            capacity,
            own_storage_bytes: 0,
            state,
            params: params_buffer,
            hist,
            hist_scan,
            setup_group,
            count_groups,
            scatter_groups,
        }
    }

    fn owning(mut self, bytes: u64) -> Self {
        self.own_storage_bytes = bytes;
        self
    }

    /// The values array `index` (0 or 1) where it lies in its buffer.
    pub fn value_binding(&self, index: usize) -> wgpu::BufferBinding<'_> {
        wgpu::BufferBinding {
            buffer: &self.values[index],
            offset: self.values_offset[index],
            size: None,
        }
    }

    /// Most pairs one sort handles.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The algorithm these buffers are sorted by.
    pub fn algorithm(&self) -> SortAlgorithm {
        if self.hist_scan.is_some() {
            SortAlgorithm::Classic
        } else {
            SortAlgorithm::OneSweep
        }
    }

    /// Where a one-sweep sort counts its look-back's fallbacks: the buffer (usage
    /// `STORAGE | COPY_SRC`) and the byte offset of a `u32` that counts, over these
    /// buffers' life, the (block, digit) counts that a block took from an earlier
    /// block's keys because it had not published them in time ([`LookBack`]). `None`
    /// for a classic sort. For tests and benchmarks: how often blocks stall.
    pub fn look_back_fallbacks(&self) -> Option<(&wgpu::Buffer, u64)> {
        match self.hist_scan {
            Some(_) => None,
            None => Some((&self.hist, u64::from(STATUS_FALLBACKS) * 4)),
        }
    }

    /// Bytes of GPU memory these buffers hold (for memory reports), without storage
    /// that the caller lent (see [`SortBuffers::in_storage`]).
    pub fn gpu_bytes(&self) -> u64 {
        self.own_storage_bytes
            + self.state.size()
            + self.params.size()
            + self.hist.size()
            + self.hist_scan.as_ref().map_or(0, ScanBuffers::gpu_bytes)
    }
}
