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
// No subgroup operations: nothing here depends on the subgroup size.
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

#import bevy_splat::radix_sort::state::{RADIX, SORT_BLOCK, SORT_ITEMS, WG}
#import bevy_splat::radix_sort::keys::{KEY_WORDS, digit_of, key_word, keys_in, params, state}
#ifdef SORT_ONESWEEP
#import bevy_splat::radix_sort::look_back::{first_output_slot, publish_block_counts}
#else
#import bevy_splat::radix_sort::classic_slots::{first_output_slot, publish_block_counts}
#endif

// Words of the workgroup memory `stage`: max(SORT_BLOCK, MASK_WORDS * RADIX).
const STAGE_WORDS: u32 = #{SORT_STAGE_WORDS}u;
const MASK_WORDS: u32 = WG / 32u;

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

// The scatter of block `block` (< state.blocks) by its workgroup, thread t; called from
// workgroup-uniform control flow.
fn scatter_block(block: u32, t: u32) {
    let n = state.n;
    let start = block * SORT_BLOCK;
    let in_block = min(n - start, SORT_BLOCK);

    // Rounds of WG consecutive pairs. Thread t takes slot (t % MASK_WORDS) * 32 +
    // t / MASK_WORDS of each round: neighbouring threads (one hardware subgroup) own
    // bits of different mask words, so equal digits do not pile their atomicOr onto one
    // word. Ranks follow the slot order, which is the input order: the pass is stable.
    // All loads first, to have them in flight together.
    let my_word = t % MASK_WORDS;
    let my_bit = 1u << (t / MASK_WORDS);
    let my_slot = my_word * 32u + t / MASK_WORDS;
    let input_index_values = state.input_index_values == 1u && params.word == 0u && params.shift == 0u;
#ifdef SORT_KEY_64
    var keys: array<vec2<u32>, SORT_ITEMS>;
#else
    var keys: array<u32, SORT_ITEMS>;
#endif
    var values: array<u32, SORT_ITEMS>;
    var digits: array<u32, SORT_ITEMS>;
    for (var i = 0u; i < SORT_ITEMS; i++) {
        let j = start + i * WG + my_slot;
        digits[i] = RADIX;
        if i * WG + my_slot < in_block {
            keys[i] = keys_in[j];
            digits[i] = digit_of(keys[i]);
            if input_index_values {
                values[i] = j;
            } else {
                values[i] = values_in[j];
            }
        }
    }

    // The block's digit counts, and their exclusive prefix sum: each digit's first
    // slot in the block's sorted order.
    atomicStore(&stage[t], 0u);
    workgroupBarrier();
    for (var i = 0u; i < SORT_ITEMS; i++) {
        if digits[i] < RADIX {
            atomicAdd(&stage[digits[i]], 1u);
        }
    }
    workgroupBarrier();
    let own_count = atomicLoad(&stage[t]);
    let counts = vec2<u32>(own_count, publish_block_counts(block, t, own_count));
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
    let first_in_block = sum.x - own_count;
    digit_next[t] = first_in_block;
    digit_rebase[t] = first_output_slot(block, t, own_count, sum.y - counts.y) - first_in_block;
    for (var w = 0u; w < MASK_WORDS; w++) {
        atomicStore(&stage[w * RADIX + t], 0u);
    }
    workgroupBarrier();

    // Each pair's slot in the block's sorted order.
    var sorted_slot: array<u32, SORT_ITEMS>;
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
