// pair slots: once the depth sort has ordered the visible splats' depth values (slot
// and pair count, `depth_value`), each splat's first pair slot in that order, the
// exclusive prefix sum of their pair counts taken nearest first. So duplicate writes
// the pairs nearest first, and a stable sort by bin alone keeps every tile's splats
// front to back. Three dispatches, blocks of SCAN_BLOCK splats in depth order:
//   count_blocks  sums each block's pair counts, taken from the sorted values (a
//                 spilled count read by slot), into `block_sums`
//   scan_blocks   one workgroup: the exclusive prefix of the block sums, in place, a
//                 SCAN_BLOCK at a time; the total is the pairs the view needs, and it
//                 writes the pairs kept within the capacity and their grid (duplicate's
//                 and the tile range's), which a dispatch of its own did before
//   scan_within   each block scans its counts, taken again, from its prefix into
//                 `first_pair_slots`
// The gather and a hierarchical scan (scan.wgsl) took five dispatches for the same,
// seven above a million splats: a gather, the scan's setup, its top, and a reduce and
// a downsweep per level below the top; and they read the counts once more.

#import bevy_splat::common::{
    COUNTER_VISIBLE_KEPT, COUNTER_PAIRS_NEEDED, COUNTER_PAIRS_KEPT, COUNTER_PAIR_DISPATCH,
    WORKGROUP_SIZE, GRID_MAX_X, PAIRS_SPILLED, depth_value_pairs, depth_value_slot,
    spilled_pairs_word,
}
#import bevy_splat::common::grid::{grid_of, linear_group}
#import bevy_splat::scan::block::{
    SCAN_WG, SCAN_ITEMS, SCAN_BLOCK, tile, workgroup_sum, scan_tile
}
// With PREPARES_SORT (and WRITES_PAIRS_NEEDED), scan_blocks also prepares the bin sort
// of the kept pairs (a one-sweep sort: its state at binding 6, its status at 7), which
// then runs without a setup dispatch of its own.
#ifdef PREPARES_SORT
#import bevy_splat::radix_sort::prepare::{prepare_state, clear_onesweep_counts}
#endif

// Read-only where the kernel's grid comes from it (indirect): written only by
// scan_blocks, built with the def WRITES_PAIRS_NEEDED.
#ifdef WRITES_PAIRS_NEEDED
@group(0) @binding(0) var<storage, read_write> counters: array<u32>;
#else
@group(0) @binding(0) var<storage, read> counters: array<u32>;
#endif
// The band's capacities (x: pairs, y: splats, as `indirect.wgsl` reads them).
@group(0) @binding(5) var<uniform> capacities: vec4<u32>;
// The depth values (`depth_value`), nearest first: the depth sort's sorted values.
@group(0) @binding(1) var<storage, read> by_depth: array<u32>;
// The preprocess's buffer of depth keys, whose spilled pair counts lie by slot after the
// splat capacity (`spilled_pairs_word`).
@group(0) @binding(2) var<storage, read> spilled_pairs: array<u32>;
@group(0) @binding(3) var<storage, read_write> first_pair_slots: array<u32>;
// One word per block: its count, then the pairs of the blocks before it.
@group(0) @binding(4) var<storage, read_write> block_sums: array<u32>;

var<workgroup> kept_splats: u32;

// The pair count of the `j`-th visible splat nearest first: from its depth value, or
// where it spilled, from beside the depth keys.
fn pair_count(j: u32) -> u32 {
    let value = by_depth[j];
    let count = depth_value_pairs(value);
    if count == PAIRS_SPILLED {
        return spilled_pairs[spilled_pairs_word(capacities.y, depth_value_slot(value))];
    }
    return count;
}

// The kept visible splats, the same for every thread (the barriers that follow need
// uniform control flow).
fn kept(t: u32) -> u32 {
    if t == 0u {
        kept_splats = counters[COUNTER_VISIBLE_KEPT];
    }
    return workgroupUniformLoad(&kept_splats);
}

@compute @workgroup_size(SCAN_WG)
fn count_blocks(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let block = linear_group(wid, nwg);
    let n = kept(t);
    let start = block * SCAN_BLOCK;
    if start >= n {
        return;
    }
    var sum = 0u;
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        let j = start + i * SCAN_WG + t;
        if j < n {
            sum += pair_count(j);
        }
    }
    let total = workgroup_sum(t, sum);
    if t == 0u {
        block_sums[block] = total;
    }
}

#ifdef WRITES_PAIRS_NEEDED
@compute @workgroup_size(SCAN_WG)
fn scan_blocks(@builtin(local_invocation_index) t: u32) {
    let blocks = (kept(t) + SCAN_BLOCK - 1u) / SCAN_BLOCK;
    var before = 0u;
    for (var start = 0u; start < blocks; start += SCAN_BLOCK) {
        for (var i = 0u; i < SCAN_ITEMS; i++) {
            let j = i * SCAN_WG + t;
            var x = 0u;
            if start + j < blocks {
                x = block_sums[start + j];
            }
            tile[j] = x;
        }
        before += scan_tile(t, before);
        for (var i = 0u; i < SCAN_ITEMS; i++) {
            let j = i * SCAN_WG + t;
            if start + j < blocks {
                block_sums[start + j] = tile[j];
            }
        }
    }
    if t == 0u {
        counters[COUNTER_PAIRS_NEEDED] = before;
        let kept = min(before, capacities.x);
        counters[COUNTER_PAIRS_KEPT] = kept;
        let grid = grid_of((kept + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE, GRID_MAX_X);
        counters[COUNTER_PAIR_DISPATCH] = grid.x;
        counters[COUNTER_PAIR_DISPATCH + 1u] = grid.y;
        counters[COUNTER_PAIR_DISPATCH + 2u] = grid.z;
#ifdef PREPARES_SORT
        prepare_state(kept, vec2<u32>(0u));
#endif
    }
#ifdef PREPARES_SORT
    clear_onesweep_counts(t, SCAN_WG);
#endif
}
#endif

@compute @workgroup_size(SCAN_WG)
fn scan_within(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let block = linear_group(wid, nwg);
    let n = kept(t);
    let start = block * SCAN_BLOCK;
    if start >= n {
        return;
    }
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        let j = i * SCAN_WG + t;
        var x = 0u;
        if start + j < n {
            x = pair_count(start + j);
        }
        tile[j] = x;
    }
    scan_tile(t, block_sums[block]);
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        let j = i * SCAN_WG + t;
        if start + j < n {
            first_pair_slots[start + j] = tile[j];
        }
    }
}
