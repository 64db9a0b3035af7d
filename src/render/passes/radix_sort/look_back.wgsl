// Radix sort, one-sweep steps: one `histogram` kernel (onesweep.wgsl) counts the
// digits of every pass in a single read of the keys, then each pass is one `scatter`
// whose blocks find their digits' first output slots here, by decoupled look-back:
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
//    (see onesweep.rs for how few spins it takes).
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
// The look-back words are `SortStatus::look_back` (state.wgsl), two regions of
// blocks * RADIX words, pass p in region p % 2; the setup clears the block counters
// and digit totals, the histogram kernel the first pass's region, and each pass's
// scatter the next pass's.
#define_import_path bevy_splat::radix_sort::look_back

#import bevy_splat::radix_sort::state::{RADIX, SORT_BLOCK, SortStatus}
#import bevy_splat::radix_sort::keys::{digit_of, keys_in, pass_index, state}

@group(0) @binding(3) var<storage, read_write> status: SortStatus;

// A look-back word: the block's own counts, or its counts plus all earlier blocks'.
const BLOCK_COUNT: u32 = 1u << 30u;
const RUNNING_TOTAL: u32 = 2u << 30u;
const COUNT_MASK: u32 = (1u << 30u) - 1u;
// Keys the look-back's fallback reads per step of its loop: few steps, for lavapipe's
// loop budget (see above).
const FALLBACK_UNROLL: u32 = 8u;
// Earlier blocks one step of the look-back reads at once (`LOOK_BACK_WINDOW` in
// onesweep.rs).
const LOOK_BACK_WINDOW: u32 = #{SORT_LOOK_BACK_WINDOW}u;
// How many more times the look-back reads an earlier block's word after finding it
// unpublished, before it counts that block's digits from its keys itself
// (`LookBack::Wait` in onesweep.rs).
const LOOK_BACK_SPINS: u32 = #{SORT_LOOK_BACK_SPINS}u;
// Whether the look-back reads the words the earlier blocks publish at all: not under
// the shader def SORT_COUNT_EVERY_BLOCK (`LookBack::CountEveryBlock`), where every
// block counts every earlier block from its keys.
#ifdef SORT_COUNT_EVERY_BLOCK
const LOOK_BACK_READS: bool = false;
#else
const LOOK_BACK_READS: bool = true;
#endif

// The index in `status.look_back` of block `block`'s word for digit `digit` in pass
// `pass_id`.
fn look_back_word(pass_id: u32, block: u32, digit: u32) -> u32 {
    return ((pass_id % 2u) * state.blocks + block) * RADIX + digit;
}

// Publishes this block's count of `digit` for the blocks after it (block 0's is
// already a running total), clears the next pass's word, and returns the digit's
// count over all blocks.
fn publish_block_counts(block: u32, digit: u32, count: u32) -> u32 {
    let pass_id = pass_index();
    let flag = select(BLOCK_COUNT, RUNNING_TOTAL, block == 0u);
    atomicStore(&status.look_back[look_back_word(pass_id, block, digit)], flag | count);
    atomicStore(&status.look_back[look_back_word(pass_id + 1u, block, digit)], 0u);
    return atomicLoad(&status.digit_totals[pass_id * RADIX + digit]);
}

// The pairs of digit `digit` in block `block`, counted from its keys: the look-back's
// fallback for a block that has not published. All threads of a subgroup read the
// same keys, for their own digits.
fn count_block_digit(block: u32, digit: u32) -> u32 {
    let first = block * SORT_BLOCK;
    // Only an earlier block is counted, and only the last block is short; the bound
    // keeps every read below n all the same.
    let in_block = min(state.n - first, SORT_BLOCK);
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
                words[i] = atomicLoad(&status.look_back[look_back_word(pass_id, look - 1u - i, digit)]);
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
            atomicAdd(&status.look_back_fallbacks, 1u);
        }
    }
    atomicStore(&status.look_back[look_back_word(pass_id, block, digit)], RUNNING_TOTAL | (before + count));
    return digit_start + before;
}
