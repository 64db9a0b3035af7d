// threshold depth (`SplatShadowDepth::Threshold`): a shadow view's splats drawn straight
// into its light's shadow map, two triangles each, with no sort and no tiles. A texel
// takes a splat's depth where the splat's own opacity there reaches the light's
// threshold; the map's depth test keeps the nearest, so the order they are drawn in
// does not matter. One instance per splat the preprocess kept (`ViewCounters::
// splat_draw`, which `visible_dispatch` writes).
//
// The threshold's edge is an ellipse: opacity · 2^−|u|² ≥ t with u = L·d (the
// footprint's factors, `footprint_sigma`), so |u|² ≤ log₂(opacity / t). The quad is
// the square |u₀|, |u₁| ≤ that reach taken back through L⁻¹, the parallelogram that
// holds the ellipse exactly; the fragment stage cuts the ellipse out of it.

#import bevy_splat::common::{
    LayerParams, SplatView, ProjectedSplat, buffer_depth, splat_opacity,
}

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(1) var<uniform> params: LayerParams;
@group(0) @binding(2) var<storage, read> projected: array<ProjectedSplat>;

struct SplatCorner {
    @builtin(position) position: vec4<f32>,
    // The splat's centre in the layer's texels.
    @location(0) @interpolate(flat) centre: vec2<f32>,
    // Its footprint's factors l_xx, l_yx, l_yy, and the reach |u|² the threshold
    // allows.
    @location(1) @interpolate(flat) footprint: vec4<f32>,
}

@vertex
fn splat_corner(
    @builtin(vertex_index) corner: u32,
    @builtin(instance_index) slot: u32,
) -> SplatCorner {
    var out: SplatCorner;
    let s = projected[slot];
    let reach = log2(splat_opacity(s) / params.shadow_threshold.x);
    if !(reach > 0.0) {
        // Never as opaque as the threshold: every corner outside the clip volume.
        out.position = vec4<f32>(2.0, 2.0, 2.0, 1.0);
        return out;
    }
    // Corners 0..6: (−,−) (+,−) (−,+), (−,+) (+,−) (+,+).
    let unit = vec2<f32>(
        select(-1.0, 1.0, corner == 1u || corner == 4u || corner == 5u),
        select(-1.0, 1.0, corner == 2u || corner == 3u || corner == 5u),
    );
    let u = unit * sqrt(reach);
    let dy = u.y / s.l_yy;
    let dx = (u.x - s.l_yx * dy) / s.l_xx;
    let texel = vec2<f32>(s.x + dx, s.y + dy);
    let size = vec2<f32>(max(params.tiles.yz, vec2<u32>(1u)));
    let ndc = texel / size * 2.0 - 1.0;
    // Casters between the light and a cascade's near plane (depth above 1) stay at
    // the near plane, as Bevy's unclipped shadow depth keeps them and as the median's
    // depth write does; beyond the far plane (below 0) they are clipped.
    let depth = min(buffer_depth(view.depth_from_distance, s.depth), 1.0);
    out.position = vec4<f32>(ndc.x, -ndc.y, depth, 1.0);
    out.centre = vec2<f32>(s.x, s.y);
    out.footprint = vec4<f32>(s.l_xx, s.l_yx, s.l_yy, reach);
    return out;
}

@fragment
fn splat_coverage(corner: SplatCorner) {
    // The map texel's centre in the layer's texels (a light's `SplatShadowScale`
    // makes each cover `scale` map texels a side).
    let scale = f32(max(params.tiles.w, 1u));
    let texel = (corner.position.xy - vec2<f32>(params.origin_and_modes.xy)) / scale;
    let d = texel - corner.centre;
    let f = corner.footprint;
    let u0 = f.x * d.x + f.y * d.y;
    let u1 = f.z * d.y;
    if u0 * u0 + u1 * u1 > f.w {
        discard;
    }
}
