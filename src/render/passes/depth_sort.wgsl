// depth sort, second half: once the visible splats are sorted by depth (their keys
// carry each splat's tile count in y), lists the tile counts in that order. Scanned,
// these give each splat its first pair slot in depth order, so duplicate writes the
// pairs nearest first and a stable sort by tile alone keeps every tile's splats front
// to back.

@group(0) @binding(0) var<storage, read> counters: array<u32>;
// The sorted depth keys: (depth bits, tile count), nearest first.
@group(0) @binding(1) var<storage, read> by_depth: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> tile_offsets: array<u32>;

@compute @workgroup_size(256)
fn gather_tile_counts(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = linear_thread(gid);
    if index >= counters[3] {
        return;
    }
    tile_offsets[index] = by_depth[index].y;
}
