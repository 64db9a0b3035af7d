// gather: once the visible splats' slots are sorted by depth, lists
// their pair counts in that order. Scanned, these give each splat its first pair slot
// in depth order, so duplicate writes the pairs nearest first and a stable sort by
// tile alone keeps every tile's splats front to back.

#import bevy_splat::common::{linear_thread, WORKGROUP_SIZE, COUNTER_VISIBLE_KEPT}

@group(0) @binding(0) var<storage, read> counters: array<u32>;
// The slots, nearest first (the depth sort's values).
@group(0) @binding(1) var<storage, read> by_depth: array<u32>;
// Each slot's pair count, as the preprocess wrote it.
@group(0) @binding(2) var<storage, read> pair_counts: array<u32>;
@group(0) @binding(3) var<storage, read_write> first_pair_slots: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn gather_pair_counts(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = linear_thread(gid);
    if index >= counters[COUNTER_VISIBLE_KEPT] {
        return;
    }
    first_pair_slots[index] = pair_counts[by_depth[index]];
}
