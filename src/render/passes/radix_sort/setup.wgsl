// Radix sort, setup kernel: one thread turns the pair count n (only known on the GPU)
// into the sort's state (state.wgsl): the block count, the indirect dispatch arguments
// of the count, histogram and scatter kernels, the length of the digit histogram that
// the prefix scan sums, and a ranged sort's base and shift. The one-sweep sort's setup
// also clears its block counters and digit totals.

#import bevy_splat::common::grid::grid_of
#import bevy_splat::radix_sort::state::{
    DispatchArgs, HISTOGRAM_BLOCKS, MAX_PASSES, NO_RANGE, RADIX, SORT_BLOCK, SortState,
    SortStatus, WG
}

// Most workgroups a dispatch may have along x (per sort: tests set a small one).
const MAX_GROUPS_X: u32 = #{SORT_MAX_GROUPS_X}u;

@group(0) @binding(0) var<storage, read> count_src: array<u32>;
@group(0) @binding(1) var<storage, read_write> state: SortState;
@group(0) @binding(2) var<storage, read_write> status: SortStatus;

// A 2-D grid of at least `groups` workgroups.
fn grid(groups: u32) -> DispatchArgs {
    let grid = grid_of(groups, MAX_GROUPS_X);
    return DispatchArgs(grid.x, grid.y, grid.z);
}

@compute @workgroup_size(1)
fn setup() {
    setup_state();
}

@compute @workgroup_size(WG)
fn setup_onesweep(@builtin(local_invocation_index) t: u32) {
    if t == 0u {
        setup_state();
    }
    for (var p = t; p < MAX_PASSES; p += WG) {
        atomicStore(&status.block_counters[p], 0u);
    }
    for (var word = t; word < MAX_PASSES * RADIX; word += WG) {
        atomicStore(&status.digit_totals[word], 0u);
    }
}

fn setup_state() {
    var base = 0u;
    var shift = 0u;
    if state.range_word != NO_RANGE {
        let most = count_src[state.range_word];
        let least = ~count_src[state.range_word + 1u];
        if most >= least {
            base = least;
            let bits = 32u - countLeadingZeros(most - least);
            shift = select(0u, bits - state.range_bits, bits > state.range_bits);
        }
    }
    state.key_base = base;
    state.key_shift = shift;
    let n = min(count_src[state.count_word], state.capacity);
    let blocks = n / SORT_BLOCK + select(0u, 1u, n % SORT_BLOCK != 0u);
    state.n = n;
    state.blocks = blocks;
    state.scatter_grid = grid(blocks);
    state.hist_len = blocks * RADIX;
    state.histogram_grid = grid((blocks + HISTOGRAM_BLOCKS - 1u) / HISTOGRAM_BLOCKS);
}
