// A reveal: splats inside a world-space sphere are drawn as trained, splats outside
// are gone, and in a band at the sphere's surface they shrink, fade and glow.
//   params[0]: the sphere's centre (xyz) and radius (w)
//   params[1]: the band's width (x) and the glow's colour (yzw)
#import bevy_splat::preprocess::hook::{Splat, SplatContext}

fn modify_splat(splat: Splat, context: SplatContext) -> Splat {
    let sphere = context.params[0];
    let band = max(context.params[1].x, 1e-4);
    // 1 inside the sphere, 0 a band's width outside it.
    let shown = clamp(1.0 - (distance(splat.position, sphere.xyz) - sphere.w) / band, 0.0, 1.0);
    var out = splat;
    out.opacity = splat.opacity * shown;
    out.scale = splat.scale * mix(0.3, 1.0, shown);
    // Brightest in the band's middle.
    out.colour = splat.colour + 4.0 * shown * (1.0 - shown) * context.params[1].yzw;
    return out;
}
