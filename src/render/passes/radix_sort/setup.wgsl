// Radix sort, setup kernel: turns the pair count n (only known on the GPU) into the
// sort's state (`prepare.wgsl`, state.wgsl): the block count, the indirect dispatch
// arguments of the count, histogram and scatter kernels, the length of the digit
// histogram that the prefix scan sums, and a ranged sort's base and shift. The
// one-sweep sort's setup also clears its block counters and digit totals. Bound:
// `count_src` at 0, the state at 1 and the status at 2 (SORT_PREPARE_STATE and
// SORT_PREPARE_STATUS).

#import bevy_splat::radix_sort::prepare::{sort_state, prepare_state, clear_onesweep_counts}
#import bevy_splat::radix_sort::state::{NO_RANGE, WG}

@group(0) @binding(0) var<storage, read> count_src: array<u32>;

@compute @workgroup_size(1)
fn setup() {
    setup_state();
}

@compute @workgroup_size(WG)
fn setup_onesweep(@builtin(local_invocation_index) t: u32) {
    if t == 0u {
        setup_state();
    }
    clear_onesweep_counts(t, WG);
}

fn setup_state() {
    var range = vec2<u32>(0u);
    let word = sort_state.range_word;
    if word != NO_RANGE {
        range = vec2<u32>(count_src[word], count_src[word + 1u]);
    }
    prepare_state(count_src[sort_state.count_word], range);
}
