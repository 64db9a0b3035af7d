// Turns counts that only the GPU knows into indirect dispatch arguments, splitting a
// grid wider than the per-dimension limit into rows (kernels rebuild a linear index as
// gid.x + gid.y · 65535 · 256, `linear_thread` in common.wgsl).

#import bevy_splat::common::grid::grid_of
#import bevy_splat::common::{
    WORKGROUP_SIZE, COUNTER_VISIBLE, COUNTER_PAIRS_NEEDED, COUNTER_PAIRS_KEPT,
    COUNTER_VISIBLE_KEPT, COUNTER_VISIBLE_DISPATCH, COUNTER_PAIR_DISPATCH,
}

// The band's counters, by word (`COUNTER_*` in common.wgsl).
@group(0) @binding(0) var<storage, read_write> counters: array<u32>;
// x: pair capacity, y: splat capacity.
@group(0) @binding(1) var<uniform> capacities: vec4<u32>;

const MAX_GROUPS: u32 = 65535u;

fn write_grid(at: u32, threads: u32) {
    let grid = grid_of((threads + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE, MAX_GROUPS);
    counters[at] = grid.x;
    counters[at + 1u] = grid.y;
    counters[at + 2u] = grid.z;
}

@compute @workgroup_size(1)
fn visible_dispatch() {
    let kept = min(counters[COUNTER_VISIBLE], capacities.y);
    counters[COUNTER_VISIBLE_KEPT] = kept;
    write_grid(COUNTER_VISIBLE_DISPATCH, kept);
}

@compute @workgroup_size(1)
fn pair_dispatch() {
    let kept = min(counters[COUNTER_PAIRS_NEEDED], capacities.x);
    counters[COUNTER_PAIRS_KEPT] = kept;
    write_grid(COUNTER_PAIR_DISPATCH, kept);
}
