// Turns counts that only the GPU knows into indirect dispatch arguments, splitting a
// grid wider than the per-dimension limit into rows (kernels rebuild a linear index as
// gid.x + gid.y · 65535 · 256, `linear_thread` in common.wgsl).

#import bevy_splat::common::grid::grid_of
#import bevy_splat::common::{
    WORKGROUP_SIZE, COUNTER_VISIBLE, COUNTER_PAIRS_NEEDED, COUNTER_PAIRS_KEPT,
    COUNTER_VISIBLE_KEPT, COUNTER_VISIBLE_DISPATCH, COUNTER_PAIR_DISPATCH,
    COUNTER_TILE_CHUNKS, COUNTER_CHUNK_DISPATCH, COUNTER_SCAN_DISPATCH,
}

// The band's counters, by word (`COUNTER_*` in common.wgsl).
@group(0) @binding(0) var<storage, read_write> counters: array<u32>;
// x: pair capacity, y: splat capacity, z: tile chunk capacity.
@group(0) @binding(1) var<uniform> capacities: vec4<u32>;

const MAX_GROUPS: u32 = 65535u;

// The pair slots' blocks (`pair_slots.wgsl`).
const SCAN_BLOCK: u32 = #{SCAN_BLOCK}u;

fn write_grid(at: u32, threads: u32, per_group: u32) {
    let grid = grid_of((threads + per_group - 1u) / per_group, MAX_GROUPS);
    counters[at] = grid.x;
    counters[at + 1u] = grid.y;
    counters[at + 2u] = grid.z;
}

@compute @workgroup_size(1)
fn visible_dispatch() {
    let kept = min(counters[COUNTER_VISIBLE], capacities.y);
    counters[COUNTER_VISIBLE_KEPT] = kept;
    write_grid(COUNTER_VISIBLE_DISPATCH, kept, WORKGROUP_SIZE);
    write_grid(COUNTER_SCAN_DISPATCH, kept, SCAN_BLOCK);
}

@compute @workgroup_size(1)
fn pair_dispatch() {
    let kept = min(counters[COUNTER_PAIRS_NEEDED], capacities.x);
    counters[COUNTER_PAIRS_KEPT] = kept;
    write_grid(COUNTER_PAIR_DISPATCH, kept, WORKGROUP_SIZE);
}

// One workgroup per tile chunk the tile order filed within the capacity (it fills the
// slots of a tile that did not fit with chunks of no tile, so every slot below the
// capacity holds one), in one row: the capacity is at most MAX_GROUPS.
@compute @workgroup_size(1)
fn chunk_dispatch() {
    let grid = grid_of(min(counters[COUNTER_TILE_CHUNKS], capacities.z), MAX_GROUPS);
    counters[COUNTER_CHUNK_DISPATCH] = grid.x;
    counters[COUNTER_CHUNK_DISPATCH + 1u] = grid.y;
    counters[COUNTER_CHUNK_DISPATCH + 2u] = grid.z;
}
