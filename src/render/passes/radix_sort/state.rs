//! What the host and the sort's kernels share, from its one definition here: the
//! sizes every sort module is composed with ([`shared_defs`], shader defs), and the
//! layouts of the sort's state, of a pass's parameters and of the one-sweep status
//! buffer, `#[repr(C)]` twins of the structs in `state.wgsl` (compared field by field
//! by `passes/contract.rs`), with the byte offsets the host binds and dispatches from.

use std::mem::{offset_of, size_of};

use bytemuck::{Pod, Zeroable};

use crate::render::passes::library::ShaderDef;

/// Threads per workgroup of the count and scatter kernels.
pub const SORT_WORKGROUP_SIZE: u32 = 256;
/// Pairs per thread of the count and scatter kernels.
pub const SORT_ITEMS_PER_THREAD: u32 = 8;
/// Pairs handled by one workgroup.
pub const SORT_BLOCK: u32 = SORT_WORKGROUP_SIZE * SORT_ITEMS_PER_THREAD;
/// Key bits sorted per pass.
pub const RADIX_BITS: u32 = 8;
/// Sort blocks counted by one workgroup of the one-sweep histogram: fewer global
/// atomics on the digit totals.
pub(super) const HISTOGRAM_BLOCKS: u32 = 4;
/// Earlier blocks one step of the one-sweep look-back reads at once.
pub(super) const LOOK_BACK_WINDOW: u32 = 4;

/// Digit values (bins) per pass.
pub(super) const RADIX: u32 = 1 << RADIX_BITS;
// The kernels let thread t own digit t.
const _: () = assert!(RADIX == SORT_WORKGROUP_SIZE && SORT_WORKGROUP_SIZE.is_multiple_of(32));

/// Most passes: 64 key bits.
pub(super) const MAX_PASSES: u32 = 64u32.div_ceil(RADIX_BITS);

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

/// Bytes of the scatter kernel's workgroup memory (`scatter.wgsl`: the stage, three
/// per-digit arrays, one-sweep's block index) with `count_words` words of subgroup
/// digit counts (16 bits per subgroup and digit) and two words of digit-scan totals
/// per subgroup they count.
pub(super) const fn scatter_workgroup_bytes(count_words: u32) -> u32 {
    let subgroups = count_words / (RADIX / 2);
    4 * (STAGE_WORDS + RADIX * 4 + 1 + count_words + 2 * subgroups)
}

/// [`SortState::range_word`] of a sort without a key range.
pub(super) const NO_RANGE: u32 = u32::MAX;

/// The sizes every module of the sort is composed with, as shader defs (`state.wgsl`
/// declares them as constants; `look_back.wgsl` and `scatter.wgsl` their own).
pub(crate) fn shared_defs() -> [ShaderDef; 10] {
    [
        ShaderDef::UInt("SORT_WORKGROUP_SIZE", SORT_WORKGROUP_SIZE),
        ShaderDef::UInt("SORT_ITEMS_PER_THREAD", SORT_ITEMS_PER_THREAD),
        ShaderDef::UInt("SORT_BLOCK", SORT_BLOCK),
        ShaderDef::UInt("SORT_RADIX", RADIX),
        ShaderDef::UInt("SORT_RADIX_BITS", RADIX_BITS),
        ShaderDef::UInt("SORT_MAX_PASSES", MAX_PASSES),
        ShaderDef::UInt("SORT_HISTOGRAM_BLOCKS", HISTOGRAM_BLOCKS),
        ShaderDef::UInt("SORT_NO_RANGE", NO_RANGE),
        ShaderDef::UInt("SORT_STAGE_WORDS", STAGE_WORDS),
        ShaderDef::UInt("SORT_LOOK_BACK_WINDOW", LOOK_BACK_WINDOW),
    ]
}

/// Indirect dispatch arguments (`DispatchArgs` in `state.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct DispatchArgs {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// A sort's state buffer (`SortState` in `state.wgsl`, which says what each field
/// holds): the host writes the first five when it makes the buffers, the setup kernel
/// the rest at the start of every sort, and the indirect dispatches read their grids
/// from it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct SortState {
    /// The word index of n in the setup's count binding.
    pub count_word: u32,
    pub capacity: u32,
    /// The word index of the keys' range in the count binding, or [`NO_RANGE`].
    pub range_word: u32,
    pub range_bits: u32,
    /// 1: the first pass's values are the pairs' input indices.
    pub input_index_values: u32,
    pub n: u32,
    pub blocks: u32,
    pub key_base: u32,
    pub key_shift: u32,
    pub scatter_grid: DispatchArgs,
    pub histogram_grid: DispatchArgs,
    pub hist_len: u32,
    pub hist_total: u32,
}

/// Byte offsets in the state buffer: the grid of the count and scatter kernels, that
/// of the one-sweep histogram, and the length and the sum of the classic sort's
/// block histograms, which their prefix scan reads and writes.
pub(super) const SCATTER_GRID_OFFSET: u64 = offset_of!(SortState, scatter_grid) as u64;
pub(super) const HISTOGRAM_GRID_OFFSET: u64 = offset_of!(SortState, histogram_grid) as u64;
pub(super) const HIST_LEN_OFFSET: u64 = offset_of!(SortState, hist_len) as u64;
pub(super) const HIST_TOTAL_OFFSET: u64 = offset_of!(SortState, hist_total) as u64;

impl SortState {
    /// The state a sort's buffers start with: where n is (`count_word`), the
    /// capacity, for a ranged sort where its range is and the bits it keeps, and
    /// whether the values are the input indices.
    pub(super) fn initial(
        count_word: u32,
        capacity: u32,
        range: Option<(u32, u32)>,
        input_index_values: bool,
    ) -> Self {
        let (range_word, range_bits) = range.unwrap_or((NO_RANGE, 0));
        Self {
            count_word,
            capacity,
            range_word,
            range_bits,
            input_index_values: u32::from(input_index_values),
            ..Self::default()
        }
    }
}

/// Which digit of the keys a pass sorts (`PassParams` in `state.wgsl`): the key word
/// that holds it (0 = the low word), its shift in that word, and its mask.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct PassParams {
    pub word: u32,
    pub shift: u32,
    pub mask: u32,
    pub _pad: u32,
}

/// Stride of the per-pass parameters (a multiple of every allowed
/// `min_uniform_buffer_offset_alignment`). Entry `pass * RADIX_BITS + bits - 1` holds
/// the parameters of pass `pass` taking `bits` bits.
const PARAMS_STRIDE: usize = 256;
const _: () = assert!(size_of::<PassParams>() <= PARAMS_STRIDE);

/// Bytes of one pass's parameters, as bound.
pub(super) const PASS_PARAMS_BYTES: u64 = size_of::<PassParams>() as u64;

/// The parameters of every (pass, digit width), each at its dynamic offset
/// ([`params_offset`]).
pub(super) fn pass_params_table() -> Vec<u8> {
    let entries = (MAX_PASSES * RADIX_BITS) as usize;
    let mut table = vec![0u8; entries * PARAMS_STRIDE];
    for pass in 0..MAX_PASSES {
        for bits in 1..=RADIX_BITS {
            let first_bit = pass * RADIX_BITS;
            let params = PassParams {
                word: first_bit / 32,
                shift: first_bit % 32,
                mask: (1u32 << bits) - 1,
                _pad: 0,
            };
            let at = entry(pass, bits);
            table[at..at + size_of::<PassParams>()].copy_from_slice(bytemuck::bytes_of(&params));
        }
    }
    table
}

/// The dynamic offset of pass `pass`'s parameters in a sort of `key_bits` bits.
pub(super) fn params_offset(pass: u32, key_bits: u32) -> u32 {
    let bits = (key_bits - pass * RADIX_BITS).min(RADIX_BITS);
    entry(pass, bits) as u32
}

fn entry(pass: u32, bits: u32) -> usize {
    (pass * RADIX_BITS + bits - 1) as usize * PARAMS_STRIDE
}

/// The head of the one-sweep status buffer (`SortStatus` in `state.wgsl`, which says
/// what each field holds); the look-back words follow it, two regions of
/// blocks × [`RADIX`] (see `look_back.wgsl`). Never built on the host: it gives the
/// layout.
#[repr(C)]
pub(crate) struct SortStatus {
    pub block_counters: [u32; MAX_PASSES as usize],
    pub digit_totals: [u32; (MAX_PASSES * RADIX) as usize],
    pub look_back_fallbacks: u32,
    pub look_back: [u32; 0],
}

/// Byte offset of the look-back's fallback counter in the status buffer.
pub(super) const LOOK_BACK_FALLBACKS_OFFSET: u64 =
    offset_of!(SortStatus, look_back_fallbacks) as u64;

/// Bytes of the status buffer of a sort of up to `blocks` blocks (at least one: the
/// kernels bind the look-back words as an array, which may not be empty).
pub(super) fn status_bytes(blocks: u32) -> u64 {
    let look_back_words = 2 * u64::from(blocks.max(1)) * u64::from(RADIX);
    offset_of!(SortStatus, look_back) as u64 + look_back_words * 4
}
