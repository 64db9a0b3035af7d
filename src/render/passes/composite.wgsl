// composite: draws the finished splat layer over the view's colour with premultiplied
// alpha. Trained colours are sRGB display values; unless the view stores sRGB-encoded
// values itself, they are taken to linear light here, so the view's output encoding
// gives the trained colours back.

@group(0) @binding(0) var splat_layer: texture_2d<f32>;
@group(0) @binding(1) var<uniform> params: vec4<u32>; // viewport origin x, y; linearize flag

@vertex
fn fullscreen(@builtin(vertex_index) index: u32) -> @builtin(position) vec4<f32> {
    // One triangle that covers the viewport.
    let uv = vec2<f32>(f32((index << 1u) & 2u), f32(index & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

fn srgb_to_linear(c: vec3<f32>) -> vec3<f32> {
    let low = c / 12.92;
    let high = pow((c + 0.055) / 1.055, vec3<f32>(2.4));
    return select(high, low, c <= vec3<f32>(0.04045));
}

@fragment
fn composite(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let pixel = vec2<u32>(position.xy) - params.xy;
    let layer = textureLoad(splat_layer, pixel, 0);
    if params.z == 0u || layer.a <= 0.0 {
        return layer;
    }
    let straight = clamp(layer.rgb / layer.a, vec3<f32>(0.0), vec3<f32>(1.0));
    return vec4<f32>(srgb_to_linear(straight) * layer.a, layer.a);
}
