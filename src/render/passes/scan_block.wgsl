// Prefix scan of one workgroup's block of u32 values in workgroup memory: what the
// hierarchical scan's kernels (scan.wgsl) and the pair slots' (pair_slots.wgsl) share.
// A kernel fills `tile` with its block, coalesced (value j of the block from thread
// j % SCAN_WG), and `scan_tile` scans it in place with each thread taking
// SCAN_ITEMS consecutive values, its sum then raked across the workgroup.
#define_import_path bevy_splat::scan::block

// The sizes are shader defs made from their Rust definitions in `scan.rs`: threads per
// workgroup, values per thread, values per workgroup (SCAN_BLOCK = SCAN_WG *
// SCAN_ITEMS), and the threads that rake the per-thread sums (SCAN_WG = RAKE * RAKE).
const SCAN_WG: u32 = #{SCAN_WORKGROUP_SIZE}u;
const SCAN_ITEMS: u32 = #{SCAN_ITEMS_PER_THREAD}u;
const SCAN_BLOCK: u32 = #{SCAN_BLOCK}u;
const RAKE: u32 = #{SCAN_RAKE}u;

// The block's values, staged so that global loads and stores are coalesced while
// each thread scans SCAN_ITEMS consecutive values.
var<workgroup> tile: array<u32, SCAN_BLOCK>;
// One sum per thread, then the raking partials.
var<workgroup> thread_sums: array<u32, SCAN_WG>;
var<workgroup> rake_sums: array<u32, RAKE>;
var<workgroup> block_total: u32;

// Exclusive scan of one u32 per thread across the workgroup by raking: RAKE threads
// each scan RAKE consecutive thread sums, one thread scans their totals. Returns the
// exclusive prefix of `v`; leaves the workgroup total in `block_total`.
fn workgroup_exclusive_scan(t: u32, v: u32) -> u32 {
    thread_sums[t] = v;
    workgroupBarrier();
    if t < RAKE {
        var run = 0u;
        for (var i = 0u; i < RAKE; i++) {
            let x = thread_sums[t * RAKE + i];
            thread_sums[t * RAKE + i] = run;
            run += x;
        }
        rake_sums[t] = run;
    }
    workgroupBarrier();
    if t == 0u {
        var run = 0u;
        for (var i = 0u; i < RAKE; i++) {
            let x = rake_sums[i];
            rake_sums[i] = run;
            run += x;
        }
        block_total = run;
    }
    workgroupBarrier();
    return thread_sums[t] + rake_sums[t / RAKE];
}

// The sum of one u32 per thread across the workgroup, for every thread.
fn workgroup_sum(t: u32, v: u32) -> u32 {
    workgroup_exclusive_scan(t, v);
    return block_total;
}

// Scans `tile` in place, once the caller has filled it: each value becomes the sum of
// the values before it (wrapping) plus `offset`. Returns the tile's total; on return
// the tile may be read and written again.
fn scan_tile(t: u32, offset: u32) -> u32 {
    workgroupBarrier();
    var s = 0u;
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        s += tile[t * SCAN_ITEMS + i];
    }
    var run = workgroup_exclusive_scan(t, s) + offset;
    let total = block_total;
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        let x = tile[t * SCAN_ITEMS + i];
        tile[t * SCAN_ITEMS + i] = run;
        run += x;
    }
    workgroupBarrier();
    return total;
}
