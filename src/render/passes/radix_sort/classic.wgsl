// Radix sort, classic steps: per pass a `count` kernel stores every block's digit
// histogram digit-major (hist[digit * blocks + block]), an exclusive prefix scan of
// `hist` (scan.wgsl) turns each entry into the first output slot of that (digit,
// block), and `scatter` reads it (classic_slots.wgsl). Any GPU runs it: no workgroup
// waits for another. Composed without the shader def SORT_ONESWEEP.

#import bevy_splat::radix_sort::state::{RADIX, SORT_BLOCK, SORT_ITEMS, WG}
#import bevy_splat::common::grid::linear_group
#import bevy_splat::radix_sort::keys::{digit_of, keys_in, state}
#import bevy_splat::radix_sort::classic_slots::hist
#import bevy_splat::radix_sort::scatter::{ScatterThread, scatter_block}

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
    let blocks = state.blocks;
    if block >= blocks {
        return;
    }
    let n = state.n;
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

@compute @workgroup_size(WG)
fn scatter(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    thread: ScatterThread,
) {
    let block = linear_group(wid, nwg);
    if block >= state.blocks {
        return;
    }
    scatter_block(block, thread);
}
