// tile quads: the vertex stage of the passes that read the splat layer (the composite
// and the depth write). Two triangles over each tile the tile render drew, one
// instance per tile: the band's tile order is the instance buffer and its first
// `tiles_drawn` entries are drawn (`tile_order.wgsl` writes the draw). A pixel of a
// tile no splat reaches would leave the target as it was, so it is not rasterized at
// all: these passes cost what the splats cover, not the viewport.

#import bevy_splat::common::{LayerParams, TILE_SIZE}

@group(0) @binding(1) var<uniform> params: LayerParams;

@vertex
fn tile_quad(
    @builtin(vertex_index) corner: u32,
    @location(0) tile: u32,
) -> @builtin(position) vec4<f32> {
    // Corners 0..6: (0,0) (1,0) (0,1), (0,1) (1,0) (1,1).
    let offset = vec2<u32>(
        select(0u, 1u, corner == 1u || corner == 4u || corner == 5u),
        select(0u, 1u, corner == 2u || corner == 3u || corner == 5u),
    );
    let across = max(params.tiles.x, 1u);
    let size = max(params.tiles.yz, vec2<u32>(1u));
    let first = vec2<u32>(tile % across, tile / across);
    // A tile over the viewport's right or bottom edge ends at the edge.
    let pixel = vec2<f32>(min((first + offset) * TILE_SIZE, size));
    let ndc = pixel / vec2<f32>(size) * 2.0 - 1.0;
    return vec4<f32>(ndc.x, -ndc.y, 0.0, 1.0);
}
