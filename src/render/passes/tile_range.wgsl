// tile range: one thread per sorted pair. Marks where each tile's run of pairs starts
// and ends; tiles without pairs keep the (0, 0) they were cleared to.

#import bevy_splat::common::{linear_thread, WORKGROUP_SIZE, COUNTER_PAIRS_KEPT}

// The sorted pairs' tile ids.
@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read> counters: array<u32>;
@group(0) @binding(2) var<storage, read_write> ranges: array<vec2<u32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tile_range(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = linear_thread(gid);
    let count = counters[COUNTER_PAIRS_KEPT];
    if index >= count {
        return;
    }
    let tile = keys[index];
    if index == 0u || keys[index - 1u] != tile {
        ranges[tile].x = index;
    }
    if index + 1u == count || keys[index + 1u] != tile {
        ranges[tile].y = index + 1u;
    }
}
