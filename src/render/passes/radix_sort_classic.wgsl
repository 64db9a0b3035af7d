// Radix sort, classic steps (appended to radix_sort.wgsl): per pass a `count` kernel
// stores every block's digit histogram digit-major (hist[digit * blocks + block]), an
// exclusive prefix scan of `hist` (scan.wgsl) turns each entry into the first output
// slot of that (digit, block), and `scatter` reads it. Any GPU runs it: no workgroup
// waits for another.

@group(0) @binding(3) var<storage, read_write> hist: array<u32>;

// The count kernel spreads its histogram over this many copies (thread t adds to copy
// t % HIST_COPIES), so that neighbouring threads counting the same digit do not all
// hit one workgroup-memory word.
const HIST_COPIES: u32 = 8u;

var<workgroup> digit_counts: array<atomic<u32>, HIST_COPIES * RADIX>;

@compute @workgroup_size(WG)
fn count(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let block = linear_group(wid, nwg);
    let blocks = state[5];
    if block >= blocks {
        return;
    }
    let n = state[4];
    for (var c = 0u; c < HIST_COPIES; c++) {
        atomicStore(&digit_counts[c * RADIX + t], 0u);
    }
    // Each thread counts SORT_ITEMS consecutive pairs (all loads first, to have them
    // in flight together) and adds runs of equal digits at once: sorted or
    // low-entropy digits cost few atomics.
    let first = block * SORT_BLOCK + t * SORT_ITEMS;
    var digits: array<u32, SORT_ITEMS>;
    for (var i = 0u; i < SORT_ITEMS; i++) {
        digits[i] = RADIX;
        if first + i < n {
            digits[i] = digit_of(keys_in[first + i]);
        }
    }
    workgroupBarrier();
    let copy = (t % HIST_COPIES) * RADIX;
    var run_digit = digits[0];
    var run_length = 1u;
    for (var i = 1u; i < SORT_ITEMS; i++) {
        if digits[i] == run_digit {
            run_length += 1u;
        } else {
            if run_digit < RADIX {
                atomicAdd(&digit_counts[copy + run_digit], run_length);
            }
            run_digit = digits[i];
            run_length = 1u;
        }
    }
    if run_digit < RADIX {
        atomicAdd(&digit_counts[copy + run_digit], run_length);
    }
    workgroupBarrier();
    var total = 0u;
    for (var c = 0u; c < HIST_COPIES; c++) {
        total += atomicLoad(&digit_counts[c * RADIX + t]);
    }
    hist[t * blocks + block] = total;
}

// The scan of `hist` gives each digit's first output slot directly.
fn publish_block_counts(block: u32, digit: u32, count: u32) -> u32 {
    return 0u;
}

fn first_output_slot(block: u32, digit: u32, count: u32, digit_start: u32) -> u32 {
    return hist[digit * state[5] + block];
}

@compute @workgroup_size(WG)
fn scatter(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let block = linear_group(wid, nwg);
    if block >= state[5] {
        return;
    }
    scatter_block(block, t);
}
