// The preprocess's reads for the compact layout (`render/compact.rs` has the encoding
// and its reasons): eight words of geometry per splat, then one signed byte per SH
// coefficient past DC, relative to the splat's own scale.

struct CompactSplat {
    position: vec3<f32>,
    // Smallest three: bits 0–1 the largest component's index (w, x, y, z), then the
    // other three in order, 10 bits each over [−1/√2, 1/√2].
    rotation: u32,
    // f16 pairs: (log-scale x, y), (log-scale z, opacity logit), (DC r, g),
    // (DC b, scale of the SH bytes).
    scale_xy: u32,
    scale_z_opacity: u32,
    dc_rg: u32,
    dc_b_sh_scale: u32,
}

@group(0) @binding(2) var<storage, read> geometry: array<CompactSplat>;
@group(0) @binding(3) var<storage, read> sh: array<u32>;

fn unpack_rotation(word: u32) -> vec4<f32> {
    let largest = word & 3u;
    let small = (vec3<f32>(vec3<u32>(word >> 2u, word >> 12u, word >> 22u) & vec3<u32>(1023u))
        / 1023.0 * 2.0 - 1.0) * 0.70710678118654752;
    let dropped = sqrt(max(0.0, 1.0 - dot(small, small)));
    // Put the dropped component back at its index; the others keep their order.
    switch largest {
        case 0u: { return vec4<f32>(dropped, small); }
        case 1u: { return vec4<f32>(small.x, dropped, small.yz); }
        case 2u: { return vec4<f32>(small.xy, dropped, small.z); }
        default: { return vec4<f32>(small, dropped); }
    }
}

fn load_geometry(index: u32) -> SplatGeometry {
    let c = geometry[index];
    let scale_xy = unpack2x16float(c.scale_xy);
    let scale_z_opacity = unpack2x16float(c.scale_z_opacity);
    var g: SplatGeometry;
    g.position = c.position;
    g.opacity_logit = scale_z_opacity.y;
    g.rotation = unpack_rotation(c.rotation);
    g.log_scale = vec3<f32>(scale_xy, scale_z_opacity.x);
    return g;
}

fn sh_coefficient(index: u32, k: u32) -> vec3<f32> {
    let dc_b_scale = unpack2x16float(geometry[index].dc_b_sh_scale);
    if k == 0u {
        return vec3<f32>(unpack2x16float(geometry[index].dc_rg), dc_b_scale.x);
    }
    let base = index * chunk.sh_words;
    let i = 3u * (k - 1u);
    var c: vec3<f32>;
    for (var channel = 0u; channel < 3u; channel++) {
        let byte = i + channel;
        c[channel] = unpack4x8snorm(sh[base + byte / 4u])[byte % 4u];
    }
    return c * dc_b_scale.y;
}
