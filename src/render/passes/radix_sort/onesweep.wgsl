// Radix sort, one-sweep steps: one `histogram` kernel counts the digits of every pass
// in a single read of the keys, then each pass is one `scatter` whose blocks find
// their digits' first output slots by decoupled look-back (look_back.wgsl, which
// says why its waits are bounded). Composed with the shader def SORT_ONESWEEP.

#import bevy_splat::radix_sort::state::{
    HISTOGRAM_BLOCKS, MAX_PASSES, RADIX, RADIX_BITS, SORT_BLOCK, SORT_ITEMS, WG
}
#import bevy_splat::common::grid::linear_group
#import bevy_splat::radix_sort::keys::{digit_at, keys_in, params, pass_index, state}
#import bevy_splat::radix_sort::look_back::{look_back_word, status}
#import bevy_splat::radix_sort::scatter::{ScatterThread, scatter_block}

#ifdef SORT_KEY_64
alias SortKey = vec2<u32>;
#else
alias SortKey = u32;
#endif

var<workgroup> pass_counts: array<atomic<u32>, MAX_PASSES * RADIX>;
var<workgroup> block_index: u32;

// Thread t adds `length` pairs of digit `digit` of pass `pass_id`.
fn add_run(pass_id: u32, digit: u32, length: u32) {
    if digit < RADIX {
        atomicAdd(&pass_counts[pass_id * RADIX + digit], length);
    }
}

// Bound with the parameters of the sort's last pass: they say how many bits it sorts.
@compute @workgroup_size(WG)
fn histogram(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let blocks = state.blocks;
    let first_block = linear_group(wid, nwg) * HISTOGRAM_BLOCKS;
    if first_block >= blocks {
        return;
    }
    let n = state.n;
    let last_block = min(first_block + HISTOGRAM_BLOCKS, blocks);
    for (var p = 0u; p < MAX_PASSES; p++) {
        atomicStore(&pass_counts[p * RADIX + t], 0u);
    }
    for (var b = first_block; b < last_block; b++) {
        atomicStore(&status.look_back[look_back_word(0u, b, t)], 0u);
    }
    workgroupBarrier();
    let key_bits = params.word * 32u + params.shift + countOneBits(params.mask);
    let passes = (key_bits + RADIX_BITS - 1u) / RADIX_BITS;
    // As in the classic count: SORT_ITEMS consecutive pairs per thread, loaded first,
    // and runs of equal digits added at once.
    for (var b = first_block; b < last_block; b++) {
        let first = b * SORT_BLOCK + t * SORT_ITEMS;
        var keys: array<SortKey, SORT_ITEMS>;
        for (var i = 0u; i < SORT_ITEMS; i++) {
            if first + i < n {
                keys[i] = keys_in[first + i];
            }
        }
        for (var p = 0u; p < passes; p++) {
            let bit = p * RADIX_BITS;
            let mask = select(RADIX - 1u, params.mask, p + 1u == passes);
            var run_digit = RADIX;
            var run_length = 0u;
            for (var i = 0u; i < SORT_ITEMS; i++) {
                // (RADIX past n, rather than a `break`: see look_back.wgsl.)
                var digit = RADIX;
                if first + i < n {
                    digit = digit_at(keys[i], bit / 32u, bit % 32u, mask);
                }
                if digit == run_digit {
                    run_length += 1u;
                } else {
                    add_run(p, run_digit, run_length);
                    run_digit = digit;
                    run_length = 1u;
                }
            }
            add_run(p, run_digit, run_length);
        }
    }
    workgroupBarrier();
    for (var p = 0u; p < passes; p++) {
        let count = atomicLoad(&pass_counts[p * RADIX + t]);
        if count != 0u {
            atomicAdd(&status.digit_totals[p * RADIX + t], count);
        }
    }
}

@compute @workgroup_size(WG)
fn scatter(thread: ScatterThread) {
    if thread.index == 0u {
        block_index = atomicAdd(&status.block_counters[pass_index()], 1u);
    }
    let block = workgroupUniformLoad(&block_index);
    if block >= state.blocks {
        return;
    }
    scatter_block(block, thread);
}
