// tile range: one thread per bin of the band. Finds where the bin's run of sorted
// pairs starts by a binary search of the sorted bin ids, and takes its end from the
// next bin's start; bins without pairs get an empty run. A thread per bin reads about
// 2·log₂(pairs) keys, where a thread per pair, comparing each key with its
// neighbours', read every key: 88 M of them at K = 30 (BENCHMARKS.md).

#import bevy_splat::common::{SplatView, bins_across, WORKGROUP_SIZE, COUNTER_PAIRS_KEPT}

@group(0) @binding(0) var<uniform> view: SplatView;
// The sorted pairs' bin ids (whole-view bin ids, ascending).
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read> counters: array<u32>;
// Each bin's run of the sorted pairs (whole-view bin ids).
@group(0) @binding(3) var<storage, read_write> ranges: array<vec2<u32>>;

// Each thread's bin's start, for the thread before it.
var<workgroup> starts: array<u32, WORKGROUP_SIZE>;

// The first of the `count` sorted keys that is not below `bin` (`count` if none).
fn first_at_or_after(bin: u32, count: u32) -> u32 {
    var low = 0u;
    var high = count;
    while low < high {
        let middle = low + (high - low) / 2u;
        if keys[middle] < bin {
            low = middle + 1u;
        } else {
            high = middle;
        }
    }
    return low;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn tile_range(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) thread: u32,
) {
    let across = bins_across(view);
    let first_bin = view.band_first_row / 2u * across;
    let band_bins = (view.band_end_row + 1u) / 2u * across - first_bin;
    let count = counters[COUNTER_PAIRS_KEPT];
    // Threads past the band's bins stay for the barrier.
    let index = min(gid.x, band_bins);
    let bin = first_bin + index;
    let start = first_at_or_after(bin, count);
    starts[thread] = start;
    workgroupBarrier();
    if index >= band_bins {
        return;
    }
    var end = 0u;
    if thread + 1u < WORKGROUP_SIZE {
        end = starts[thread + 1u];
    } else {
        end = first_at_or_after(bin + 1u, count);
    }
    ranges[bin] = vec2<u32>(start, end);
}
