// Wind sway: each splat moves along the wind by an amount that grows with the square
// of its height above the ground (a stem bends most at its tip), in gusts that travel
// across the scene.
//   params[0]: the wind's direction (xyz, world space) and its strength (w, metres of
//              sway at one metre above the ground)
//   params[1]: the ground's height (x), the gusts' frequency (y, per second) and
//              their wavelength (z, metres)
#import bevy_splat::preprocess::hook::{Splat, SplatContext}

fn modify_splat(splat: Splat, context: SplatContext) -> Splat {
    let wind = context.params[0];
    let ground = context.params[1];
    let height = max(splat.position.y - ground.x, 0.0);
    let along = dot(splat.position, normalize(wind.xyz)) / max(ground.z, 1e-3);
    let phase = 6.2831853 * (context.time * ground.y - along);
    let gust = sin(phase) + 0.35 * sin(2.7 * phase + 1.3);
    var out = splat;
    out.position = splat.position + normalize(wind.xyz) * wind.w * height * height * gust;
    return out;
}
