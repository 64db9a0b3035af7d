// Turns counts that only the GPU knows into indirect dispatch arguments, splitting a
// grid wider than the per-dimension limit into rows (kernels rebuild a linear index as
// gid.x + gid.y · 65535 · 256).

// counters: 0 visible splats, 1 pairs needed, 2 pairs kept (≤ capacity), 3 visible
// splats kept (≤ capacity), 4..6 dispatch over kept splats, 8..10 dispatch over kept
// pairs, 12 the largest depth key written, 13 the complement of the smallest. Preprocess and duplicate count what they would write past a capacity, so the
// CPU learns what the band needs.
@group(0) @binding(0) var<storage, read_write> counters: array<u32>;
// x: pair capacity, y: splat capacity.
@group(0) @binding(1) var<uniform> capacities: vec4<u32>;

const MAX_GROUPS: u32 = 65535u;

fn write_grid(at: u32, threads: u32) {
    let groups = (threads + 255u) / 256u;
    let rows = max((groups + MAX_GROUPS - 1u) / MAX_GROUPS, 1u);
    counters[at] = min(groups, MAX_GROUPS);
    counters[at + 1u] = select(0u, rows, groups > 0u);
    counters[at + 2u] = 1u;
}

@compute @workgroup_size(1)
fn visible_dispatch() {
    let kept = min(counters[0], capacities.y);
    counters[3] = kept;
    write_grid(4u, kept);
}

@compute @workgroup_size(1)
fn pair_dispatch() {
    let kept = min(counters[1], capacities.x);
    counters[2] = kept;
    write_grid(8u, kept);
}
