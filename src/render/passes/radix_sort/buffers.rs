//! The buffers of one sort: the ping-pong key and value buffers ([`SortStorage`],
//! the caller's or the sort's own), and [`SortBuffers`], which adds the sort's state,
//! its pass parameters, the classic block histograms or the one-sweep status, and
//! the bind groups over all of them.

use std::num::NonZeroU64;

use wgpu::util::DeviceExt;

use super::kernels::RadixSort;
use super::options::{KeyRange, SortAlgorithm, SortKey, SortValues};
use super::state::{
    HIST_LEN_OFFSET, HIST_TOTAL_OFFSET, LOOK_BACK_FALLBACKS_OFFSET, PASS_PARAMS_BYTES, RADIX,
    SORT_BLOCK, SortState, pass_params_table, status_bytes,
};
use crate::render::passes::common::{buffer_entry, word_binding};
use crate::render::passes::scan::{PrefixScan, ScanBuffers};

/// The ping-pong key and value buffers a sort works in. A caller may build them from
/// buffers its other passes use at other times of the frame (see
/// [`SortBuffers::in_storage`]); each must hold `capacity` keys or values.
pub struct SortStorage {
    /// The two key buffers the passes ping-pong between.
    pub keys: [wgpu::Buffer; 2],
    /// The two value buffers, likewise.
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
    pub(super) values_offset: [u64; 2],
    capacity: u32,
    /// Bytes of the key and value buffers this sort allocated itself.
    own_storage_bytes: u64,
    pub(super) state: wgpu::Buffer,
    pub(super) params: wgpu::Buffer,
    /// Classic: the block histograms. One-sweep: the status words.
    pub(super) hist: wgpu::Buffer,
    /// The scan of `hist`, for a classic sort: `None` is a one-sweep sort (see
    /// [`RadixSort::algorithm_for`]).
    pub(super) hist_scan: Option<ScanBuffers>,
    pub(super) setup_group: wgpu::BindGroup,
    /// Indexed by the pass's source buffer (0 or 1).
    pub(super) count_groups: [wgpu::BindGroup; 2],
    pub(super) scatter_groups: [wgpu::BindGroup; 2],
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
        let init = SortState::initial(
            index_of(count_offset),
            capacity,
            range.map(|range| (index_of(range.offset), range.bits.clamp(1, 32))),
            values_kind == SortValues::InputIndex,
        );
        let state = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("radix sort state"),
            contents: bytemuck::bytes_of(&init),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
        });

        // Parameters of every (pass, digit width): which word, shift and mask.
        let params_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("radix sort pass params"),
            contents: &pass_params_table(),
            usage: wgpu::BufferUsages::UNIFORM,
        });

        let blocks = capacity.div_ceil(SORT_BLOCK);
        let algorithm = sort.algorithm_for(capacity);
        let (hist, hist_scan) = match algorithm {
            SortAlgorithm::Classic => {
                let (hist, hist_scan) = block_histograms(device, &sort.scan, blocks, &state);
                (hist, Some(hist_scan))
            }
            SortAlgorithm::OneSweep => (status_buffer(device, blocks), None),
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
            size: NonZeroU64::new(PASS_PARAMS_BYTES),
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

    /// A one-sweep sort's state and status, for a kernel that prepares the sort itself
    /// ([`preparing_defs`](super::kernels::preparing_defs)); `None` for a
    /// classic sort, which sets itself up (its scan has a setup of its own too).
    pub(crate) fn preparation(&self) -> Option<[wgpu::BindingResource<'_>; 2]> {
        match self.hist_scan {
            Some(_) => None,
            None => Some([
                self.state.as_entire_binding(),
                self.hist.as_entire_binding(),
            ]),
        }
    }

    /// Where a one-sweep sort counts its look-back's fallbacks: the buffer (usage
    /// `STORAGE | COPY_SRC`) and the byte offset of a `u32` that counts, over these
    /// buffers' life, the (block, digit) counts that a block took from an earlier
    /// block's keys because it had not published them in time
    /// ([`LookBack`](super::LookBack)). `None`
    /// for a classic sort. For tests and benchmarks: how often blocks stall.
    pub fn look_back_fallbacks(&self) -> Option<(&wgpu::Buffer, u64)> {
        match self.hist_scan {
            Some(_) => None,
            None => Some((&self.hist, LOOK_BACK_FALLBACKS_OFFSET)),
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

/// The digit histograms of up to `blocks` blocks, digit-major, and their scan, which
/// reads its n from the sort's `state` and writes its sum there.
fn block_histograms(
    device: &wgpu::Device,
    scan: &PrefixScan,
    blocks: u32,
    state: &wgpu::Buffer,
) -> (wgpu::Buffer, ScanBuffers) {
    let hist_capacity = blocks * RADIX;
    let hist = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("radix sort block histograms"),
        size: u64::from(hist_capacity.max(1)) * 4,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let hist_scan = ScanBuffers::new(
        device,
        scan,
        hist_capacity,
        &hist,
        state,
        HIST_LEN_OFFSET,
        state,
        HIST_TOTAL_OFFSET,
    );
    (hist, hist_scan)
}

/// The status buffer of a one-sweep sort of up to `blocks` blocks (`SortStatus` in
/// `state.rs`): block counters, digit totals, the fallback counter, look-back words.
fn status_buffer(device: &wgpu::Device, blocks: u32) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("radix sort one-sweep status"),
        size: status_bytes(blocks),
        // COPY_SRC: the fallback counter is read back by tests.
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    })
}
