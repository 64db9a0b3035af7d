// Radix sort: one stable counting-sort pass over one digit of the keys, for each
// block of SORT_BLOCK pairs: every pair goes to its digit's first output slot for this
// block plus its rank among the block's earlier pairs with the same digit, so the pass
// is stable. Where each (digit, block) starts is what the two ways of sorting differ
// in, and this module imports it from one of two modules by the shader def
// SORT_ONESWEEP:
//   classic_slots.wgsl  (without it) a prefix scan over every block's histogram,
//                       which the `count` kernel of classic.wgsl stores, gives each
//                       (digit, block) its first slot
//   look_back.wgsl      (with it) each block adds up the counts of the blocks before
//                       it as they publish them, and onesweep.wgsl's `histogram`
//                       kernel counts the digits of every pass at once
// Each gives the two steps of `scatter_block` that find where its digits start:
// `publish_block_counts` and `first_output_slot`. The kernels that call
// `scatter_block` are in classic.wgsl and onesweep.wgsl.
//
// A block ranks its pairs one of two ways, picked by the shader def
// SORT_SUBGROUP_RANKING (`SortRanking` in options.rs):
//   without it  per round of WG pairs, per-digit bit masks over the round's slots in
//               workgroup memory (atomicOr, then counting the bits below one's own):
//               no subgroup operations, any GPU, but three workgroup barriers a round
//   with it     each subgroup ranks its own run of pairs with ballots (the lanes that
//               share a digit match on all its bits), one item at a time, and keeps
//               its digit counts in workgroup memory; a scan over the subgroups then
//               places each subgroup's pairs after those of the subgroups before it.
//               No workgroup barrier while it ranks. Nothing assumes a
//               subgroup size: ballots are read as 128 lanes, and the counts are sized
//               for the adapter's smallest subgroups.
//
// The scatter orders each block in workgroup memory before it writes, so that the
// threads of a subgroup write neighbouring slots: written straight from the ranking,
// each 4-byte key and value went to its own 32-byte memory sector. The staging reuses
// the ranking's masks (8 KiB for both), because workgroup memory costs occupancy (on
// an H200, 17 KiB more per workgroup made an earlier scatter 40% slower).
// The staging pays only in a module built without wgpu's loop guards (the host
// builds this one with `ShaderChecks::None`): with them, its many short loops over
// per-thread arrays made the tile sort slower than the unstaged scatter.
#define_import_path bevy_splat::radix_sort::scatter

#import bevy_splat::radix_sort::state::{RADIX, RADIX_BITS, SORT_BLOCK, SORT_ITEMS, WG}
#import bevy_splat::radix_sort::keys::{KEY_WORDS, digit_of, key_word, keys_in, params, state}
#ifdef SORT_ONESWEEP
#import bevy_splat::radix_sort::look_back::{first_output_slot, publish_block_counts}
#else
#import bevy_splat::radix_sort::classic_slots::{first_output_slot, publish_block_counts}
#endif

// Words of the workgroup memory `stage`: max(SORT_BLOCK, MASK_WORDS * RADIX).
const STAGE_WORDS: u32 = #{SORT_STAGE_WORDS}u;
const MASK_WORDS: u32 = WG / 32u;

// Where a thread of the scatter sits, the scatter kernels' builtins: its index in the
// workgroup and, for the subgroup ranking, its subgroup (of `subgroups`) and its lane
// (of `lanes`).
struct ScatterThread {
    @builtin(local_invocation_index) index: u32,
#ifdef SORT_SUBGROUP_RANKING
    @builtin(subgroup_id) subgroup: u32,
    @builtin(num_subgroups) subgroups: u32,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) lanes: u32,
#endif
}

#ifdef SORT_SUBGROUP_RANKING
// 32-bit words of a ballot that can hold lanes: ceil(largest subgroup / 32).
const BALLOT_WORDS: u32 = #{SORT_BALLOT_WORDS}u;
// Per subgroup and digit, its pairs in the block (then the pairs of that digit in the
// subgroups before it): 16 bits each (a block's SORT_BLOCK pairs fit), digits d and
// d + RADIX / 2 sharing a word, for up to WG / (the smallest subgroup) subgroups.
const COUNT_WORDS: u32 = #{SORT_SUBGROUP_COUNT_WORDS}u;
const HALF_RADIX: u32 = RADIX / 2u;
var<workgroup> subgroup_counts: array<atomic<u32>, COUNT_WORDS>;
// Per subgroup, the sums of its run of digits' counts (`scatter_block`'s digit scan),
// for as many subgroups as `subgroup_counts` holds.
const MOST_SUBGROUPS: u32 = COUNT_WORDS / HALF_RADIX;
var<workgroup> subgroup_totals: array<vec2<u32>, MOST_SUBGROUPS>;

// The word of `subgroup_counts` that holds `digit` of `subgroup`, and the shift of
// its 16 bits.
fn count_word(subgroup: u32, digit: u32) -> u32 {
    return subgroup * HALF_RADIX + digit % HALF_RADIX;
}
fn count_shift(digit: u32) -> u32 {
    return (digit / HALF_RADIX) * 16u;
}

// The lanes below `lane` in the ballot `lanes`.
fn lanes_below(lanes: vec4<u32>, lane: u32) -> u32 {
    var below = 0u;
    for (var k = 0u; k < BALLOT_WORDS; k++) {
        let first = k * 32u;
        var bits = 0u;
        if lane >= first + 32u {
            bits = 0xFFFFFFFFu;
        } else if lane > first {
            bits = (1u << (lane - first)) - 1u;
        }
        below += countOneBits(lanes[k] & bits);
    }
    return below;
}

// The lowest lane of the ballot `lanes` (0 if none).
fn lowest_lane(lanes: vec4<u32>) -> u32 {
    for (var k = 0u; k < BALLOT_WORDS; k++) {
        if lanes[k] != 0u {
            return k * 32u + firstTrailingBit(lanes[k]);
        }
    }
    return 0u;
}
#endif

@group(0) @binding(4) var<storage, read> values_in: array<u32>;
#ifdef SORT_KEY_64
@group(0) @binding(5) var<storage, read_write> keys_out: array<vec2<u32>>;
#else
@group(0) @binding(5) var<storage, read_write> keys_out: array<u32>;
#endif
@group(0) @binding(6) var<storage, read_write> values_out: array<u32>;

// The scatter's write of word `word` of the key at `index` of keys_out.
#ifdef SORT_KEY_64
fn store_key_word(index: u32, word: u32, value: u32) {
    if word == 0u {
        keys_out[index].x = value;
    } else {
        keys_out[index].y = value;
    }
}
#else
fn store_key_word(index: u32, word: u32, value: u32) {
    keys_out[index] = value;
}
#endif

// The scatter's workgroup memory, reused by its steps: the block's digit counts, then
// per digit a bit mask over the current round's slots holding that digit (slot =
// word * 32 + bit; word-major, masks[word * RADIX + digit], so that neighbouring digits
// sit in neighbouring banks), then the block's pairs staged in sorted order, one
// 32-bit word at a time. STAGE_WORDS = max(SORT_BLOCK, MASK_WORDS * RADIX).
var<workgroup> stage: array<atomic<u32>, STAGE_WORDS>;
// Per digit: the next free slot of the block's sorted order.
var<workgroup> digit_next: array<u32, RADIX>;
// Per digit: a prefix scan's partial sums of the block's counts (x) and of the counts
// `publish_block_counts` returns (y).
var<workgroup> digit_scan: array<vec2<u32>, RADIX>;
// Per digit: its first output slot minus its first slot in the block's sorted order,
// so that the pair staged at block slot s with digit d goes to `digit_rebase[d] + s`.
var<workgroup> digit_rebase: array<u32, RADIX>;

// The inclusive prefix sum over digits of each digit's `counts`, thread t's digit t:
// a step per power of two, two barriers each (seventeen in all).
fn digit_scan_in_steps(t: u32, counts: vec2<u32>) -> vec2<u32> {
    var sum = counts;
    digit_scan[t] = sum;
    workgroupBarrier();
    for (var offset = 1u; offset < RADIX; offset *= 2u) {
        if t >= offset {
            sum += digit_scan[t - offset];
        }
        workgroupBarrier();
        digit_scan[t] = sum;
        workgroupBarrier();
    }
    return sum;
}

#ifdef SORT_SUBGROUP_RANKING
// The same sum by subgroups, three barriers: each subgroup scans a run of digits (the
// runs in subgroup order, whatever threads the subgroups hold), then adds the totals
// of the runs before its own.
fn digit_scan_by_subgroups(thread: ScatterThread, counts: vec2<u32>) -> vec2<u32> {
    digit_scan[thread.index] = counts;
    workgroupBarrier();
    let run_digit = thread.subgroup * thread.lanes + thread.lane;
    let in_run = subgroupInclusiveAdd(digit_scan[run_digit]);
    if thread.lane + 1u == thread.lanes {
        subgroup_totals[thread.subgroup] = in_run;
    }
    workgroupBarrier();
    var runs_before = vec2<u32>(0u);
    for (var s = 0u; s < thread.subgroup; s++) {
        runs_before += subgroup_totals[s];
    }
    digit_scan[run_digit] = in_run + runs_before;
    workgroupBarrier();
    return digit_scan[thread.index];
}
#endif

// The scatter of block `block` (< state.blocks) by its workgroup, thread `thread`;
// called from workgroup-uniform control flow.
fn scatter_block(block: u32, thread: ScatterThread) {
    let t = thread.index;
    let n = state.n;
    let start = block * SORT_BLOCK;
    let in_block = min(n - start, SORT_BLOCK);
    let input_index_values = state.input_index_values == 1u && params.word == 0u && params.shift == 0u;
#ifdef SORT_KEY_64
    var keys: array<vec2<u32>, SORT_ITEMS>;
#else
    var keys: array<u32, SORT_ITEMS>;
#endif
    var values: array<u32, SORT_ITEMS>;
    var digits: array<u32, SORT_ITEMS>;
    // Each pair's slot in the block's sorted order.
    var sorted_slot: array<u32, SORT_ITEMS>;

    // The pairs' places in the block: subgroup s takes the s-th run of lanes *
    // SORT_ITEMS pairs, lane l item i of it pair i * lanes + l (subgroups, then items,
    // then lanes follow the input order, so ranks in that order keep the pass stable);
    // without subgroups, thread t takes slot (t % MASK_WORDS) * 32 + t / MASK_WORDS of
    // each round of WG pairs (neighbouring threads, one hardware subgroup, own bits of
    // different mask words, so equal digits do not pile their atomicOr onto one word),
    // and ranks follow the slot order. All loads first, to have them in flight together.
#ifdef SORT_SUBGROUP_RANKING
    let run = thread.lanes * SORT_ITEMS;
#else
    let my_word = t % MASK_WORDS;
    let my_bit = 1u << (t / MASK_WORDS);
    let my_slot = my_word * 32u + t / MASK_WORDS;
#endif
    for (var i = 0u; i < SORT_ITEMS; i++) {
#ifdef SORT_SUBGROUP_RANKING
        let slot = thread.subgroup * run + i * thread.lanes + thread.lane;
#else
        let slot = i * WG + my_slot;
#endif
        let j = start + slot;
        digits[i] = RADIX;
        if slot < in_block {
            keys[i] = keys_in[j];
            digits[i] = digit_of(keys[i]);
            if input_index_values {
                values[i] = j;
            } else {
                values[i] = values_in[j];
            }
        }
    }

    // The block's digit counts first, published at once: the blocks after this one
    // look back at them while it ranks its pairs.
    atomicStore(&stage[t], 0u);
    workgroupBarrier();
    for (var i = 0u; i < SORT_ITEMS; i++) {
        if digits[i] < RADIX {
            atomicAdd(&stage[digits[i]], 1u);
        }
    }
    workgroupBarrier();
    let own_count = atomicLoad(&stage[t]);
    // The exclusive prefix sums of the block's digit counts (each digit's first slot
    // in the block's sorted order) and of the digits' totals over all blocks.
    let counts = vec2<u32>(own_count, publish_block_counts(block, t, own_count));
    // The one-sweep scatter scans by subgroups (its sorts 1.5 % faster on an H100);
    // the classic keeps the plain scan: by subgroups its sorts took 20-25 % longer
    // there (BENCHMARKS.md, "The digit scan by subgroups").
#ifdef SORT_SUBGROUP_RANKING
#ifdef SORT_ONESWEEP
    let sum = digit_scan_by_subgroups(thread, counts);
#else
    let sum = digit_scan_in_steps(t, counts);
#endif
#else
    let sum = digit_scan_in_steps(t, counts);
#endif
    let first_in_block = sum.x - own_count;
    digit_next[t] = first_in_block;

#ifdef SORT_SUBGROUP_RANKING
    for (var w = t; w < COUNT_WORDS; w += WG) {
        atomicStore(&subgroup_counts[w], 0u);
    }
    workgroupBarrier();
    // Item by item, the lanes holding the same digit find one another by a ballot per
    // digit bit; the lowest of them adds them all to the subgroup's count of that digit
    // and hands the count before them to the others.
    var subgroup_rank: array<u32, SORT_ITEMS>;
    for (var i = 0u; i < SORT_ITEMS; i++) {
        let digit = digits[i];
        let valid = digit < RADIX;
        var peers = subgroupBallot(valid);
        for (var bit = 0u; bit < RADIX_BITS; bit++) {
            let one = ((digit >> bit) & 1u) == 1u;
            let lanes = subgroupBallot(one);
            peers &= select(~lanes, lanes, one);
        }
        let rank = lanes_below(peers, thread.lane);
        var before = 0u;
        if valid && rank == 0u {
            let shift = count_shift(digit);
            let count = countOneBits(peers);
            let added = (count.x + count.y + count.z + count.w) << shift;
            before = (atomicAdd(&subgroup_counts[count_word(thread.subgroup, digit)], added) >> shift) & 0xFFFFu;
        }
        subgroup_rank[i] = subgroupShuffle(before, lowest_lane(peers)) + rank;
    }
    workgroupBarrier();
    // Thread t turns digit t's counts into the pairs of that digit in the subgroups
    // before each one: an exclusive scan over the subgroups, in place (the delta
    // changes only this digit's 16 bits of the word, whatever the other digit's
    // thread adds to it meanwhile).
    let own_shift = count_shift(t);
    var subgroups_before = 0u;
    for (var s = 0u; s < thread.subgroups; s++) {
        let word = count_word(s, t);
        let count = (atomicLoad(&subgroup_counts[word]) >> own_shift) & 0xFFFFu;
        atomicAdd(&subgroup_counts[word], (subgroups_before - count) << own_shift);
        subgroups_before += count;
    }
    workgroupBarrier();
    for (var i = 0u; i < SORT_ITEMS; i++) {
        let digit = digits[i];
        if digit < RADIX {
            let before = atomicLoad(&subgroup_counts[count_word(thread.subgroup, digit)]);
            sorted_slot[i] = digit_next[digit] + ((before >> count_shift(digit)) & 0xFFFFu) + subgroup_rank[i];
        }
    }
#else
    for (var w = 0u; w < MASK_WORDS; w++) {
        atomicStore(&stage[w * RADIX + t], 0u);
    }
    workgroupBarrier();

    for (var i = 0u; i < SORT_ITEMS; i++) {
        if i * WG >= in_block {
            break;
        }
        let digit = digits[i];
        if digit < RADIX {
            atomicOr(&stage[my_word * RADIX + digit], my_bit);
        }
        workgroupBarrier();
        if digit < RADIX {
            // Rank = slots before this one in the round holding the same digit.
            var rank = countOneBits(atomicLoad(&stage[my_word * RADIX + digit]) & (my_bit - 1u));
            for (var w = 0u; w < my_word; w++) {
                rank += countOneBits(atomicLoad(&stage[w * RADIX + digit]));
            }
            sorted_slot[i] = digit_next[digit] + rank;
        }
        workgroupBarrier();
        // Thread t advances digit t past this round's pairs and clears its masks.
        var taken = 0u;
        for (var w = 0u; w < MASK_WORDS; w++) {
            taken += countOneBits(atomicLoad(&stage[w * RADIX + t]));
            atomicStore(&stage[w * RADIX + t], 0u);
        }
        digit_next[t] += taken;
        workgroupBarrier();
    }
#endif

    // Only now where the block's digits start over all blocks: the look-back waits
    // for the blocks before this one, which by now have most likely published their
    // running totals.
    digit_rebase[t] = first_output_slot(block, t, own_count, sum.y - counts.y) - first_in_block;

    // Stage the pairs in sorted order, one word at a time, and write each word from
    // the thread of its sorted slot: neighbouring threads write neighbouring slots
    // wherever they share a digit. The digits first, to know each sorted slot's output.
    for (var i = 0u; i < SORT_ITEMS; i++) {
        if digits[i] < RADIX {
            atomicStore(&stage[sorted_slot[i]], digits[i]);
        }
    }
    workgroupBarrier();
    var out: array<u32, SORT_ITEMS>;
    for (var i = 0u; i < SORT_ITEMS; i++) {
        let s = i * WG + t;
        if s < in_block {
            out[i] = digit_rebase[atomicLoad(&stage[s])] + s;
        }
    }
    for (var word = 0u; word < KEY_WORDS; word++) {
        workgroupBarrier();
        for (var i = 0u; i < SORT_ITEMS; i++) {
            if digits[i] < RADIX {
                atomicStore(&stage[sorted_slot[i]], key_word(keys[i], word));
            }
        }
        workgroupBarrier();
        for (var i = 0u; i < SORT_ITEMS; i++) {
            let s = i * WG + t;
            if s < in_block {
                store_key_word(out[i], word, atomicLoad(&stage[s]));
            }
        }
    }
    workgroupBarrier();
    for (var i = 0u; i < SORT_ITEMS; i++) {
        if digits[i] < RADIX {
            atomicStore(&stage[sorted_slot[i]], values[i]);
        }
    }
    workgroupBarrier();
    for (var i = 0u; i < SORT_ITEMS; i++) {
        let s = i * WG + t;
        if s < in_block {
            values_out[out[i]] = atomicLoad(&stage[s]);
        }
    }
}
