// Radix sort: the sizes and the buffer layouts that the host and every kernel of the
// sort share. The sizes are shader defs made from their Rust definitions
// (`radix_sort::kernels::shared_defs`); the structs are the WGSL twins of those in
// `state.rs`, compared field by field with them by `passes/contract.rs`.
#define_import_path bevy_splat::radix_sort::state

// Threads per workgroup of the count, histogram and scatter kernels (== RADIX: thread
// t owns digit t).
const WG: u32 = #{SORT_WORKGROUP_SIZE}u;
// Pairs per thread; SORT_BLOCK = WG * SORT_ITEMS pairs per block (one workgroup).
const SORT_ITEMS: u32 = #{SORT_ITEMS_PER_THREAD}u;
const SORT_BLOCK: u32 = #{SORT_BLOCK}u;
// Digit values (bins) per pass, and the key bits a pass sorts.
const RADIX: u32 = #{SORT_RADIX}u;
const RADIX_BITS: u32 = #{SORT_RADIX_BITS}u;
// Most passes: 64 key bits.
const MAX_PASSES: u32 = #{SORT_MAX_PASSES}u;
// Sort blocks counted by one workgroup of the one-sweep histogram.
const HISTOGRAM_BLOCKS: u32 = #{SORT_HISTOGRAM_BLOCKS}u;
// `SortState::range_word` of a sort without a key range.
const NO_RANGE: u32 = #{SORT_NO_RANGE}u;

// Indirect dispatch arguments: a 2-D grid of workgroups.
struct DispatchArgs {
    x: u32,
    y: u32,
    z: u32,
}

// The sort's state (`SortState` in state.rs): written by the host when it makes a
// sort's buffers, then by the setup kernel (radix_sort/setup.wgsl) at the start of
// every sort; the kernels read it and their dispatches take their grids from it.
struct SortState {
    // Written by the host. The word index of n in the setup's `count_src`.
    count_word: u32,
    // Most pairs one sort handles: a larger n is clamped to it.
    capacity: u32,
    // The word index in `count_src` of the keys' range (the largest low word, then
    // the complement of the smallest), or NO_RANGE; and the bits a ranged sort keeps.
    range_word: u32,
    range_bits: u32,
    // 1: the first pass takes each pair's input index as its value.
    input_index_values: u32,
    // Written by the setup. The pairs to sort, and their blocks of SORT_BLOCK.
    n: u32,
    blocks: u32,
    // A ranged sort's digits are those of (low word - key_base) >> key_shift, so that
    // the range's top bits are the ones sorted (both 0 without a range).
    key_base: u32,
    key_shift: u32,
    // The grid of the count and scatter kernels (one workgroup per block), and of the
    // one-sweep histogram (one per HISTOGRAM_BLOCKS blocks).
    scatter_grid: DispatchArgs,
    histogram_grid: DispatchArgs,
    // The classic sort's block histograms: their length, which their prefix scan
    // reads as its n, and the sum it writes (unused).
    hist_len: u32,
    hist_total: u32,
}

// Which digit of the keys a pass sorts (`PassParams` in state.rs): the key word that
// holds it (0 = the low word), its shift in that word, and its mask.
struct PassParams {
    word: u32,
    shift: u32,
    mask: u32,
    _pad: u32,
}

// The one-sweep sort's status buffer (`SortStatus` in state.rs). The setup clears the
// block counters and the digit totals at the start of every sort, the histogram
// kernel the first pass's look-back words, and each pass's scatter the next pass's.
struct SortStatus {
    // Per pass, the counter that hands out block indices, in the order blocks start.
    block_counters: array<atomic<u32>, MAX_PASSES>,
    // Per pass and digit (pass * RADIX + digit), the count over all blocks.
    digit_totals: array<atomic<u32>, MAX_PASSES * RADIX>,
    // How many counts the look-back took from an earlier block's keys because that
    // block had not published them in time, over the buffers' life (never cleared;
    // a diagnostic for tests and benchmarks).
    look_back_fallbacks: atomic<u32>,
    // Two regions of blocks * RADIX look-back words, pass p in region p % 2 (see
    // look_back.wgsl): flag (2 bits) | count (30 bits).
    look_back: array<atomic<u32>>,
}
