// The vertex stage of the fullscreen passes (the composite and the depth write): one
// triangle over the viewport; each fragment stage reads its textures at its pixel.

@vertex
fn fullscreen(@builtin(vertex_index) index: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((index << 1u) & 2u), f32(index & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}
