// duplicate: one thread per visible splat, nearest first. Writes one (tile, splat) pair
// for every tile the splat touches, at the offset the scan gave it: the pairs come out
// in depth order, so a stable sort by tile leaves each tile's splats front to back.
// Keys are the tile ids.

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(1) var<storage, read> projected: array<ProjectedSplat>;
// The scanned tile counts, in depth order.
@group(0) @binding(2) var<storage, read> tile_offsets: array<u32>;
@group(0) @binding(3) var<storage, read> counters: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys: array<u32>;
@group(0) @binding(5) var<storage, read_write> values: array<u32>;
// Slots of the visible splats, nearest first.
@group(0) @binding(6) var<storage, read> by_depth: array<u32>;

@compute @workgroup_size(256)
fn duplicate(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = linear_thread(gid);
    if index >= counters[3] {
        return;
    }
    let splat_slot = by_depth[index];
    let splat = projected[splat_slot];
    var slot = tile_offsets[index];
    for (var row = first_row(splat); row <= last_row(splat); row++) {
        let span = tile_span_in_row(splat, row, view);
        for (var col = span.x; col <= span.y; col++) {
            // Pairs past the capacity are dropped this frame; the CPU sees the total and
            // grows the buffers for the next one.
            if slot < view.pair_capacity {
                keys[slot] = row * view.tile_count.x + u32(col);
                values[slot] = splat_slot;
            }
            slot++;
        }
    }
}
