// tile order: one thread per tile of the band. The tile split filed every tile in a
// work class by its pair count and gave it a place in that class; here each tile takes
// its place after every tile of the busier classes, so the tile render, which draws
// the tiles in this order, starts the longest first instead of leaving them to run
// alone at the end. Within a class the order is whatever the split's atomics made.
//
// Tiles no splat reaches (class 0) come last, so the tiles worth drawing are the
// order's first ones: the first thread writes how many, as the tile render's grid and
// the fragment passes' draw over them. Nothing reads the splat layer at any other
// tile, so those are neither drawn nor composited.

#import bevy_splat::common::{
    SplatView, work_class, linear_thread, WORK_CLASSES, WORKGROUP_SIZE,
    COUNTER_TILES_DRAWN, COUNTER_TILE_DISPATCH, COUNTER_TILE_DRAW,
}

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(1) var<storage, read> ranges: array<vec2<u32>>;
// WORK_CLASSES counts, then each tile's place in its class (`tile_split.wgsl`).
@group(0) @binding(2) var<storage, read> tile_work: array<u32>;
// The band's tiles (whole-view tile ids), busiest first.
@group(0) @binding(3) var<storage, read_write> tile_order: array<u32>;
// The band's counters (`COUNTER_*`): the drawn tiles and their grid and draw.
@group(0) @binding(4) var<storage, read_write> counters: array<u32>;

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
    if index == 0u {
        // Every class above 0 holds tiles with pairs.
        let drawn = class_start[0];
        let across = view.tile_count.x;
        counters[COUNTER_TILES_DRAWN] = drawn;
        // Whole rows of the band's width: the last row's workgroups past `drawn` draw
        // empty tiles (the order's next), which costs them nothing but their writes.
        counters[COUNTER_TILE_DISPATCH] = across;
        counters[COUNTER_TILE_DISPATCH + 1u] = (drawn + across - 1u) / across;
        counters[COUNTER_TILE_DISPATCH + 2u] = 1u;
        counters[COUNTER_TILE_DRAW] = 6u;
        counters[COUNTER_TILE_DRAW + 1u] = drawn;
        counters[COUNTER_TILE_DRAW + 2u] = 0u;
        counters[COUNTER_TILE_DRAW + 3u] = 0u;
    }
    let band_tiles = (view.band_end_row - view.band_first_row) * view.tile_count.x;
    if index >= band_tiles {
        return;
    }
    let tile = view.band_first_row * view.tile_count.x + index;
    let work = work_class(ranges[tile].y - ranges[tile].x);
    tile_order[class_start[work] + tile_work[WORK_CLASSES + index]] = tile;
}
