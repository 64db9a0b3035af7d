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
// to `list_0` land within the chunk's own slots or earlier ones, which were read (and
// used) before the chunk's first barrier; the next chunk's slots are never written.

#import bevy_splat::common::{
    SplatView, SLOT_BITS, SLOT_MASK, bins_across, work_class, WORK_CLASSES, WORKGROUP_SIZE,
}

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

const WG: u32 = WORKGROUP_SIZE;
// Pairs per thread in a chunk: fewer chunks make a dense bin's chain of barriers
// shorter, and each thread's reads of the next chunk go out together.
const PER: u32 = 4u;
const CHUNK: u32 = WG * PER;
// Words of one tile's mask over a chunk, and the mask words of all four tiles.
const WORDS: u32 = CHUNK / 32u;
const MASK_WORDS: u32 = 4u * WORDS;

// Per tile of the bin, a bit per pair of the chunk (pair i of the chunk is bit i % 32
// of word i / 32): the pairs that go to that tile. Two sets, one per chunk in turn, so
// that one is cleared while the other is read.
var<workgroup> goes_to: array<array<atomic<u32>, MASK_WORDS>, 2>;
// Per tile and word of the chunk: the chunk's pairs for that tile in the earlier words.
var<workgroup> earlier_words: array<u32, MASK_WORDS>;

fn write_slot(tile: u32, at: u32, slot: u32) {
    switch tile {
        case 0u: { list_0[at] = slot; }
        case 1u: { list_1[at] = slot; }
        case 2u: { list_2[at] = slot; }
        default: { list_3[at] = slot; }
    }
}

// The thread's pairs of the chunk starting at `start` (pair k at start + k·WG +
// thread), 0 (a pair for no tile) past the range.
fn read_chunk(start: u32, end: u32, thread: u32) -> array<u32, PER> {
    var pairs: array<u32, PER>;
    for (var k = 0u; k < PER; k++) {
        let index = start + k * WG + thread;
        pairs[k] = 0u;
        if index < end {
            pairs[k] = list_0[index];
        }
    }
    return pairs;
}

@compute @workgroup_size(WG)
fn tile_split(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_index) thread: u32,
) {
    let across = bins_across(view);
    let bin = vec2<u32>(group.x, group.y + view.band_first_row / 2u);
    let range = bin_ranges[bin.x + bin.y * across];
    let bit = 1u << (thread % 32u);
    if thread < MASK_WORDS {
        atomicStore(&goes_to[0][thread], 0u);
    }
    workgroupBarrier();
    // Each thread's pairs of the next chunk are read while the current one is ranked.
    var next = read_chunk(range.x, range.y, thread);
    // Pairs written to each of the four lists so far.
    var written = vec4<u32>(0u);
    var masks = 0u;
    for (var start = range.x; start < range.y; start += CHUNK) {
        let pairs = next;
        for (var k = 0u; k < PER; k++) {
            let word = (k * WG + thread) / 32u;
            let tiles = pairs[k] >> SLOT_BITS;
            for (var tile = 0u; tile < 4u; tile++) {
                if ((tiles >> tile) & 1u) == 1u {
                    atomicOr(&goes_to[masks][tile * WORDS + word], bit);
                }
            }
        }
        next = read_chunk(start + CHUNK, range.y, thread);
        workgroupBarrier();
        // One thread per (tile, word) counts the tile's pairs in the earlier words, and
        // clears the other set for the next chunk (its last readers are past the
        // barrier above).
        if thread < MASK_WORDS {
            let first = thread - thread % WORDS;
            var count = 0u;
            for (var w = first; w < thread; w++) {
                count += countOneBits(atomicLoad(&goes_to[masks][w]));
            }
            earlier_words[thread] = count;
            atomicStore(&goes_to[1u - masks][thread], 0u);
        }
        workgroupBarrier();
        for (var k = 0u; k < PER; k++) {
            let word = (k * WG + thread) / 32u;
            let tiles = pairs[k] >> SLOT_BITS;
            for (var tile = 0u; tile < 4u; tile++) {
                if ((tiles >> tile) & 1u) == 1u {
                    let at = tile * WORDS + word;
                    let members = atomicLoad(&goes_to[masks][at]);
                    let rank = earlier_words[at] + countOneBits(members & (bit - 1u));
                    write_slot(tile, range.x + written[tile] + rank, pairs[k] & SLOT_MASK);
                }
            }
        }
        for (var tile = 0u; tile < 4u; tile++) {
            let last = tile * WORDS + WORDS - 1u;
            written[tile] += earlier_words[last] + countOneBits(atomicLoad(&goes_to[masks][last]));
        }
        masks = 1u - masks;
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
