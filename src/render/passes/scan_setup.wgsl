// Prefix scan, setup kernel: one thread turns the element count n (only known on the
// GPU) into the per-level element counts and indirect dispatch arguments of the
// hierarchical scan in `scan.wgsl`, in the records of `state` (scan_state.wgsl).

#import bevy_splat::common::grid::grid_of
#import bevy_splat::scan::state::{ScanConfig, ScanLevel}

// Values scanned by one workgroup, and the most workgroups a dispatch may have along
// x (per scan: tests set a small one); shader defs from `scan.rs`.
const SCAN_BLOCK: u32 = #{SCAN_BLOCK}u;
const MAX_GROUPS_X: u32 = #{SCAN_MAX_GROUPS_X}u;

// The state: the configuration, then one record per level, each SCAN_RECORD_BYTES
// long (`RECORD_BYTES` in scan.rs).
// Padded with named words, not `@size`: naga's WGSL writer, which writes what the
// browser compiles on the web, drops `@size` (tests/layout.rs).
struct ConfigRecord {
    config: ScanConfig,
    _pad: array<u32, #{SCAN_CONFIG_PAD_WORDS}>,
}
struct LevelRecord {
    level: ScanLevel,
    _pad: array<u32, #{SCAN_LEVEL_PAD_WORDS}>,
}
struct ScanState {
    head: ConfigRecord,
    levels: array<LevelRecord>,
}

@group(0) @binding(0) var<storage, read> count_src: array<u32>;
@group(0) @binding(1) var<storage, read_write> state: ScanState;

@compute @workgroup_size(1)
fn setup() {
    let capacity = state.head.config.capacity;
    let levels = state.head.config.levels;
    var n = min(count_src[state.head.config.count_word], capacity);
    for (var k = 0u; k < levels; k++) {
        let groups = n / SCAN_BLOCK + select(0u, 1u, n % SCAN_BLOCK != 0u);
        // The kernels linearise the group id; surplus groups of the last row exit.
        let grid = grid_of(groups, MAX_GROUPS_X);
        state.levels[k].level.count = n;
        state.levels[k].level.grid_x = grid.x;
        state.levels[k].level.grid_y = grid.y;
        state.levels[k].level.grid_z = grid.z;
        state.levels[k].level.groups = groups;
        n = groups;
    }
}
