//! What a sort can be asked for: its key type, where its values come from, a key
//! range, its algorithm, how its blocks rank their pairs and the one-sweep look-back,
//! with the bounds of the one-sweep sort ([`LOOK_BACK_SPINS`],
//! [`ONESWEEP_LARGEST_SORT`]).

use super::state::{RADIX, SORT_BLOCK, SORT_WORKGROUP_SIZE, scatter_workgroup_bytes};

/// The keys a sort takes: 64 bits as `vec2<u32>` (low word first), or one `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// 64-bit keys as `vec2<u32>`, low word first.
    U64,
    /// 32-bit keys.
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

/// How a block of every pass's scatter ranks its pairs: finds, for each pair, how many
/// pairs before it in the block share its digit (`scatter.wgsl`). Both are stable and
/// exact; they differ in speed and in what the GPU must offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortRanking {
    /// Per-digit bit masks over rounds of pairs in workgroup memory: any GPU, three
    /// workgroup barriers per round of [`SORT_WORKGROUP_SIZE`] pairs.
    WorkgroupMasks,
    /// Each subgroup matches its lanes' digits with ballots and counts them apart, with
    /// no workgroup barrier while it ranks. Needs `Features::SUBGROUP`; sized
    /// for subgroups of `min_lanes` to `max_lanes` lanes (powers of two, 4 to 128, as
    /// `wgpu::AdapterInfo` gives them).
    SubgroupBallots {
        /// The adapter's smallest subgroup: the workgroup holds at most
        /// `SORT_WORKGROUP_SIZE / min_lanes` subgroups, each with its digit counts.
        min_lanes: u32,
        /// The adapter's largest subgroup: how many 32-bit words of a ballot are read.
        max_lanes: u32,
    },
}

impl SortRanking {
    /// [`Self::SubgroupBallots`] where the device has `Features::SUBGROUP` through a
    /// native API and the scatter's workgroup memory fits its limit; else
    /// [`Self::WorkgroupMasks`]. Browsers are left out: wgpu's shader translator does
    /// not yet write WGSL's `enable subgroups;`, which a browser requires.
    pub fn for_device(device: &wgpu::Device) -> Self {
        let info = device.adapter_info();
        let ballots = Self::SubgroupBallots {
            min_lanes: info.subgroup_min_size,
            max_lanes: info.subgroup_max_size,
        };
        let usable = device.features().contains(wgpu::Features::SUBGROUP)
            && info.backend != wgpu::Backend::BrowserWebGpu
            && ballots.fits(device.limits().max_compute_workgroup_storage_size);
        if usable {
            ballots
        } else {
            Self::WorkgroupMasks
        }
    }

    /// Whether this ranking's lane counts are ones it handles and its scatter's
    /// workgroup memory is at most `max_bytes`.
    pub fn fits(self, max_bytes: u32) -> bool {
        let lanes_handled = match self {
            Self::WorkgroupMasks => true,
            Self::SubgroupBallots {
                min_lanes,
                max_lanes,
            } => {
                min_lanes.is_power_of_two()
                    && max_lanes.is_power_of_two()
                    && (4..=max_lanes).contains(&min_lanes)
                    && max_lanes <= 128
            }
        };
        lanes_handled && scatter_workgroup_bytes(self.subgroup_count_words()) <= max_bytes
    }

    /// Words of the subgroups' digit counts in the scatter's workgroup memory: 16 bits
    /// per subgroup and digit.
    pub(super) fn subgroup_count_words(self) -> u32 {
        match self {
            Self::WorkgroupMasks => 0,
            Self::SubgroupBallots { min_lanes, .. } => {
                SORT_WORKGROUP_SIZE / min_lanes.max(1) * RADIX / 2
            }
        }
    }
}

/// Keys whose low words the GPU bounds each frame: `count` holds, at `offset`, the
/// largest low word and then the complement of the smallest, and the sort orders by
/// the top `bits` bits of the span (see [`SortBuffers::with_key_range`](super::SortBuffers::with_key_range)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyRange {
    /// Byte offset in `count` of the largest low word, followed by the complement
    /// of the smallest.
    pub offset: u64,
    /// The top bits of the span that the sort orders by.
    pub bits: u32,
}

/// How a block of the one-sweep sort learns the digit counts of the blocks before it
/// (see `look_back.wgsl`). Either way its sums are exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookBack {
    /// Reads the counts the earlier blocks publish; one that it finds unpublished
    /// `spins + 1` times in a row it counts from its keys instead (at most
    /// [`MAX_LOOK_BACK_SPINS`], so that every look-back's bound fits in 32 bits).
    /// [`LookBack::DEFAULT`] waits [`LOOK_BACK_SPINS`].
    Wait {
        /// How many more times it reads counts it found unpublished before it counts
        /// that block's keys itself.
        spins: u32,
    },
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
    pub(super) fn shader_constants(self) -> (u32, bool) {
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
