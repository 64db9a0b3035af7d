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

#import bevy_splat::scan::block::{
    SCAN_WG, SCAN_ITEMS, SCAN_BLOCK, tile, workgroup_sum, scan_tile
}

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<storage, read> level: ScanLevel;
@group(0) @binding(3) var<storage, read_write> total_out: array<u32>;

// Scans the block that starts at `start` in place (n = element count of the level),
// adding `offset` to every result. Returns the block's total.
fn scan_block(t: u32, start: u32, n: u32, offset: u32) -> u32 {
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        let j = i * SCAN_WG + t;
        var x = 0u;
        if start + j < n {
            x = data[start + j];
        }
        tile[j] = x;
    }
    let total = scan_tile(t, offset);
    for (var i = 0u; i < SCAN_ITEMS; i++) {
        let j = i * SCAN_WG + t;
        if start + j < n {
            data[start + j] = tile[j];
        }
    }
    return total;
}

@compute @workgroup_size(SCAN_WG)
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
        let j = start + i * SCAN_WG + t;
        if j < n {
            s += data[j];
        }
    }
    let total = workgroup_sum(t, s);
    if t == 0u {
        sums[block] = total;
    }
}

@compute @workgroup_size(SCAN_WG)
fn top(@builtin(local_invocation_index) t: u32) {
    let total = scan_block(t, 0u, level.count, 0u);
    if t == 0u {
        total_out[level.total_word] = total;
    }
}

@compute @workgroup_size(SCAN_WG)
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
