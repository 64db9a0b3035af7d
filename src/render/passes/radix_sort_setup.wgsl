// Radix sort, setup kernel: one thread turns the pair count n (only known on the GPU)
// into the block count and the indirect dispatch arguments of the count and scatter
// kernels, and the length of the digit histogram that the prefix scan sums.
//
// `radix_sort.rs` prepends the constants this file uses:
//   SORT_BLOCK: u32     pairs handled by one workgroup
//   RADIX: u32          digit values (bins) per pass
//   MAX_GROUPS_X: u32   most workgroups a dispatch may have along x
//
// Layout of `state` (u32 words):
//   [0] word index of n in `count_src`, [1] capacity       (written at creation)
//   [2] word index of the keys' range in `count_src` (largest low word, then the
//       complement of the smallest), or NO_RANGE; [3] the bits a ranged sort keeps
//   [4] n, [5] blocks, [6..9] dispatch args (x, y, z), [9] histogram length
//   [10] histogram total (written by the scan, unused)
//   [11] the smallest low word, [12] the shift: a ranged sort's digits are those of
//       (low word − [11]) >> [12], so that the range's top bits are the ones sorted
//   [13] 1: the first pass's values are the pairs' input indices (written at creation)

@group(0) @binding(0) var<storage, read> count_src: array<u32>;
@group(0) @binding(1) var<storage, read_write> state: array<u32>;

const NO_RANGE: u32 = 0xffffffffu;

@compute @workgroup_size(1)
fn setup() {
    var base = 0u;
    var shift = 0u;
    if state[2] != NO_RANGE {
        let most = count_src[state[2]];
        let least = ~count_src[state[2] + 1u];
        if most >= least {
            base = least;
            let bits = 32u - countLeadingZeros(most - least);
            shift = select(0u, bits - state[3], bits > state[3]);
        }
    }
    state[11] = base;
    state[12] = shift;
    let n = min(count_src[state[0]], state[1]);
    let blocks = n / SORT_BLOCK + select(0u, 1u, n % SORT_BLOCK != 0u);
    let x = min(blocks, MAX_GROUPS_X);
    let y = select(0u, (blocks + x - 1u) / x, x != 0u);
    state[4] = n;
    state[5] = blocks;
    state[6] = x;
    state[7] = y;
    state[8] = 1u;
    state[9] = blocks * RADIX;
}
