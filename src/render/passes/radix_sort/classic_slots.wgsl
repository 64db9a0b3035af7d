// Radix sort, classic steps: where each (digit, block) of a pass starts. The `count`
// kernel (classic.wgsl) stores every block's digit histogram digit-major
// (hist[digit * blocks + block]), and an exclusive prefix scan of `hist` (scan.wgsl)
// turns each entry into the first output slot of that (digit, block), which the
// scatter (scatter.wgsl, without the shader def SORT_ONESWEEP) reads here. Any GPU
// runs it: no workgroup waits for another.
#define_import_path bevy_splat::radix_sort::classic_slots

#import bevy_splat::radix_sort::keys::state

@group(0) @binding(3) var<storage, read_write> hist: array<u32>;

// The scan of `hist` gives each digit's first output slot directly.
fn publish_block_counts(block: u32, digit: u32, count: u32) -> u32 {
    return 0u;
}

fn first_output_slot(block: u32, digit: u32, count: u32, digit_start: u32) -> u32 {
    return hist[digit * state.blocks + block];
}
