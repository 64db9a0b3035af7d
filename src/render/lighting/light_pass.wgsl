// light: after the preprocess, one thread per kept projected splat of a view whose
// clouds receive light (`SplatLighting`). `Shadowed` darkens the trained colour by
// the share of the lights' irradiance that casters block; `Lit` takes the trained
// colour as albedo under Bevy's directional, point and spot lights and its ambient
// light. The shadow lookups are Bevy's own (`bevy_pbr::shadows`: its cascade choice,
// filtering and biases), reading a group 0 laid out as the mesh view's bindings.

#import bevy_pbr::mesh_view_bindings::{view, lights, clustered_lights}
#import bevy_pbr::mesh_view_types::{
    DIRECTIONAL_LIGHT_FLAGS_SHADOWS_ENABLED_BIT, POINT_LIGHT_FLAGS_SHADOWS_ENABLED_BIT,
    POINT_LIGHT_FLAGS_SPOT_LIGHT_BIT, POINT_LIGHT_FLAGS_SPOT_LIGHT_Y_NEGATIVE,
}
#import bevy_pbr::shadows::{fetch_directional_shadow, fetch_point_shadow, fetch_spot_shadow}
#import bevy_splat::common::{
    ProjectedSplat, splat_colour, splat_opacity, pack_colour_opacity, linear_thread,
    WORKGROUP_SIZE, COUNTER_VISIBLE_KEPT,
}
#import bevy_splat::preprocess::types::{
    LitPoint, LIGHTING_SHADOWED, LIGHTING_LIT, LIGHTING_MODE_MASK, LIGHTING_RECEIVES_SHADOWS,
    LIGHTING_STRENGTH_SHIFT,
}

struct LightParams {
    // Entries of `clustered_lights` in use (its buffer may hold stale ones past them).
    clustered_count: u32,
    // How far a splat's shadow lookup moves toward each light, in standard deviations
    // of the splat along that direction: the splat itself is in the shadow map.
    bias_sigmas: f32,
}

@group(1) @binding(0) var<storage, read> counters: array<u32>;
@group(1) @binding(1) var<storage, read_write> projected: array<ProjectedSplat>;
@group(1) @binding(2) var<storage, read> lit_points: array<LitPoint>;
@group(1) @binding(3) var<uniform> params: LightParams;

const PI: f32 = 3.141592653589793;

// Bevy's windowed inverse-square falloff (`getDistanceAttenuation`).
fn distance_attenuation(distance_squared: f32, inverse_range_squared: f32) -> f32 {
    let factor = distance_squared * inverse_range_squared;
    let smooth_factor = saturate(1.0 - factor * factor);
    return smooth_factor * smooth_factor / max(distance_squared, 0.0001);
}

fn luminance(c: vec3<f32>) -> f32 {
    return dot(c, vec3<f32>(0.2126, 0.7152, 0.0722));
}

// What reaches one splat: the irradiance-weighted share of the lights that casters
// leave unblocked (`visible`, of `total`), and the diffuse light a Lambertian
// surface of albedo 1 with `normal` reflects (`diffuse`, before exposure).
struct Received {
    visible: f32,
    total: f32,
    diffuse: vec3<f32>,
}

fn receive(point: LitPoint, frag_coord: vec2<f32>) -> Received {
    var out = Received(0.0, 0.0, vec3<f32>(0.0));
    let shadows = (point.lighting & LIGHTING_RECEIVES_SHADOWS) != 0u;
    let position = vec4<f32>(point.position, 1.0);
    let to_camera = view.world_position - point.position;
    let thickness = length(point.axis);
    var normal = point.axis / max(thickness, 1e-30);
    // The normal faces the camera: a splat is seen from the side it is drawn on.
    normal = select(normal, -normal, dot(normal, to_camera) < 0.0);
    let extent = Extent(normal, thickness, point.spread);
    let view_z = dot(
        vec4<f32>(view.view_from_world[0].z, view.view_from_world[1].z,
            view.view_from_world[2].z, view.view_from_world[3].z),
        position,
    );
    for (var i = 0u; i < lights.n_directional_lights; i++) {
        let light = &lights.directional_lights[i];
        let l = (*light).direction_to_light.xyz;
        var shadow = 1.0;
        if shadows && ((*light).flags & DIRECTIONAL_LIGHT_FLAGS_SHADOWS_ENABLED_BIT) != 0u {
            let lifted = lift(point.position, extent, l);
            shadow = fetch_directional_shadow(i, lifted, normal, view_z, frag_coord);
        }
        add_light(&out, (*light).color.rgb, l, normal, shadow);
    }
    for (var i = 0u; i < params.clustered_count; i++) {
        let light = &clustered_lights.data[i];
        let to_light = (*light).position_radius.xyz - point.position;
        let distance_squared = dot(to_light, to_light);
        let l = to_light * inverseSqrt(max(distance_squared, 1e-12));
        var attenuation = distance_attenuation(
            distance_squared,
            (*light).color_inverse_square_range.w,
        );
        let spot = ((*light).flags & POINT_LIGHT_FLAGS_SPOT_LIGHT_BIT) != 0u;
        if spot {
            var spot_dir = vec3<f32>((*light).light_custom_data.x, 0.0, (*light).light_custom_data.y);
            spot_dir.y = sqrt(max(0.0, 1.0 - spot_dir.x * spot_dir.x - spot_dir.z * spot_dir.z));
            if ((*light).flags & POINT_LIGHT_FLAGS_SPOT_LIGHT_Y_NEGATIVE) != 0u {
                spot_dir.y = -spot_dir.y;
            }
            let cone = saturate(dot(-spot_dir, l) * (*light).light_custom_data.z
                + (*light).light_custom_data.w);
            attenuation *= cone * cone;
        }
        if !(attenuation > 0.0) {
            continue;
        }
        var shadow = 1.0;
        if shadows && ((*light).flags & POINT_LIGHT_FLAGS_SHADOWS_ENABLED_BIT) != 0u {
            let lifted = lift(point.position, extent, l);
            if spot {
                shadow = fetch_spot_shadow(i, lifted, normal, (*light).shadow_map_near_z, frag_coord);
            } else {
                shadow = fetch_point_shadow(i, lifted, normal, frag_coord);
            }
        }
        add_light(&out, (*light).color_inverse_square_range.rgb * attenuation, l, normal, shadow);
    }
    return out;
}

// A splat's extent: its normal, its standard deviation along it and its largest one.
struct Extent {
    normal: vec3<f32>,
    thickness: f32,
    spread: f32,
}

// The lookup point, moved toward the light by `bias_sigmas` standard deviations of the
// splat along that direction: a surface's splats are in the shadow map themselves,
// each about its own depth deep. Along `l`, a disc of thickness t and spread s has
// the variance t²c² + s²(1 − c²), c the cosine between `l` and its normal.
fn lift(position: vec3<f32>, extent: Extent, l: vec3<f32>) -> vec4<f32> {
    let c = dot(extent.normal, l);
    let variance = extent.thickness * extent.thickness * c * c
        + extent.spread * extent.spread * max(1.0 - c * c, 0.0);
    return vec4<f32>(position + l * (params.bias_sigmas * sqrt(variance)), 1.0);
}

// Finiteness by the bit pattern: WGSL lets compilers assume float math never sees
// NaN or infinity, so comparisons can't be trusted to catch them.
fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

fn finite3(v: vec3<f32>) -> bool {
    return finite(v.x) && finite(v.y) && finite(v.z);
}

// Adds one light of `colour` from direction `l`; a light with a NaN or infinite value
// (a NaN direction, a zero range) adds nothing.
fn add_light(out: ptr<function, Received>, colour: vec3<f32>, l: vec3<f32>, normal: vec3<f32>, shadow: f32) {
    let weight = luminance(colour);
    if !finite(weight) || !finite3(l) || !finite(shadow) || !(weight > 0.0) {
        return;
    }
    let lit = saturate(shadow);
    (*out).visible += weight * lit;
    (*out).total += weight;
    (*out).diffuse += colour * (saturate(dot(normal, l)) * lit / PI);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn light(@builtin(global_invocation_id) gid: vec3<u32>) {
    let slot = linear_thread(gid);
    if slot >= counters[COUNTER_VISIBLE_KEPT] {
        return;
    }
    let point = lit_points[slot];
    let mode = point.lighting & LIGHTING_MODE_MASK;
    if mode != LIGHTING_SHADOWED && mode != LIGHTING_LIT {
        return;
    }
    let splat = projected[slot];
    let colour = splat_colour(splat);
    let received = receive(point, vec2<f32>(splat.x, splat.y));
    var lit_colour = colour;
    if mode == LIGHTING_SHADOWED {
        if !(received.total > 0.0) {
            return;
        }
        let blocked = 1.0 - received.visible / received.total;
        if !(blocked > 0.0) {
            return;
        }
        let strength = f32(point.lighting >> LIGHTING_STRENGTH_SHIFT) / 65535.0;
        lit_colour = colour * (1.0 - strength * blocked);
    } else {
        let ambient = lights.ambient_color.rgb;
        lit_colour = colour * (ambient + received.diffuse) * view.exposure;
    }
    // Whatever else goes wrong leaves the trained colour.
    if !finite3(lit_colour) {
        return;
    }
    let packed = pack_colour_opacity(max(lit_colour, vec3<f32>(0.0)), splat_opacity(splat));
    projected[slot].rg = packed.x;
    projected[slot].b_opacity = packed.y;
}
