// Radix sort, one-sweep steps (appended to radix_sort.wgsl): one `histogram` kernel
// counts the digits of every pass in a single read of the keys, then each pass is one
// `scatter` whose blocks find their digits' first output slots by decoupled look-back:
// block b publishes its digit counts, then adds up those of blocks b-1, b-2, ... until
// it meets one that has published its running total, and publishes its own. This saves
// every pass's count kernel, its prefix scan and the dispatches between them.
//
// A block waits only for blocks that took their index before it (the index comes from
// an atomic counter, in the order blocks start, not from the workgroup id), so the wait
// ends on any GPU that keeps running a workgroup once it has started: the host picks
// this way only where that holds (see `SortAlgorithm`).
//
// `status` (u32 words, laid out by radix_sort.rs; MAX_PASSES, TOTALS, REGIONS,
// HISTOGRAM_BLOCKS and LOOK_BACK_WINDOW prepended):
//   [0, MAX_PASSES)          per pass, the counter that hands out block indices
//   [TOTALS, +MAX_PASSES*RADIX)  per pass and digit, the count over all blocks
//   [REGIONS, ...)           two regions of blocks * RADIX look-back words, pass p in
//                            region p % 2: flag (2 bits) | count (30 bits)
// `radix_sort_setup.wgsl` clears the counters and totals, the histogram kernel the
// first pass's region, and each pass's scatter the next pass's.

@group(0) @binding(3) var<storage, read_write> status: array<atomic<u32>>;

// A look-back word: the block's own counts, or its counts plus all earlier blocks'.
const BLOCK_COUNT: u32 = 1u << 30u;
const RUNNING_TOTAL: u32 = 2u << 30u;
const COUNT_MASK: u32 = (1u << 30u) - 1u;

var<workgroup> pass_counts: array<atomic<u32>, MAX_PASSES * RADIX>;
var<workgroup> block_index: u32;

fn look_back_word(pass_id: u32, block: u32, digit: u32) -> u32 {
    return REGIONS + ((pass_id % 2u) * state[5] + block) * RADIX + digit;
}

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
    let blocks = state[5];
    let first_block = linear_group(wid, nwg) * HISTOGRAM_BLOCKS;
    if first_block >= blocks {
        return;
    }
    let n = state[4];
    let last_block = min(first_block + HISTOGRAM_BLOCKS, blocks);
    for (var p = 0u; p < MAX_PASSES; p++) {
        atomicStore(&pass_counts[p * RADIX + t], 0u);
    }
    for (var b = first_block; b < last_block; b++) {
        atomicStore(&status[look_back_word(0u, b, t)], 0u);
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
                // (RADIX past n, rather than a `break`: see `first_output_slot`.)
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
            atomicAdd(&status[TOTALS + p * RADIX + t], count);
        }
    }
}

// Publishes this block's count of `digit` for the blocks after it (block 0's is
// already a running total), clears the next pass's word, and returns the digit's
// count over all blocks.
fn publish_block_counts(block: u32, digit: u32, count: u32) -> u32 {
    let pass_id = pass_index();
    let flag = select(BLOCK_COUNT, RUNNING_TOTAL, block == 0u);
    atomicStore(&status[look_back_word(pass_id, block, digit)], flag | count);
    atomicStore(&status[look_back_word(pass_id + 1u, block, digit)], 0u);
    return atomicLoad(&status[TOTALS + pass_id * RADIX + digit]);
}

// `digit_start`: the pairs of smaller digits over all blocks. Adds the earlier blocks'
// pairs of `digit`, nearest first, waiting for each to publish. Every step reads a
// window of LOOK_BACK_WINDOW blocks at once: the blocks that start together all
// publish their counts before any running total reaches them, so a block walks back
// over many counts, and one memory latency per block would add up along the chain.
fn first_output_slot(block: u32, digit: u32, count: u32, digit_start: u32) -> u32 {
    if block == 0u {
        return digit_start;
    }
    let pass_id = pass_index();
    var before = 0u;
    // Blocks [0, look) are still to add.
    var look = block;
    // The loops' conditions carry the search's state, with no `break` or `continue`
    // under a condition that differs between lanes: written that way, lavapipe let
    // finished lanes go on adding, or waiting ones skip a block.
    var searching = true;
    while searching {
        var words: array<u32, LOOK_BACK_WINDOW>;
        for (var i = 0u; i < LOOK_BACK_WINDOW; i++) {
            words[i] = 0u;
            if i < look {
                words[i] = atomicLoad(&status[look_back_word(pass_id, look - 1u - i, digit)]);
            }
        }
        // Take the window's words in order up to the first unpublished one or the
        // first running total.
        var taking = true;
        for (var i = 0u; i < LOOK_BACK_WINDOW; i++) {
            let flag = words[i] & ~COUNT_MASK;
            taking = taking && flag != 0u;
            if taking {
                before += words[i] & COUNT_MASK;
                look -= 1u;
                taking = flag != RUNNING_TOTAL;
                searching = taking && look != 0u;
            }
        }
    }
    atomicStore(&status[look_back_word(pass_id, block, digit)], RUNNING_TOTAL | (before + count));
    return digit_start + before;
}

@compute @workgroup_size(WG)
fn scatter(@builtin(local_invocation_index) t: u32) {
    if t == 0u {
        block_index = atomicAdd(&status[pass_index()], 1u);
    }
    let block = workgroupUniformLoad(&block_index);
    if block >= state[5] {
        return;
    }
    scatter_block(block, t);
}
