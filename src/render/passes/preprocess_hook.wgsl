// What a `SplatShader`'s WGSL sees: its function
//
//     fn modify_splat(splat: Splat, context: SplatContext) -> Splat
//
// runs in the preprocess on every splat of the clouds that carry the shader, before
// the splat is projected; what it returns is drawn (and picked). A splat returned
// with an opacity below 1/255, or a non-finite value, is not drawn.
#define_import_path bevy_splat::preprocess::hook

// One splat as a shader sees and changes it.
struct Splat {
    // Centre in world space.
    position: vec3<f32>,
    // Opacity after the sigmoid and the cloud's tint, in [0, 1].
    opacity: f32,
    // Standard deviations along the splat's own axes, in the cloud's units.
    scale: vec3<f32>,
    // The view-independent part of its colour (the SH's first term, tinted), in sRGB
    // values. What the shader changes here is added to the colour seen from the
    // camera, so the view-dependent part stays.
    colour: vec3<f32>,
}

// What else the shader is given.
struct SplatContext {
    // The splat's index in its asset (what a pick reports).
    index: u32,
    // Seconds since the app started (Bevy's `Time`, wrapped every hour).
    time: f32,
    // The cloud's `SplatShader::params`.
    params: array<vec4<f32>, 2>,
}
