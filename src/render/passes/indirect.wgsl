// Turns counts that only the GPU knows into indirect dispatch arguments, splitting a
// grid wider than the per-dimension limit into rows (kernels rebuild a linear index as
// gid.x + gid.y · 65535 · 256).


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
    let groups = (threads + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
    let rows = max((groups + MAX_GROUPS - 1u) / MAX_GROUPS, 1u);
    counters[at] = min(groups, MAX_GROUPS);
    counters[at + 1u] = select(0u, rows, groups > 0u);
    counters[at + 2u] = 1u;
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
