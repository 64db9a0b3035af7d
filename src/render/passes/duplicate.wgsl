// duplicate: one thread per visible splat, nearest first. Writes one (tile, splat) pair
// for every tile the splat touches, at the offset the scan gave it: the pairs come out
// in depth order, so a stable sort by tile leaves each tile's splats front to back.
// Keys are the tile ids.
//
// A workgroup's splats own one contiguous run of pair slots (the scan is in thread
// order). Its first WINDOW slots are gathered in workgroup memory and written by
// consecutive threads: written by the thread that makes them, each 4-byte pair went to
// its own memory sector. Pairs past the window are written directly.

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(1) var<storage, read> projected: array<ProjectedSplat>;
// The scanned tile counts, in depth order.
@group(0) @binding(2) var<storage, read> tile_offsets: array<u32>;
@group(0) @binding(3) var<storage, read> counters: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys: array<u32>;
@group(0) @binding(5) var<storage, read_write> values: array<u32>;
// Slots of the visible splats, nearest first.
@group(0) @binding(6) var<storage, read> by_depth: array<u32>;

const WG: u32 = 256u;
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
    let has_splat = index < counters[3];
    var splat_slot = 0u;
    var slot = 0u;
    if has_splat {
        splat_slot = by_depth[index];
        slot = tile_offsets[index];
    }
    if thread == 0u {
        window_start = slot;
        atomicStore(&pairs_end, 0u);
    }
    workgroupBarrier();
    let start = window_start;

    if has_splat {
        let splat = projected[splat_slot];
        for (var row = first_row(splat); row <= last_row(splat); row++) {
            let span = tile_span_in_row(splat, row, view);
            for (var col = span.x; col <= span.y; col++) {
                let key = row * view.tile_count.x + u32(col);
                // Pairs past the capacity are dropped this frame (here and in the
                // window's write below); the CPU sees the total and grows the buffers
                // for the next one.
                if slot - start < WINDOW {
                    window_keys[slot - start] = key;
                    window_values[slot - start] = splat_slot;
                } else if slot < view.pair_capacity {
                    keys[slot] = key;
                    values[slot] = splat_slot;
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
