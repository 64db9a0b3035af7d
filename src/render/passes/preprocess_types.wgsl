// What the preprocess and the reads of each storage layout share: the splat as the
// layouts decode it, a cloud's instance in the view, and the chunk's parameters.
// Their Rust twins are in `preprocess.rs` (checked by its tests).
#define_import_path bevy_splat::preprocess::types

// Volumes per instance: `MAX_CROP_VOLUMES_GPU` in `preprocess.rs`.
const MAX_CROP_VOLUMES: u32 = #{MAX_CROP_VOLUMES}u;

struct SplatGeometry {
    position: vec3<f32>,
    opacity_logit: f32,
    rotation: vec4<f32>, // w, x, y, z
    log_scale: vec3<f32>,
    pad: f32,
}

// A box (the unit cube) or sphere (the unit ball) in the cloud's frame.
struct CropVolume {
    unit_from_cloud: mat4x4<f32>,
    // 0: contains nothing, 1: box, 2: sphere.
    shape: u32,
    // 1: cut away what is inside; 0: keep it.
    cut: u32,
}

// Where one cloud stands relative to the camera, and what it looks like there.
struct CloudInstance {
    cam_from_cloud: mat4x4<f32>,
    // Camera centre in the cloud's frame: view directions for SH are taken there.
    camera_in_cloud: vec4<f32>,
    // 1: Mip-Splatting's 2-D filter keeps each splat's weight (`SplatRasterMode`).
    antialiased: u32,
    // For a cloud with a `SplatShader`: the time it is given, in seconds.
    shader_time: f32,
    // `SplatLighting`: LIGHTING_UNLIT, _SHADOWED or _LIT, with LIGHTING_RECEIVES_SHADOWS
    // unless the cloud has `NotShadowReceiver`; and the `Shadowed` strength.
    lighting: u32,
    lighting_strength: f32,
    // Colour (rgb) and opacity (a) multipliers (`SplatTint`).
    tint: vec4<f32>,
    crop_count: u32,
    crop_keeps: u32,
    // The layer cell its splats are drawn in (`LayerCell`): 0 but for a light's
    // cascades drawn together.
    cell: u32,
    crops: array<CropVolume, MAX_CROP_VOLUMES>,
    // For a cloud with a `SplatShader`: world space from the cloud's frame, and the
    // shader's parameters.
    world_from_cloud: mat4x4<f32>,
    shader_params: array<vec4<f32>, 2>,
}

struct ChunkParams {
    splat_count: u32,
    sh_degree: u32,
    sh_stride: u32,
    // Threads per row of the 2-D dispatch grid.
    grid_width: u32,
    first_instance: u32,
    instance_count: u32,
    // Words of `sh` per splat, and whether they hold pairs of f16 (else one f32 each).
    sh_words: u32,
    sh_half: u32,
    // The chunk's first splat in its asset: what a pick reports is the asset's index
    // (for an interior chunk of a level-of-detail tree, the first node's id).
    first_splat: u32,
    // With level of detail (the `LOD` variant): 1 for a chunk of leaves, 2 for one of
    // interior nodes (the records' layouts); whether this dispatch counts for the
    // view's feedback (band 0 only); the cut's threshold (0: the leaves alone) and half
    // the blend's width in octaves.
    lod_records: u32,
    lod_feedback: u32,
    lod_threshold: f32,
    lod_half_octaves: f32,
    // The run of the chunk's splats this dispatch draws (`splat_count` stays the whole
    // chunk's, which the layout's reads need): where a cut reaches only part of a
    // chunk, the rest is not dispatched.
    run_first: u32,
    run_count: u32,
    _pad: u32,
}

@group(0) @binding(1) var<uniform> chunk: ChunkParams;

// `SplatLighting` as `CloudInstance::lighting` and `LitPoint::mode` hold it (their
// one definition is `render::passes::preprocess`'s `LIGHTING_*`).
const LIGHTING_UNLIT: u32 = #{LIGHTING_UNLIT}u;
const LIGHTING_SHADOWED: u32 = #{LIGHTING_SHADOWED}u;
const LIGHTING_LIT: u32 = #{LIGHTING_LIT}u;
const LIGHTING_MODE_MASK: u32 = #{LIGHTING_MODE_MASK}u;
const LIGHTING_RECEIVES_SHADOWS: u32 = #{LIGHTING_RECEIVES_SHADOWS}u;
// Where a `LitPoint`'s lighting word keeps the `Shadowed` strength (unorm16).
const LIGHTING_STRENGTH_SHIFT: u32 = 16u;

// What the light pass needs of one projected splat, by its slot (the `RECEIVE`
// variant writes it): where its centre is in the world, its shortest axis there (a
// trained surface's splats are flat discs across it) as long as the splat's standard
// deviation along it, its largest standard deviation in the world, and its cloud's
// lighting: the `CloudInstance::lighting` bits, with the `Shadowed` strength as
// unorm16 in the top 16 bits.
struct LitPoint {
    position: vec3<f32>,
    spread: f32,
    axis: vec3<f32>,
    lighting: u32,
}
