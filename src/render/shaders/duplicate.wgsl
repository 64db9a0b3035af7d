// duplicate: one thread per visible splat. Writes one (key, splat) pair for every tile
// the splat touches, at the offset the scan gave it. key.y = tile id, key.x = depth
// bits (positive floats order like their bit patterns), so sorting the 64-bit key
// groups pairs by tile and orders each tile front to back.

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(1) var<storage, read> projected: array<ProjectedSplat>;
@group(0) @binding(2) var<storage, read> tile_offsets: array<u32>;
@group(0) @binding(3) var<storage, read> counters: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read_write> values: array<u32>;

const GRID_WIDTH: u32 = 65535u * 256u;

@compute @workgroup_size(256)
fn duplicate(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = gid.x + gid.y * GRID_WIDTH;
    if index >= counters[3] {
        return;
    }
    let splat = projected[index];
    let depth_bits = bitcast<u32>(splat.depth);
    var slot = tile_offsets[index];
    for (var row = first_row(splat); row <= last_row(splat); row++) {
        let span = tile_span_in_row(splat, row, view);
        for (var col = span.x; col <= span.y; col++) {
            // Pairs past the capacity are dropped this frame; the CPU sees the total and
            // grows the buffers for the next one.
            if slot < view.pair_capacity {
                keys[slot] = vec2<u32>(depth_bits, row * view.tile_count.x + u32(col));
                values[slot] = index;
            }
            slot++;
        }
    }
}
