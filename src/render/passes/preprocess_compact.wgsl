// The preprocess's reads for the compact layout (`render/compact.rs` has the encoding
// and its reasons): a position box per POSITION_BLOCK splats, then seven words of
// geometry per splat; the SH bytes past DC of every splat end to end, each relative to
// the splat's own scale.
#define_import_path bevy_splat::preprocess::compact_layout

#import bevy_splat::preprocess::types::{SplatGeometry, chunk}

@group(0) @binding(2) var<storage, read> geometry: array<u32>;
@group(0) @binding(3) var<storage, read> sh: array<u32>;

// `compact.rs`'s POSITION_BLOCK, POSITION_BOX_WORDS and COMPACT_GEOMETRY_WORDS.
const POSITION_BLOCK: u32 = #{POSITION_BLOCK}u;
const POSITION_BOX_WORDS: u32 = #{POSITION_BOX_WORDS}u;
const SPLAT_WORDS: u32 = #{COMPACT_GEOMETRY_WORDS}u;
const LEVEL_MASK: u32 = (1u << 21u) - 1u;

// Word `k` of splat `index`'s seven (after the chunk's position boxes).
fn splat_word(index: u32, k: u32) -> u32 {
    let boxes = (chunk.splat_count + POSITION_BLOCK - 1u) / POSITION_BLOCK;
    return geometry[boxes * POSITION_BOX_WORDS + index * SPLAT_WORDS + k];
}

// The three 21-bit levels in words 0 and 1, placed in the splat's block's box.
fn unpack_position(index: u32) -> vec3<f32> {
    let low = splat_word(index, 0u);
    let high = splat_word(index, 1u);
    let levels = vec3<u32>(
        low & LEVEL_MASK,
        ((low >> 21u) | (high << 11u)) & LEVEL_MASK,
        (high >> 10u) & LEVEL_MASK,
    );
    let at = index / POSITION_BLOCK * POSITION_BOX_WORDS;
    let least = bitcast<vec3<f32>>(vec3<u32>(geometry[at], geometry[at + 1u], geometry[at + 2u]));
    let step = bitcast<vec3<f32>>(vec3<u32>(geometry[at + 3u], geometry[at + 4u], geometry[at + 5u]));
    return least + vec3<f32>(levels) * step;
}

// Smallest three: bits 0–1 the largest component's index (w, x, y, z), then the other
// three in order, 10 bits each over [−1/√2, 1/√2].
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

// Words 3 and 4 are f16 pairs (log-scale x, y), (log-scale z, opacity logit).
fn load_geometry(index: u32) -> SplatGeometry {
    let scale_xy = unpack2x16float(splat_word(index, 3u));
    let scale_z_opacity = unpack2x16float(splat_word(index, 4u));
    var g: SplatGeometry;
    g.position = unpack_position(index);
    g.opacity_logit = scale_z_opacity.y;
    g.rotation = unpack_rotation(splat_word(index, 2u));
    g.log_scale = vec3<f32>(scale_xy, scale_z_opacity.x);
    return g;
}

// Words 5 and 6 are f16 pairs (DC r, g), (DC b, scale of the SH bytes).
fn sh_coefficient(index: u32, k: u32) -> vec3<f32> {
    let dc_b_scale = unpack2x16float(splat_word(index, 6u));
    if k == 0u {
        return vec3<f32>(unpack2x16float(splat_word(index, 5u)), dc_b_scale.x);
    }
    let first = index * (chunk.sh_stride - 3u) + 3u * (k - 1u);
    var c: vec3<f32>;
    for (var channel = 0u; channel < 3u; channel++) {
        let byte = first + channel;
        c[channel] = unpack4x8snorm(sh[byte / 4u])[byte % 4u];
    }
    return c * dc_b_scale.y;
}
