// Radix sort, setup kernel: one thread turns the pair count n (only known on the GPU)
// into the block count and the indirect dispatch arguments of the count and scatter
// kernels, and the length of the digit histogram that the prefix scan sums. The
// one-sweep sort's setup also clears its block counters and digit totals.
//
// `radix_sort.rs` prepends the constants this file uses:
//   SORT_BLOCK: u32     pairs handled by one workgroup
//   RADIX: u32          digit values (bins) per pass
//   MAX_GROUPS_X: u32   most workgroups a dispatch may have along x
//   HISTOGRAM_BLOCKS    blocks per workgroup of the one-sweep histogram
//   STATUS_CLEARED      leading words of the one-sweep status that start each sort at 0
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
//   [16..19] dispatch args of the one-sweep histogram

@group(0) @binding(0) var<storage, read> count_src: array<u32>;
@group(0) @binding(1) var<storage, read_write> state: array<u32>;
@group(0) @binding(2) var<storage, read_write> status: array<u32>;

const NO_RANGE: u32 = 0xffffffffu;

// A 2-D grid of at least `groups` workgroups, at `state[at..at + 3]`.
fn write_grid(at: u32, groups: u32) {
    let x = min(groups, MAX_GROUPS_X);
    state[at] = x;
    state[at + 1u] = select(0u, (groups + x - 1u) / x, x != 0u);
    state[at + 2u] = 1u;
}

@compute @workgroup_size(1)
fn setup() {
    setup_state();
}

@compute @workgroup_size(256)
fn setup_onesweep(@builtin(local_invocation_index) t: u32) {
    if t == 0u {
        setup_state();
    }
    for (var word = t; word < STATUS_CLEARED; word += 256u) {
        status[word] = 0u;
    }
}

fn setup_state() {
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
    state[4] = n;
    state[5] = blocks;
    write_grid(6u, blocks);
    state[9] = blocks * RADIX;
    write_grid(16u, (blocks + HISTOGRAM_BLOCKS - 1u) / HISTOGRAM_BLOCKS);
}
