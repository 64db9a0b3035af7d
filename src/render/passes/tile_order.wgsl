// tile order: one thread per tile of the band. The tile split filed every tile in a
// work class by its pair count and gave it a place in that class; here each tile takes
// its place after every tile of the busier classes, so the tile render, which draws
// the tiles in this order, starts the longest first instead of leaving them to run
// alone at the end. Within a class the order is whatever the split's atomics made.

#import bevy_splat::common::{SplatView, work_class, linear_thread, WORK_CLASSES, WORKGROUP_SIZE}

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(1) var<storage, read> ranges: array<vec2<u32>>;
// WORK_CLASSES counts, then each tile's place in its class (`tile_split.wgsl`).
@group(0) @binding(2) var<storage, read> tile_work: array<u32>;
// The band's tiles (index within the band), busiest first.
@group(0) @binding(3) var<storage, read_write> tile_order: array<u32>;

var<workgroup> class_tiles: array<u32, WORK_CLASSES>;
// Per class, the tiles of the classes above it: where its tiles start in the order.
var<workgroup> class_start: array<u32, WORK_CLASSES>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn tile_order_places(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) thread: u32,
) {
    if thread < WORK_CLASSES {
        class_tiles[thread] = tile_work[thread];
    }
    workgroupBarrier();
    if thread < WORK_CLASSES {
        var above = 0u;
        for (var busier = thread + 1u; busier < WORK_CLASSES; busier++) {
            above += class_tiles[busier];
        }
        class_start[thread] = above;
    }
    workgroupBarrier();
    let index = linear_thread(gid);
    let band_tiles = (view.band_end_row - view.band_first_row) * view.tile_count.x;
    if index >= band_tiles {
        return;
    }
    let range = ranges[view.band_first_row * view.tile_count.x + index];
    let work = work_class(range.y - range.x);
    tile_order[class_start[work] + tile_work[WORK_CLASSES + index]] = index;
}
