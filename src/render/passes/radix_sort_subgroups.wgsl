// Radix sort, the scatter kernel where the device has subgroups: the same stable pass
// as `scatter` in radix_sort.wgsl (appended to it), ranking the pairs with subgroup
// ballots instead of per-digit thread masks in workgroup memory.
//
// Each subgroup owns a contiguous run of SORT_ITEMS * subgroup_size pairs of the block
// and walks it in rounds of subgroup_size consecutive pairs (coalesced loads). In a
// round, RADIX_BITS ballots find each lane's peers (the lanes holding the same digit);
// the lowest peer adds their number to the subgroup's count of that digit, and each
// lane's rank is the count before the round plus the peers below it. No barrier runs
// while ranking. Then one exclusive scan per digit over the subgroups, in subgroup
// order, places each subgroup's pairs after those of the subgroups before it: the
// block keeps its input order within every digit, as the pass must.
//
// Assumes what every Vulkan, Metal and D3D12 driver does for a workgroup whose size is
// a multiple of the subgroup size: full subgroups, numbered in the order of their
// invocations. `radix_sort.rs` prepends MIN_SUBGROUP_SIZE, the adapter's smallest
// subgroup size (at least 8), which bounds the number of subgroups, and RADIX_BITS.

const MAX_SUBGROUPS: u32 = WG / MIN_SUBGROUP_SIZE;

// Per subgroup, per digit, a count of pairs, two digits to a word (digit d in the
// half d % 2 of word d / 2): at most SORT_BLOCK pairs, so 16 bits hold it. First each
// subgroup's running count, then (after the scan) its first slot in the block.
var<workgroup> subgroup_counts: array<atomic<u32>, MAX_SUBGROUPS * RADIX / 2u>;

fn count_word(subgroup: u32, digit: u32) -> u32 {
    return subgroup * (RADIX / 2u) + digit / 2u;
}

fn count_shift(digit: u32) -> u32 {
    return (digit % 2u) * 16u;
}

fn lowest_lane(lanes: vec4<u32>) -> u32 {
    for (var c = 0u; c < 4u; c++) {
        if lanes[c] != 0u {
            return c * 32u + firstTrailingBit(lanes[c]);
        }
    }
    return 0u;
}

fn lane_count(lanes: vec4<u32>) -> u32 {
    let counts = countOneBits(lanes);
    return counts.x + counts.y + counts.z + counts.w;
}

@compute @workgroup_size(WG)
fn scatter_subgroups(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
    @builtin(subgroup_id) subgroup: u32,
    @builtin(num_subgroups) subgroups: u32,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) lanes: u32,
) {
    let block = linear_group(wid, nwg);
    let blocks = state[5];
    if block >= blocks {
        return;
    }
    let n = state[4];
    next_slot[t] = hist[t * blocks + block];
    for (var w = t; w < subgroups * RADIX / 2u; w += WG) {
        atomicStore(&subgroup_counts[w], 0u);
    }
    workgroupBarrier();

    // The lanes below this one, as a ballot mask.
    var below = vec4<u32>(0u);
    for (var c = 0u; c < 4u; c++) {
        let first = c * 32u;
        if lane >= first + 32u {
            below[c] = 0xffffffffu;
        } else if lane > first {
            below[c] = (1u << (lane - first)) - 1u;
        }
    }

    let run = block * SORT_BLOCK + subgroup * lanes * SORT_ITEMS;
    var keys: array<SortKey, SORT_ITEMS>;
    var digits: array<u32, SORT_ITEMS>;
    var ranks: array<u32, SORT_ITEMS>;
    for (var i = 0u; i < SORT_ITEMS; i++) {
        let j = run + i * lanes + lane;
        let valid = j < n;
        if valid {
            keys[i] = keys_in[j];
        }
        let digit = select(0u, digit_of(keys[i]), valid);
        var peers = subgroupBallot(valid);
        for (var b = 0u; b < RADIX_BITS; b++) {
            let one = ((digit >> b) & 1u) == 1u;
            let vote = subgroupBallot(one);
            peers &= select(~vote, vote, one);
        }
        let leader = select(lane, lowest_lane(peers), valid);
        var before = 0u;
        if valid && lane == leader {
            let shift = count_shift(digit);
            let old = atomicAdd(&subgroup_counts[count_word(subgroup, digit)], lane_count(peers) << shift);
            before = (old >> shift) & 0xffffu;
        }
        before = subgroupShuffle(before, leader);
        digits[i] = select(RADIX, digit, valid);
        ranks[i] = before + lane_count(peers & below);
    }
    workgroupBarrier();

    // Thread t < RADIX / 2 scans digits 2t and 2t + 1 over the subgroups.
    if t < RADIX / 2u {
        var first = 0u;
        for (var s = 0u; s < subgroups; s++) {
            let word = s * (RADIX / 2u) + t;
            let counts = atomicLoad(&subgroup_counts[word]);
            atomicStore(&subgroup_counts[word], first);
            first += counts;
        }
    }
    workgroupBarrier();

    for (var i = 0u; i < SORT_ITEMS; i++) {
        let digit = digits[i];
        if digit < RADIX {
            let j = run + i * lanes + lane;
            let shift = count_shift(digit);
            let in_block = (atomicLoad(&subgroup_counts[count_word(subgroup, digit)]) >> shift) & 0xffffu;
            let dst = next_slot[digit] + in_block + ranks[i];
            keys_out[dst] = keys[i];
            if state[13] == 1u && params.word == 0u && params.shift == 0u {
                values_out[dst] = j;
            } else {
                values_out[dst] = values_in[j];
            }
        }
    }
}
