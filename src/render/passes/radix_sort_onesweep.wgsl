// Radix sort, one-sweep steps (appended to radix_sort.wgsl): one `histogram` kernel
// counts the digits of every pass in a single read of the keys, then each pass is one
// `scatter` whose blocks find their digits' first output slots by decoupled look-back:
// block b publishes its digit counts, then adds up those of blocks b-1, b-2, ... until
// it meets one that has published its running total, and publishes its own. This saves
// every pass's count kernel, its prefix scan and the dispatches between them.
//
// Waiting is bounded. A block waits only for blocks that took their index before it
// (the index comes from an atomic counter, in the order blocks start, not from the
// workgroup id), so on a GPU that keeps running a started workgroup the wait ends by
// itself. No API promises that, though, so a block that finds the same earlier block
// unpublished LOOK_BACK_SPINS times in a row counts that block's pairs of its digit
// from the keys itself and walks on: the look-back with fallback of Onesweep (Adinets
// and Merrill, 2022). Every look-back then ends within block * (LOOK_BACK_SPINS + 1)
// steps whatever the GPU schedules, and its sum is exact either way: a word read is
// the block's own count or its running total, and a count from the keys is the same
// number the block publishes.
//
// Why this sort went wrong on lavapipe (issue 28: wrong keys or a SIGSEGV in about
// one run of tests/gpu_sort.rs in three) while its look-back waited without bound:
// not a lost memory order, and not a wait that never ended, but lavapipe's loop
// budget. Mesa's gallivm, which compiles lavapipe's shaders, stops the loops of an
// invocation once all of them together have run 65,535 iterations
// (LP_MAX_TGSI_LOOP_ITERATIONS), silently: the loop exits as if its condition were
// false. A block whose predecessor runs on a CPU thread the OS has parked (lavapipe
// runs a workgroup on one thread, several at once; this machine has two busy cores)
// spins long enough to spend the budget. Its look-back then ends with blocks still
// to add, a wrong running total for every block after it: wrong keys. And every loop
// after it runs one iteration at most: unset sorted slots, writes outside workgroup
// memory, the SIGSEGV. Evidence (2-core machine, Mesa 22.3.6, LLVM 15):
//  - `driver_loop_budget_probe` (tests/gpu_sort.rs): loops of 65,536 and 1,000,000
//    iterations ran 65,535; a loop of 60,000 then one of 10,000 ran 60,000 and 5,534.
//  - The old look-back with counters, 20 sorts of 1M u32 keys (32 bits) with
//    LP_NUM_THREADS=8, built with wgpu's index clamps so that a cut-off loop could not
//    crash: the 2 wrong sorts were exactly the 2 with a look-back that left its loop
//    unfinished, after 65,526 steps (the budget less the kernel's loops before it);
//    the 18 right ones had waited at most 62,841 steps. Without the clamps the same
//    run died of SIGSEGV in its 8th sort.
//  - With one lavapipe thread no block ever waited (every look-back took one step);
//    with 2, 4 and 16 threads the longest took 13,506, 37,114 and 38,920 steps.
//  - Not a lack of forward progress: lavapipe runs a started workgroup to its end,
//    so a block's predecessors are always running or done, and no run ever hung.
//  - With the bounded look-back, at 2, 8 and 16 threads: no wrong sort, the longest
//    look-back 130, 261 and 263 steps, with 1,200 to 18,000 fallbacks per sort of
//    1M pairs (of 500,000 (block, digit) look-backs), and tests/gpu_sort.rs passed
//    10 runs of 10 with BEVY_SPLAT_TEST_ONESWEEP=1.
//  - On an H200 (driver 580), which keeps started workgroups running: 10,000 stress
//    sets per algorithm exact, and no fallback at all with LOOK_BACK_SPINS = 128
//    (see radix_sort.rs for how few spins it takes).
// The bound is what lavapipe needs: a block spins at most LOOK_BACK_SPINS + 1 steps
// per earlier block that has not yet published, and only the few blocks running
// beside it can be unpublished, so its look-back stays far below the budget.
// The memory order needs nothing more: each look-back word carries its flag and
// count in one atomic store (0, then the block's count, then its running total), so
// whatever a relaxed atomicLoad returns is a true state of that block, and nothing
// else is read through the flag; each pass's words are cleared by the dispatch
// before it (wgpu puts a barrier between dispatches that write one buffer); each pass
// has its own block counter, cleared by the sort's setup; and the wait is per thread,
// with no barrier inside, so it needs no uniform control flow.
//
// `status` (u32 words, laid out by radix_sort.rs; MAX_PASSES, TOTALS, FALLBACKS,
// REGIONS, HISTOGRAM_BLOCKS, LOOK_BACK_WINDOW, LOOK_BACK_SPINS and LOOK_BACK_READS
// prepended):
//   [0, MAX_PASSES)          per pass, the counter that hands out block indices
//   [TOTALS, +MAX_PASSES*RADIX)  per pass and digit, the count over all blocks
//   [FALLBACKS]              how many counts the look-back took from the keys, over
//                            the buffers' life (a diagnostic for tests and benches)
//   [REGIONS, ...)           two regions of blocks * RADIX look-back words, pass p in
//                            region p % 2: flag (2 bits) | count (30 bits)
// `radix_sort_setup.wgsl` clears the counters and totals, the histogram kernel the
// first pass's region, and each pass's scatter the next pass's.

@group(0) @binding(3) var<storage, read_write> status: array<atomic<u32>>;

// A look-back word: the block's own counts, or its counts plus all earlier blocks'.
const BLOCK_COUNT: u32 = 1u << 30u;
const RUNNING_TOTAL: u32 = 2u << 30u;
const COUNT_MASK: u32 = (1u << 30u) - 1u;
// Keys the look-back's fallback reads per step of its loop: few steps, for lavapipe's
// loop budget (see above).
const FALLBACK_UNROLL: u32 = 8u;

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

// The pairs of digit `digit` in block `block`, counted from its keys: the look-back's
// fallback for a block that has not published. All threads of a subgroup read the
// same keys, for their own digits.
fn count_block_digit(block: u32, digit: u32) -> u32 {
    let first = block * SORT_BLOCK;
    // Only an earlier block is counted, and only the last block is short; the bound
    // keeps every read below n all the same.
    let in_block = min(state[4] - first, SORT_BLOCK);
    var count = 0u;
    for (var i = 0u; i < SORT_BLOCK; i += FALLBACK_UNROLL) {
        for (var j = 0u; j < FALLBACK_UNROLL; j++) {
            if i + j < in_block && digit_of(keys_in[first + i + j]) == digit {
                count += 1u;
            }
        }
    }
    return count;
}

// `digit_start`: the pairs of smaller digits over all blocks. Adds the earlier blocks'
// pairs of `digit`, nearest first, waiting a bounded time for each to publish (see the
// top of this file). Every step reads a window of LOOK_BACK_WINDOW blocks at once: the
// blocks that start together all publish their counts before any running total
// reaches them, so a block walks back over many counts, and one memory latency per
// block would add up along the chain.
fn first_output_slot(block: u32, digit: u32, count: u32, digit_start: u32) -> u32 {
    if block == 0u {
        return digit_start;
    }
    let pass_id = pass_index();
    var before = 0u;
    // Blocks [0, look) are still to add.
    var look = block;
    // Steps in a row that found block look - 1 unpublished.
    var stalled = 0u;
    // Every step takes at least one block, or finds block look - 1 unpublished and
    // counts it itself after LOOK_BACK_SPINS such steps: at most
    // block * (LOOK_BACK_SPINS + 1) steps. The loop says so in its condition, though
    // the search always ends first.
    let most_steps = block * (LOOK_BACK_SPINS + 1u);
    // The loops' conditions carry the search's state, with no `break` or `continue`
    // under a condition that differs between lanes.
    var searching = true;
    for (var step = 0u; searching && step < most_steps; step++) {
        var words: array<u32, LOOK_BACK_WINDOW>;
        for (var i = 0u; i < LOOK_BACK_WINDOW; i++) {
            words[i] = 0u;
            if LOOK_BACK_READS && i < look {
                words[i] = atomicLoad(&status[look_back_word(pass_id, look - 1u - i, digit)]);
            }
        }
        // Take the window's words in order up to the first unpublished one or the
        // first running total.
        let look_was = look;
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
        stalled = select(0u, stalled + 1u, look == look_was);
        if stalled > LOOK_BACK_SPINS {
            before += count_block_digit(look - 1u, digit);
            look -= 1u;
            searching = look != 0u;
            stalled = 0u;
            atomicAdd(&status[FALLBACKS], 1u);
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
