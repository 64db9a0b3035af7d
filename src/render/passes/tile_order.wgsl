// tile order: one thread per tile of the band. Keys each tile by its pair count,
// largest first (in steps of 16 pairs, 16 bits), for a sort that lets the tile render
// start the longest tiles first instead of leaving them to run alone at the end.

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(1) var<storage, read> ranges: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> values: array<u32>;

const KEY_MAX: u32 = 0xffffu;

@compute @workgroup_size(256)
fn tile_work_keys(@builtin(global_invocation_id) gid: vec3<u32>) {
    let index = linear_thread(gid);
    let band_tiles = (view.band_end_row - view.band_first_row) * view.tile_count.x;
    if index >= band_tiles {
        return;
    }
    let range = ranges[view.band_first_row * view.tile_count.x + index];
    let work = min((range.y - range.x) >> 4u, KEY_MAX);
    keys[index] = KEY_MAX - work;
    values[index] = index;
}
