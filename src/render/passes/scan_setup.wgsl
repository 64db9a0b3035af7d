// Prefix scan, setup kernel: one thread turns the element count n (only known on the
// GPU) into the per-level element counts and indirect dispatch arguments of the
// hierarchical scan in `scan.wgsl`.
//
// Layout of `state` (u32 words, one 64-word record of 256 bytes each):
//   record 0:      [0] word index of n in `count_src`, [1] capacity, [2] level count
//   record 1 + k:  level k: [0] element count, [1..4] dispatch args (x, y, z),
//                  [4] workgroups doing work, [5] word index of the total in its binding

// Values scanned by one workgroup, and the most workgroups a dispatch may have along
// x (per scan: tests set a small one); shader defs from `scan.rs`.
const SCAN_BLOCK: u32 = #{SCAN_BLOCK}u;
const MAX_GROUPS_X: u32 = #{SCAN_MAX_GROUPS_X}u;
// Words of one record of the state.
const RECORD_WORDS: u32 = #{SCAN_RECORD_WORDS}u;

@group(0) @binding(0) var<storage, read> count_src: array<u32>;
@group(0) @binding(1) var<storage, read_write> state: array<u32>;

@compute @workgroup_size(1)
fn setup() {
    let capacity = state[1];
    let levels = state[2];
    var n = min(count_src[state[0]], capacity);
    for (var k = 0u; k < levels; k++) {
        let r = (k + 1u) * RECORD_WORDS;
        let groups = n / SCAN_BLOCK + select(0u, 1u, n % SCAN_BLOCK != 0u);
        // A 2-D grid: at most MAX_GROUPS_X along x, as many rows as needed; the
        // kernels linearise the group id and surplus groups of the last row exit.
        let x = min(groups, MAX_GROUPS_X);
        let y = select(0u, (groups + x - 1u) / x, x != 0u);
        state[r] = n;
        state[r + 1u] = x;
        state[r + 2u] = y;
        state[r + 3u] = 1u;
        state[r + 4u] = groups;
        n = groups;
    }
}
