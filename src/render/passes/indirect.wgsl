// Turns counts that only the GPU knows into indirect dispatch arguments, splitting a
// grid wider than the per-dimension limit into rows (kernels rebuild a linear index as
// gid.x + gid.y · 65535 · 256, `linear_thread` in common.wgsl).

#import bevy_splat::common::grid::grid_of
#import bevy_splat::common::{
    WORKGROUP_SIZE, GRID_MAX_X, COUNTER_VISIBLE, COUNTER_VISIBLE_KEPT,
    COUNTER_VISIBLE_DISPATCH, COUNTER_TILE_CHUNKS, COUNTER_CHUNK_DISPATCH,
    COUNTER_SCAN_DISPATCH, COUNTER_DEPTH_KEY_MAX, DEPTH_KEY_RANGE_COPIES, COUNTER_LINE_WORDS,
}
#ifdef PREPARES_SORT
#import bevy_splat::radix_sort::prepare::{prepare_state, clear_onesweep_counts}
#endif

// The band's counters, by word (`COUNTER_*` in common.wgsl).
@group(0) @binding(0) var<storage, read_write> counters: array<u32>;
// x: pair capacity, y: splat capacity, z: tile chunk capacity.
@group(0) @binding(1) var<uniform> capacities: vec4<u32>;

// The pair slots' blocks (`pair_slots.wgsl`).
const SCAN_BLOCK: u32 = #{SCAN_BLOCK}u;

// With PREPARES_SORT, `visible_dispatch` also prepares the depth sort (a one-sweep
// sort: its state at binding 2, its status at 3), which then runs without a setup
// dispatch of its own; its threads clear the status's counts.
#ifdef PREPARES_SORT
const VISIBLE_THREADS: u32 = WORKGROUP_SIZE;
#else
const VISIBLE_THREADS: u32 = 1u;
#endif

fn write_grid(at: u32, threads: u32, per_group: u32) {
    let grid = grid_of((threads + per_group - 1u) / per_group, GRID_MAX_X);
    counters[at] = grid.x;
    counters[at + 1u] = grid.y;
    counters[at + 2u] = grid.z;
}

// The depth keys' range (the largest, the complement of the smallest) over the
// copies the preprocess's workgroups took it into, written into the first, where the
// depth sort reads it.
fn fold_depth_key_ranges() -> vec2<u32> {
    var range = vec2<u32>(0u);
    for (var copy = 0u; copy < DEPTH_KEY_RANGE_COPIES; copy++) {
        let at = COUNTER_DEPTH_KEY_MAX + copy * COUNTER_LINE_WORDS;
        range = max(range, vec2<u32>(counters[at], counters[at + 1u]));
    }
    counters[COUNTER_DEPTH_KEY_MAX] = range.x;
    counters[COUNTER_DEPTH_KEY_MAX + 1u] = range.y;
    return range;
}

@compute @workgroup_size(VISIBLE_THREADS)
fn visible_dispatch(@builtin(local_invocation_index) t: u32) {
    if t == 0u {
        let kept = min(counters[COUNTER_VISIBLE], capacities.y);
        counters[COUNTER_VISIBLE_KEPT] = kept;
        write_grid(COUNTER_VISIBLE_DISPATCH, kept, WORKGROUP_SIZE);
        write_grid(COUNTER_SCAN_DISPATCH, kept, SCAN_BLOCK);
        let range = fold_depth_key_ranges();
#ifdef PREPARES_SORT
        prepare_state(kept, range);
#endif
    }
#ifdef PREPARES_SORT
    clear_onesweep_counts(t, VISIBLE_THREADS);
#endif
}

// One workgroup per tile chunk the tile order filed within the capacity (it fills the
// slots of a tile that did not fit with chunks of no tile, so every slot below the
// capacity holds one), in one row: the capacity is at most GRID_MAX_X.
@compute @workgroup_size(1)
fn chunk_dispatch() {
    let grid = grid_of(min(counters[COUNTER_TILE_CHUNKS], capacities.z), GRID_MAX_X);
    counters[COUNTER_CHUNK_DISPATCH] = grid.x;
    counters[COUNTER_CHUNK_DISPATCH + 1u] = grid.y;
    counters[COUNTER_CHUNK_DISPATCH + 2u] = grid.z;
}
