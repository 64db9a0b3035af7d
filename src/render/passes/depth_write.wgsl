// depth write (`SplatDepth`): writes each pixel's splat median depth into the view's
// depth buffer where it is nearer than what the opaque pass left, so transparent
// meshes drawn later are hidden behind dense splats and depth-reading passes see
// them. Pixels whose transmittance never reached 0.5 keep the depth they had.
// The same pass writes a shadow view's splat surface into its light's shadow map.
// Drawn over the tiles the tile render drew (`tile_quads.wgsl`): elsewhere no pixel
// reaches the median.

#import bevy_splat::common::LayerParams

@group(0) @binding(0) var median_depth: texture_2d<f32>;
@group(0) @binding(1) var<uniform> params: LayerParams;

@fragment
fn depth_write(@builtin(position) position: vec4<f32>) -> @builtin(frag_depth) f32 {
    // A shadow view drawn at a coarser scale than its map covers each map texel with
    // the layer texel it falls in.
    // A light's cascades drawn together read their own cell of the layer.
    let pixel = (vec2<u32>(position.xy) - params.origin_and_modes.xy) / max(params.tiles.w, 1u)
        + params.cell_origin.xy;
    let depth = textureLoad(median_depth, pixel, 0).x;
    if !(depth > 0.0) {
        discard;
    }
    // A directional light's cascade keeps casters between it and the cascade's near
    // plane (depth above 1) at the near plane, as Bevy's unclipped shadow depth does;
    // a camera's near plane culls every splat in front of it.
    return min(depth, 1.0);
}
