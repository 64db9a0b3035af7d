// tile order: one thread per tile of the band. The tile split filed every tile in a
// work class by its pair count and gave it a place in that class; here each tile takes
// its place after every tile of the busier classes, so the tile render, which draws
// the tiles in this order, starts the longest first instead of leaving them to run
// alone at the end. Within a class the order is whatever the split's atomics made.
//
// Tiles no splat reaches (class 0) come last, so the tiles worth drawing are the
// order's first ones: the first thread writes how many, as the tile render's grid.
// Nothing reads the splat layer at any other tile, so those are neither drawn nor
// composited.
//
// The fragment passes that read the layer (`tile_quads.wgsl`) draw one quad per run of
// drawn tiles along a tile row rather than one per tile: on a GPU with little raster
// hardware a quad of 8×8 pixels filled at half the rate of a full-screen triangle
// (H200), and most drawn tiles have drawn neighbours. A run lies within one row and
// one workgroup's tiles, so each workgroup finds its own from its tiles' flags in
// workgroup memory and appends them, in any order (quads do not overlap), counting
// them into the draw's instances.
//
// In a view with tile chunks (a shadow view: a chunk capacity above 0), a tile of at
// least TILE_CHUNK_PAIRS pairs is cut into chunks of that many, each drawn by its own
// workgroup (`tile_render.wgsl`); its chunks take consecutive places in the view's
// tile chunks. A tile whose chunks do not fit is drawn whole, and fills the places it
// took below the capacity with chunks of no tile. Only a view whose pairs come to at
// least CHUNKED_PAIRS_PER_TILE per drawn tile cuts every long tile; any view cuts the
// tiles that hold a LONG_LIST_SHARE-th of its pairs or more (a light's far cascades,
// drawn in the cells of one run with its near ones, whose many short tiles hide them
// from the first rule).

// Bin pairs per drawn tile from which a view cuts long lists into chunks. Measured on
// an H200 at K = 9 (chunks in every view against none): the directional light's
// cascades with 29,900 and 5,700 pairs a tile took 3.4 instead of 8.1 ms and 3.2
// instead of 3.8 with chunks, those with 1,100 and 300 took 3.0 instead of 2.4 and 2.2
// instead of 1.8, and the point light's faces (570 and 160–270) got slower too.
const CHUNKED_PAIRS_PER_TILE: u32 = 2048u;
// A tile holding this share of a view's pairs takes its workgroup longer than the
// whole view takes the GPU's others (an H100 holds some 4,000 tile workgroups at
// once), so the tile render would wait on it alone.
const LONG_LIST_SHARE: u32 = 2048u;

#import bevy_splat::common::{
    SplatView, work_class, linear_thread, WORK_CLASSES, WORKGROUP_SIZE,
    COUNTER_TILES_DRAWN, COUNTER_TILE_DISPATCH, COUNTER_TILE_DRAW, COUNTER_TILE_CHUNKS,
    COUNTER_PAIRS_KEPT,
    NO_TILE, tile_chunk_count, chunk_item_word,
}

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(1) var<storage, read> ranges: array<vec2<u32>>;
// WORK_CLASSES counts, then each tile's place in its class (`tile_split.wgsl`).
@group(0) @binding(2) var<storage, read> tile_work: array<u32>;
// The band's tiles (whole-view tile ids), busiest first.
@group(0) @binding(3) var<storage, read_write> tile_order: array<u32>;
// The band's counters (`COUNTER_*`): the drawn tiles and their grid and draw, the
// chunks filed.
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
// The view's tile chunks (`common.wgsl`), with room for `capacities.z` chunks.
@group(0) @binding(5) var<storage, read_write> tile_chunks: array<u32>;
@group(0) @binding(6) var<uniform> capacities: vec4<u32>;
// The band's runs of drawn tiles, as many as the draw's instances: (first tile, tiles).
@group(0) @binding(7) var<storage, read_write> tile_runs: array<vec2<u32>>;

var<workgroup> class_tiles: array<u32, WORK_CLASSES>;
// Per class, the tiles of the classes above it: where its tiles start in the order.
var<workgroup> class_start: array<u32, WORK_CLASSES>;
// Whether each of the workgroup's tiles is drawn.
var<workgroup> tile_drawn: array<u32, WORKGROUP_SIZE>;

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
        atomicStore(&counters[COUNTER_TILES_DRAWN], drawn);
        // Whole rows of the band's width: the last row's workgroups past `drawn` draw
        // empty tiles (the order's next), which costs them nothing but their writes.
        atomicStore(&counters[COUNTER_TILE_DISPATCH], across);
        atomicStore(&counters[COUNTER_TILE_DISPATCH + 1u], (drawn + across - 1u) / across);
        atomicStore(&counters[COUNTER_TILE_DISPATCH + 2u], 1u);
        // Six vertices a run; its instance count is counted up below (the counters
        // start every frame at 0).
        atomicStore(&counters[COUNTER_TILE_DRAW], 6u);
    }
    let band_tiles = (view.band_end_row - view.band_first_row) * view.tile_count.x;
    let tile = view.band_first_row * view.tile_count.x + index;
    var pairs = 0u;
    if index < band_tiles {
        pairs = ranges[tile].y - ranges[tile].x;
    }
    tile_drawn[thread] = u32(pairs > 0u);
    workgroupBarrier();
    if index >= band_tiles {
        return;
    }
    append_run(tile, thread);
    tile_order[class_start[work_class(pairs)] + tile_work[WORK_CLASSES + index]] = tile;
    // Chunks pay only where a view's work is held in few tiles, whose long lists the
    // rest of the GPU would wait on: with its work spread over many tiles the tile
    // render is bound by its total, which chunks add to (every chunk but a tile's last
    // is walked twice, and a pixel that ends early no longer skips the rest).
    // Every tile's word is written, 0 where none are cut: the tile render reads it.
    if capacities.z > 0u {
        let pairs_kept = atomicLoad(&counters[COUNTER_PAIRS_KEPT]);
        let held_in_few = pairs_kept / CHUNKED_PAIRS_PER_TILE >= class_start[0];
        let outlier = pairs >= pairs_kept / LONG_LIST_SHARE;
        let room = select(0u, capacities.z, held_in_few || outlier);
        tile_chunks[index] = file_chunks(tile, tile_chunk_count(pairs), room);
    }
}

// Where the workgroup's `thread`-th tile starts a run of drawn tiles (drawn, and first
// in its row or in the workgroup or after a tile not drawn), appends the run: it ends
// at the row's or the workgroup's end or before the next tile not drawn.
fn append_run(tile: u32, thread: u32) {
    let across = view.tile_count.x;
    let column = tile % across;
    if tile_drawn[thread] == 0u || (column > 0u && thread > 0u && tile_drawn[thread - 1u] != 0u) {
        return;
    }
    let limit = min(across - column, WORKGROUP_SIZE - thread);
    var length = 1u;
    while length < limit && tile_drawn[thread + length] != 0u {
        length++;
    }
    tile_runs[atomicAdd(&counters[COUNTER_TILE_DRAW + 1u], 1u)] = vec2<u32>(tile, length);
}

// Files `chunks` chunks of `tile` when it is cut (more than one): its first chunk + 1,
// or 0 when the tile is drawn whole.
fn file_chunks(tile: u32, chunks: u32, capacity: u32) -> u32 {
    if chunks < 2u || capacity == 0u {
        return 0u;
    }
    let first = atomicAdd(&counters[COUNTER_TILE_CHUNKS], chunks);
    let fits = first < capacity && chunks <= capacity - first;
    for (var chunk = 0u; chunk < chunks && first + chunk < capacity; chunk++) {
        let word = chunk_item_word(view, first + chunk);
        tile_chunks[word] = select(NO_TILE, tile, fits);
        tile_chunks[word + 1u] = chunk;
    }
    return select(0u, first + 1u, fits);
}
