// Grids of workgroups wider than a dispatch allows along one dimension, split into
// rows: the one way every indirect dispatch is written and every kernel finds its
// place in one (the sizes of the passes' own kernels, from `common.wgsl`, stay there).
#define_import_path bevy_splat::common::grid

// Indirect dispatch arguments (x, y, z) of a 2-D grid of at least `groups`
// workgroups, at most `max_x` along x: whole rows, no rows for no groups.
fn grid_of(groups: u32, max_x: u32) -> vec3<u32> {
    let x = min(groups, max_x);
    return vec3<u32>(x, select(0u, (groups + x - 1u) / x, x != 0u), 1u);
}

// A workgroup's index in a grid of `grid_of`'s, counted along its rows; the surplus
// groups of the last row find an index past the work and return.
fn linear_group(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.y * nwg.x + wid.x;
}
