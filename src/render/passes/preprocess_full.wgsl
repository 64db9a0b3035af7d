// The preprocess's reads for the full layouts: `SplatGeometry` as trained (f32), SH as
// one f32 per word or, with `sh_half`, two f16 per word.
#define_import_path bevy_splat::preprocess::full_layout

#import bevy_splat::preprocess::types::{SplatGeometry, chunk}

@group(0) @binding(2) var<storage, read> geometry: array<SplatGeometry>;
@group(0) @binding(3) var<storage, read> sh: array<u32>;

fn load_geometry(index: u32) -> SplatGeometry {
    return geometry[index];
}

// SH float `i` of splat `index`, stored as f32 or packed in f16 pairs.
fn sh_value(index: u32, i: u32) -> f32 {
    let base = index * chunk.sh_words;
    if chunk.sh_half == 0u {
        return bitcast<f32>(sh[base + i]);
    }
    let pair = unpack2x16float(sh[base + i / 2u]);
    return select(pair.x, pair.y, (i & 1u) == 1u);
}

fn sh_coefficient(index: u32, k: u32) -> vec3<f32> {
    let i = 3u * k;
    return vec3<f32>(sh_value(index, i), sh_value(index, i + 1u), sh_value(index, i + 2u));
}
