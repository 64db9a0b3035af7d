// duplicate: one thread per visible splat, nearest first. Writes one (bin, splat) pair
// for every bin (2×2 tiles) the splat touches, at the offset the scan gave it: the pairs
// come out in depth order, so a stable sort by bin leaves each bin's splats front to
// back. Keys are the bin ids; values the splat's slot with the bin's tiles it reaches
// as 4 bits above it (`SLOT_BITS`), for the split into tile lists after the sort.
//
// A workgroup's splats own one contiguous run of pair slots (the scan is in thread
// order). Its first WINDOW slots are gathered in workgroup memory and written by
// consecutive threads: written by the thread that makes them, each 4-byte pair went to
// its own memory sector. Pairs past the window are written directly.

#import bevy_splat::common::{
    SplatView, ProjectedSplat, splat_rows, SLOT_BITS, bins_across, bin_row_spans,
    bin_columns, bin_tiles, linear_thread, WORKGROUP_SIZE, COUNTER_VISIBLE_KEPT,
    depth_value_slot,
}

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(1) var<storage, read> projected: array<ProjectedSplat>;
// The scanned pair counts, in depth order.
@group(0) @binding(2) var<storage, read> first_pair_slots: array<u32>;
@group(0) @binding(3) var<storage, read> counters: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys: array<u32>;
@group(0) @binding(5) var<storage, read_write> values: array<u32>;
// The visible splats' depth values (`depth_value`: slot and pair count), nearest first.
@group(0) @binding(6) var<storage, read> by_depth: array<u32>;

const WG: u32 = WORKGROUP_SIZE;
// 8 KiB of keys and values: about 4 pairs per splat, more than most workgroups make.
const WINDOW: u32 = 1024u;

var<workgroup> window_keys: array<u32, WINDOW>;
var<workgroup> window_values: array<u32, WINDOW>;
// The workgroup's first pair slot, and the end of its pairs.
var<workgroup> window_start: u32;
var<workgroup> pairs_end: atomic<u32>;

@compute @workgroup_size(WG)
fn duplicate(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) thread: u32,
) {
    let index = linear_thread(gid);
    // Threads past the visible splats stay for the barriers.
    let has_splat = index < counters[COUNTER_VISIBLE_KEPT];
    var splat_slot = 0u;
    var slot = 0u;
    if has_splat {
        splat_slot = depth_value_slot(by_depth[index]);
        slot = first_pair_slots[index];
    }
    if thread == 0u {
        window_start = slot;
        atomicStore(&pairs_end, 0u);
    }
    workgroupBarrier();
    let start = window_start;

    if has_splat {
        let splat = projected[splat_slot];
        let rows = splat_rows(splat, view);
        let across = bins_across(view);
        for (var bin_row = rows.x / 2u; bin_row <= rows.y / 2u; bin_row++) {
            let spans = bin_row_spans(splat, rows, bin_row, view);
            let top = bin_columns(spans.xy);
            let bottom = bin_columns(spans.zw);
            for (var col = min(top.x, bottom.x); col <= max(top.y, bottom.y); col++) {
                let tiles = bin_tiles(spans, col);
                // Between the two rows' columns (a gap) the splat reaches no tile.
                if tiles == 0u {
                    continue;
                }
                let key = bin_row * across + u32(col);
                let value = splat_slot | (tiles << SLOT_BITS);
                // Pairs past the capacity are dropped this frame (here and in the
                // window's write below); the CPU sees the total and grows the buffers
                // for the next one.
                if slot - start < WINDOW {
                    window_keys[slot - start] = key;
                    window_values[slot - start] = value;
                } else if slot < view.pair_capacity {
                    keys[slot] = key;
                    values[slot] = value;
                }
                slot++;
            }
        }
        atomicMax(&pairs_end, slot);
    }
    workgroupBarrier();

    // Every slot of [start, end) was made by one of the workgroup's splats.
    let end = min(atomicLoad(&pairs_end), view.pair_capacity);
    let in_window = min(WINDOW, select(0u, end - start, end > start));
    for (var i = thread; i < in_window; i += WG) {
        keys[start + i] = window_keys[i];
        values[start + i] = window_values[i];
    }
}
