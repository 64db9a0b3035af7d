// composite: draws the finished splat layer into the view's colour.
//
// The layer holds premultiplied sRGB display values C with coverage A, as the trained
// images were blended: over a background b the reference image is C + (1 - A) b, in
// sRGB values. Where the view stores sRGB values itself (or for a parity render,
// `Passthrough`), premultiplied hardware blending computes exactly that
// (`composite_premultiplied`). Where it stores linear light, blending there would
// give linear(C) + (1 - A) b_linear, which brightens every half-transparent splat
// over a lit background; so `composite_over_scene` reads the scene behind (a copy
// of the view's colour) and writes linear(C + (1 - A) srgb(b)) itself.
//
// `composite_compute` does either in a compute pass, for a single-sampled view whose
// main texture takes storage writes: it reads the scene behind from the copy and
// writes the blended pixel itself. GPUs with little raster hardware (an H200) run the
// fragment pass at a fraction of their memory rate.
//
// Both forms run over the tiles the tile render drew only (`tile_quads.wgsl` draws the
// fragment passes, the tile order's grid the compute one): a pixel no splat reaches
// keeps what the scene wrote, so it is not visited at all.

#import bevy_splat::common::{LayerParams, TILE_SIZE}

@group(0) @binding(0) var splat_layer: texture_2d<f32>;
@group(0) @binding(1) var<uniform> params: LayerParams;
// Only `composite_over_scene` reads it: the view's colour under the viewport, copied
// before this pass: linear light, or for a target of `srgb_levels()`, its sRGB bytes.
@group(0) @binding(2) var scene: texture_2d<f32>;
// Only `composite_compute` writes it: the view's main texture, in its own format.
#ifdef TARGET_RGBA8UNORM
@group(0) @binding(3) var main_texture: texture_storage_2d<rgba8unorm, write>;
#else
#ifdef TARGET_RGBA32FLOAT
@group(0) @binding(3) var main_texture: texture_storage_2d<rgba32float, write>;
#else
@group(0) @binding(3) var main_texture: texture_storage_2d<rgba16float, write>;
#endif
#endif
// Only `composite_compute` reads it: the band's tiles, busiest first; its grid covers
// the drawn ones (`tile_order.wgsl`).
@group(0) @binding(4) var<storage, read> tile_order: array<u32>;

// The viewport's origin in the target.
fn origin() -> vec2<u32> {
    return params.origin_and_modes.xy;
}

// Whether the result is taken to linear light (`CompositeMode::LinearOverBlack`).
fn linearize() -> bool {
    return params.origin_and_modes.z == 1u;
}

// The levels per channel of a target that stores sRGB-encoded bytes (255), else 0.
fn srgb_levels() -> u32 {
    return params.origin_and_modes.w;
}

fn srgb_to_linear(c: vec3<f32>) -> vec3<f32> {
    let low = c / 12.92;
    let high = pow((c + 0.055) / 1.055, vec3<f32>(2.4));
    return select(high, low, c <= vec3<f32>(0.04045));
}

// The inverse of `srgb_to_linear`, continued above 1 for HDR views.
fn linear_to_srgb(c: vec3<f32>) -> vec3<f32> {
    let low = c * 12.92;
    let high = 1.055 * pow(max(c, vec3<f32>(0.0031308)), vec3<f32>(1.0 / 2.4)) - 0.055;
    return select(high, low, c <= vec3<f32>(0.0031308));
}

// An sRGB value as the linear light a target of `srgb_levels()` stores exactly. The
// target encodes what it is given back to sRGB and rounds it to a level; an encoder
// exact to a fraction of a level (Vulkan asks for less than one) can round a value near
// the middle between two levels either way, so the value is rounded to its level here,
// as the reference rounds its image, and the target is given that level's own linear
// value, which it encodes back exactly.
fn to_target_linear(c: vec3<f32>) -> vec3<f32> {
    if srgb_levels() == 0u {
        return srgb_to_linear(c);
    }
    let levels = f32(srgb_levels());
    return srgb_to_linear(round(clamp(c, vec3<f32>(0.0), vec3<f32>(1.0)) * levels) / levels);
}

fn layer_at(position: vec4<f32>) -> vec4<f32> {
    return textureLoad(splat_layer, vec2<u32>(position.xy) - origin(), 0);
}

// Blended by the hardware as premultiplied alpha: exact where the view stores sRGB
// values. With `linearize()` (a view in linear light whose colour cannot be copied)
// it is exact over black only: linear(C) + (1 - A) b_linear.
@fragment
fn composite_premultiplied(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let layer = layer_at(position);
    if !linearize() || layer.a <= 0.0 {
        return layer;
    }
    return vec4<f32>(to_target_linear(max(layer.rgb, vec3<f32>(0.0))), layer.a);
}

// Written without blending: C + (1 - A) b in sRGB values, taken to linear light.
// Pixels the splats do not reach are left alone, so a multisampled view keeps its
// edges there; where they do, every sample gets the one blended value.
@fragment
fn composite_over_scene(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let layer = layer_at(position);
    if layer.a <= 0.0 {
        discard;
    }
    let behind = textureLoad(scene, vec2<u32>(position.xy) - origin(), 0);
    return over_scene(layer, behind);
}

// The layer over the scene behind, blended in sRGB values, in the target's terms.
fn over_scene(layer: vec4<f32>, behind: vec4<f32>) -> vec4<f32> {
    // The copy of an sRGB-byte target holds its bytes as they are (`SceneCopy`).
    var behind_srgb = behind.rgb;
    if srgb_levels() == 0u {
        behind_srgb = linear_to_srgb(max(behind.rgb, vec3<f32>(0.0)));
    }
    let over = layer.rgb + (1.0 - layer.a) * behind_srgb;
    return vec4<f32>(to_target_linear(over), layer.a + (1.0 - layer.a) * behind.a);
}

// One workgroup per drawn tile, one thread per pixel. OVER_SCENE:
// `composite_over_scene`'s blend; else the premultiplied blend the hardware does for
// `composite_premultiplied` (never with a linearizing uniform: a view whose colour
// cannot be copied has no compute composite).
@compute @workgroup_size(TILE_SIZE, TILE_SIZE)
fn composite_compute(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_id) local: vec3<u32>,
) {
    let across = params.tiles.x;
    let tile = tile_order[group.x + group.y * across];
    let pixel = vec2<u32>(tile % across, tile / across) * TILE_SIZE + local.xy;
    let size = min(textureDimensions(splat_layer), textureDimensions(scene));
    if any(pixel >= size) {
        return;
    }
    let layer = textureLoad(splat_layer, pixel, 0);
    // Pixels the splats do not reach keep what the scene wrote.
    if !(layer.a > 0.0) {
        return;
    }
    let behind = textureLoad(scene, pixel, 0);
#ifdef OVER_SCENE
    let blended = over_scene(layer, behind);
#else
    let blended = layer + (1.0 - layer.a) * behind;
#endif
    textureStore(main_texture, pixel + origin(), blended);
}
