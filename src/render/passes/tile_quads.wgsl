// tile quads: the vertex stage of the passes that read the splat layer (the composite
// and the depth write). Two triangles over each run of drawn tiles along a tile row,
// one instance per run: the band's tile runs are the instance buffer, and the tile
// order counts them into the draw (`tile_order.wgsl`). A pixel of a tile no splat
// reaches would leave the target as it was, so it is not rasterized at all: these
// passes cost what the splats cover, not the viewport.

#import bevy_splat::common::{LayerParams, TILE_SIZE}

@group(0) @binding(1) var<uniform> params: LayerParams;

@vertex
fn tile_quad(
    @builtin(vertex_index) corner: u32,
    @location(0) run: vec2<u32>,
) -> @builtin(position) vec4<f32> {
    // Corners 0..6: (0,0) (1,0) (0,1), (0,1) (1,0) (1,1).
    let offset = vec2<u32>(
        select(0u, 1u, corner == 1u || corner == 4u || corner == 5u),
        select(0u, 1u, corner == 2u || corner == 3u || corner == 5u),
    );
    let across = max(params.tiles.x, 1u);
    let size = max(params.tiles.yz, vec2<u32>(1u));
    let first = vec2<u32>(run.x % across, run.x / across);
    // The run's `run.y` tiles across; a tile over the viewport's right or bottom edge
    // ends at the edge. `across` counts the layer's tiles, all cells'.
    let corner_tile = first + offset * vec2<u32>(run.y, 1u);
    // In a layer of several cells, the view's cell is its viewport: a run's part in
    // another cell ends at this cell's edge (after it) or falls outside the viewport
    // (before it), where nothing is rasterized.
    let cell = params.cell_origin.xy;
    let pixel = vec2<f32>(min(corner_tile * TILE_SIZE, cell + size)) - vec2<f32>(cell);
    let ndc = pixel / vec2<f32>(size) * 2.0 - 1.0;
    return vec4<f32>(ndc.x, -ndc.y, 0.0, 1.0);
}
