// Radix sort, the start of every sort: from the count of keys (and a ranged sort's key
// range) the state that the sort's later kernels read and take their grids from, and a
// one-sweep sort's block counters and digit totals cleared. The sort's own setup
// kernels (setup.wgsl) call it with the count they read. A kernel that writes the count
// itself may call it instead, so that a one-sweep sort needs no setup dispatch of its
// own: one dispatch, and the barrier before it, fewer per sort
// (`RadixSort::encode_prepared`). The importer binds the sort's state and its status
// in group 0 at the bindings the defs SORT_PREPARE_STATE and SORT_PREPARE_STATUS name,
// with the sort's SORT_MAX_GROUPS_X (`radix_sort::kernels::preparing_defs`).
#define_import_path bevy_splat::radix_sort::prepare

#import bevy_splat::common::grid::grid_of
#import bevy_splat::radix_sort::state::{
    DispatchArgs, HISTOGRAM_BLOCKS, MAX_PASSES, NO_RANGE, RADIX, SORT_BLOCK, SortState,
    SortStatus
}

// Most workgroups a dispatch may have along x (per sort: tests set a small one).
const MAX_GROUPS_X: u32 = #{SORT_MAX_GROUPS_X}u;

@group(0) @binding(#{SORT_PREPARE_STATE}) var<storage, read_write> sort_state: SortState;
// A one-sweep sort's only.
@group(0) @binding(#{SORT_PREPARE_STATUS}) var<storage, read_write> sort_status: SortStatus;

// A 2-D grid of at least `groups` workgroups.
fn grid(groups: u32) -> DispatchArgs {
    let grid = grid_of(groups, MAX_GROUPS_X);
    return DispatchArgs(grid.x, grid.y, grid.z);
}

// The state of a sort of `count` keys (at most its capacity are sorted). `range` is a
// ranged sort's largest low word and the complement of its smallest, unread for a sort
// without a range. One thread calls it.
fn prepare_state(count: u32, range: vec2<u32>) {
    var base = 0u;
    var shift = 0u;
    if sort_state.range_word != NO_RANGE {
        let most = range.x;
        let least = ~range.y;
        if most >= least {
            base = least;
            let bits = 32u - countLeadingZeros(most - least);
            shift = select(0u, bits - sort_state.range_bits, bits > sort_state.range_bits);
        }
    }
    sort_state.key_base = base;
    sort_state.key_shift = shift;
    let n = min(count, sort_state.capacity);
    let blocks = n / SORT_BLOCK + select(0u, 1u, n % SORT_BLOCK != 0u);
    sort_state.n = n;
    sort_state.blocks = blocks;
    sort_state.scatter_grid = grid(blocks);
    sort_state.hist_len = blocks * RADIX;
    sort_state.histogram_grid = grid((blocks + HISTOGRAM_BLOCKS - 1u) / HISTOGRAM_BLOCKS);
}

// A one-sweep sort's block counters and digit totals cleared by the workgroup's
// `threads` threads, thread `t` of them each.
fn clear_onesweep_counts(t: u32, threads: u32) {
    for (var p = t; p < MAX_PASSES; p += threads) {
        atomicStore(&sort_status.block_counters[p], 0u);
    }
    for (var word = t; word < MAX_PASSES * RADIX; word += threads) {
        atomicStore(&sort_status.digit_totals[word], 0u);
    }
}
