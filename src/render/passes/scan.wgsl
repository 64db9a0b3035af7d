// Prefix scan kernels: an exclusive prefix sum of u32 values, in place, by
// reduce-then-scan over a hierarchy of levels (level 0 = the values, level k + 1 = one
// sum per block of level k):
//   reduce     level k -> block sums into level k + 1 (for every level below the top)
//   top        one workgroup scans the top level (at most SCAN_BLOCK values) and
//              writes the grand total
//   downsweep  level k: scan each block and add its offset from level k + 1
//
// `level` is this level's record of the state written by `scan_setup.wgsl`
// (`ScanLevel`, scan_state.wgsl).

#import bevy_splat::common::grid::linear_group
#import bevy_splat::scan::state::ScanLevel

// The sizes are shader defs made from their Rust definitions in `scan.rs`:
// threads per workgroup, values per thread, values per workgroup
// (SCAN_BLOCK = WG * SCAN_ITEMS), and the threads that rake the per-thread sums
// (WG = RAKE * RAKE).
const WG: u32 = #{SCAN_WORKGROUP_SIZE}u;
const SCAN_ITEMS: u32 = #{SCAN_ITEMS_PER_THREAD}u;
const SCAN_BLOCK: u32 = #{SCAN_BLOCK}u;
const RAKE: u32 = #{SCAN_RAKE}u;

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<storage, read> level: ScanLevel;
@group(0) @binding(3) var<storage, read_write> total_out: array<u32>;

// The block's values, staged so that global loads and stores are coalesced while
// each thread scans SCAN_ITEMS consecutive values.
var<workgroup> tile: array<u32, SCAN_BLOCK>;
// One sum per thread, then the raking partials.
var<workgroup> thread_sums: array<u32, WG>;
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

// Scans the block that starts at `start` in place (n = element count of the level),
// adding `offset` to every result. Returns the block's total.
fn scan_block(t: u32, start: u32, n: u32, offset: u32) -> u32 {
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        let j = i * WG + t;
        var x = 0u;
        if start + j < n {
            x = data[start + j];
        }
        tile[j] = x;
    }
    workgroupBarrier();
    var s = 0u;
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        s += tile[t * SCAN_ITEMS + i];
    }
    var run = workgroup_exclusive_scan(t, s) + offset;
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        let x = tile[t * SCAN_ITEMS + i];
        tile[t * SCAN_ITEMS + i] = run;
        run += x;
    }
    workgroupBarrier();
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        let j = i * WG + t;
        if start + j < n {
            data[start + j] = tile[j];
        }
    }
    return block_total;
}

@compute @workgroup_size(WG)
fn reduce(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let block = linear_group(wid, nwg);
    if block >= level.groups {
        return;
    }
    let n = level.count;
    let start = block * SCAN_BLOCK;
    var s = 0u;
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        let j = start + i * WG + t;
        if j < n {
            s += data[j];
        }
    }
    thread_sums[t] = s;
    workgroupBarrier();
    if t < RAKE {
        var r = 0u;
        for (var i = 0u; i < RAKE; i++) {
            r += thread_sums[t * RAKE + i];
        }
        rake_sums[t] = r;
    }
    workgroupBarrier();
    if t == 0u {
        var r = 0u;
        for (var i = 0u; i < RAKE; i++) {
            r += rake_sums[i];
        }
        sums[block] = r;
    }
}

@compute @workgroup_size(WG)
fn top(@builtin(local_invocation_index) t: u32) {
    let total = scan_block(t, 0u, level.count, 0u);
    if t == 0u {
        total_out[level.total_word] = total;
    }
}

@compute @workgroup_size(WG)
fn downsweep(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let block = linear_group(wid, nwg);
    if block >= level.groups {
        return;
    }
    scan_block(t, block * SCAN_BLOCK, level.count, sums[block]);
}
