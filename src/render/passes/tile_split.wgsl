// tile split: one workgroup per bin (2×2 tiles) of the band. The bin's pairs, sorted
// front to back, become its four tiles' lists, each still front to back: a pair goes
// to every tile its 4 bits name (`SLOT_BITS`), at the count of earlier pairs that go
// there too. So the tile render reads the same lists as if pairs had been made and
// sorted per tile, but the sort moved one pair per bin instead of one per tile. Each
// tile is also filed in its work class (`work_class`) for the tile order.
//
// Tile (x & 1) + 2·(y & 1) of each bin keeps its list in buffer `list_<that>`, at the
// bin's own run of slots [start, end): no tile of a bin has more pairs than the bin, so
// the lists need no counting first and no memory beyond the sort's four buffers. The
// bin's pairs are in `list_0` and are read before being overwritten: a chunk's writes
// to `list_0` land at or before the chunk's own reads, which precede them by a barrier.

@group(0) @binding(0) var<uniform> view: SplatView;
// Each bin's run of sorted pairs (whole-view bin ids).
@group(0) @binding(1) var<storage, read> bin_ranges: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> list_0: array<u32>;
@group(0) @binding(3) var<storage, read_write> list_1: array<u32>;
@group(0) @binding(4) var<storage, read_write> list_2: array<u32>;
@group(0) @binding(5) var<storage, read_write> list_3: array<u32>;
// Each tile's run in its list (whole-view tile ids).
@group(0) @binding(6) var<storage, read_write> tile_ranges: array<vec2<u32>>;
// The tiles filed by work class for the tile order: WORK_CLASSES counts (cleared every
// frame), then each tile's place in its class (by its index within the band).
@group(0) @binding(7) var<storage, read_write> tile_work: array<atomic<u32>>;

const WG: u32 = 256u;
const WORDS: u32 = WG / 32u;

// Per tile of the bin, a bit per thread of the chunk: the pairs that go to that tile.
var<workgroup> goes_to: array<atomic<u32>, 32>;

fn write_slot(tile: u32, at: u32, slot: u32) {
    switch tile {
        case 0u: { list_0[at] = slot; }
        case 1u: { list_1[at] = slot; }
        case 2u: { list_2[at] = slot; }
        default: { list_3[at] = slot; }
    }
}

@compute @workgroup_size(256)
fn tile_split(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_index) thread: u32,
) {
    let across = bins_across(view);
    let bin = vec2<u32>(group.x, group.y + view.band_first_row / 2u);
    let range = bin_ranges[bin.x + bin.y * across];
    let word = thread / 32u;
    let bit = 1u << (thread % 32u);
    // Pairs written to each of the four lists so far.
    var written = vec4<u32>(0u);
    for (var start = range.x; start < range.y; start += WG) {
        if thread < 4u * WORDS {
            atomicStore(&goes_to[thread], 0u);
        }
        workgroupBarrier();
        let index = start + thread;
        var pair = 0u;
        if index < range.y {
            pair = list_0[index];
        }
        let tiles = pair >> SLOT_BITS;
        for (var tile = 0u; tile < 4u; tile++) {
            if ((tiles >> tile) & 1u) == 1u {
                atomicOr(&goes_to[tile * WORDS + word], bit);
            }
        }
        workgroupBarrier();
        for (var tile = 0u; tile < 4u; tile++) {
            var before = 0u;
            var total = 0u;
            for (var w = 0u; w < WORDS; w++) {
                let members = atomicLoad(&goes_to[tile * WORDS + w]);
                total += countOneBits(members);
                if w < word {
                    before += countOneBits(members);
                } else if w == word {
                    before += countOneBits(members & (bit - 1u));
                }
            }
            if ((tiles >> tile) & 1u) == 1u {
                write_slot(tile, range.x + written[tile] + before, pair & SLOT_MASK);
            }
            written[tile] += total;
        }
        workgroupBarrier();
    }
    if thread < 4u {
        let tile = 2u * bin + vec2<u32>(thread & 1u, thread >> 1u);
        if tile.x < view.tile_count.x && tile.y < view.band_end_row {
            let pairs = written[thread];
            tile_ranges[tile.x + tile.y * view.tile_count.x] = vec2<u32>(range.x, range.x + pairs);
            let place = atomicAdd(&tile_work[work_class(pairs)], 1u);
            let in_band = tile.x + (tile.y - view.band_first_row) * view.tile_count.x;
            atomicStore(&tile_work[WORK_CLASSES + in_band], place);
        }
    }
}
