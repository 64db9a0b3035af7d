// preprocess: one thread per splat of every instance of one cloud chunk (clouds that
// share an asset are drawn by one dispatch: a dispatch per cloud would put a pipeline
// barrier between every two clouds). Projects the splat into the view,
// culls it, evaluates its colour and counts the bins (2×2 tiles) it touches. Visible splats are
// appended (compacted) to `projected`; their depth key goes to `depth_keys` and their
// slot with their pair count (bins touched) to `depth_values`, the depth sort's keys
// and values; for a view that picks, where each came from goes to `sources`.

#import bevy_splat::common::{
    ALPHA_MIN, LAYER_CELLS, SplatView, ProjectedSplat, pack_colour_opacity, splat_rows, bin_row_spans,
    bins_in_row, WORKGROUP_SIZE, COUNTER_DEPTH_KEY_MAX, DEPTH_KEY_RANGE_COPIES,
    COUNTER_LINE_WORDS, PAIRS_SPILLED, depth_value,
    spilled_pairs_word,
}
#import bevy_splat::preprocess::types::{CropVolume, CloudInstance, chunk, MAX_CROP_VOLUMES}
#ifdef RECEIVE
#import bevy_splat::preprocess::types::{LitPoint, LIGHTING_STRENGTH_SHIFT}
#endif
// The reads of the asset's storage layout (bindings 2 and 3).
#ifdef COMPACT_LAYOUT
#import bevy_splat::preprocess::compact_layout::{load_geometry, sh_coefficient}
#else
#import bevy_splat::preprocess::full_layout::{load_geometry, sh_coefficient}
#endif
// A cloud's `SplatShader`: the user's `modify_splat`, composed in as its own module.
#ifdef SPLAT_SHADER
#import bevy_splat::preprocess::hook::{Splat, SplatContext}
#import bevy_splat::preprocess::user_shader::modify_splat
#endif
// Level of detail: each thread a node of a cloud's tree, weighted by the cut.
#ifdef LOD
#import bevy_splat::preprocess::lod::{LodView, lod_begin, lod_end, lod_weight}
#endif

fn crop_contains(volume: CropVolume, position: vec3<f32>) -> bool {
    let q = (volume.unit_from_cloud * vec4<f32>(position, 1.0)).xyz;
    if volume.shape == 1u {
        return all(abs(q) <= vec3<f32>(1.0));
    }
    if volume.shape == 2u {
        return dot(q, q) <= 1.0;
    }
    return false;
}

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(4) var<storage, read_write> projected: array<ProjectedSplat>;
// One copy of the range of the depth keys written (the largest, and the complement of
// the smallest, so that a buffer cleared to zero starts both), alone in its cache line.
struct DepthKeyRange {
    max: atomic<u32>,
    min_complement: atomic<u32>,
    rest_of_line: array<u32, COUNTER_LINE_WORDS - 2u>,
}
// The view's counters (`indirect.wgsl`): the visible count, and the range of the depth
// keys that lets the depth sort take fewer passes, in copies that the workgroups take
// in turn (`ViewCounters::depth_key_ranges` says why).
struct PreprocessCounters {
    visible: atomic<u32>,
    others: array<u32, COUNTER_DEPTH_KEY_MAX - 1u>,
    depth_key_ranges: array<DepthKeyRange, DEPTH_KEY_RANGE_COPIES>,
}
@group(0) @binding(5) var<storage, read_write> counters: PreprocessCounters;
@group(0) @binding(6) var<storage, read> instances: array<CloudInstance>;
// The depth's bits (positive floats order like their bit patterns), the sort key; then
// the pair counts too large for a depth value (`spilled_pairs_word`).
@group(0) @binding(7) var<storage, read_write> depth_keys: array<u32>;
// Each visible splat's slot and the bins it touches (its pairs), by slot
// (`depth_value`): the sort's values.
@group(0) @binding(8) var<storage, read_write> depth_values: array<u32>;
// For pointer picking: each projected splat's instance and index in its asset. A
// one-element stand-in when the view picks nothing.
@group(0) @binding(9) var<storage, read_write> sources: array<vec2<u32>>;
#ifdef RECEIVE
// For a view whose clouds receive light (`SplatLighting`): what the light pass needs
// of each projected splat, by slot.
@group(0) @binding(12) var<storage, read_write> lit_points: array<LitPoint>;
#endif

// `SplatCrop`: inside some keep volume (when there are any) and inside no cut volume.
// Reads the instance's volumes in place: copying the whole instance (448 bytes) into
// every thread costs the preprocess time.
fn kept_by_crop(instance: u32, position: vec3<f32>) -> bool {
    let count = min(instances[instance].crop_count, MAX_CROP_VOLUMES);
    var inside_keep = false;
    for (var i = 0u; i < count; i++) {
        let volume = instances[instance].crops[i];
        let inside = crop_contains(volume, position);
        if volume.cut == 1u && inside {
            return false;
        }
        inside_keep = inside_keep || (volume.cut == 0u && inside);
    }
    return instances[instance].crop_keeps == 0u || inside_keep;
}

const SH_C0: f32 = 0.28209479177387814;
const SH_C1: f32 = 0.4886025119029199;
const SH_C2 = array<f32, 5>(1.0925484305920792, -1.0925484305920792, 0.31539156525252005, -1.0925484305920792, 0.5462742152960396);
const SH_C3 = array<f32, 7>(-0.5900435899266435, 2.890611442640554, -0.4570457994644658, 0.3731763325901154, -0.4570457994644658, 1.445305721320277, -0.5900435899266435);

// The SH sum seen along `dir` (unit, cloud frame) by the reference's basis, given the
// splat's coefficient 0 as `dc`; the colour is max(sum + 0.5, 0).
fn sh_sum(index: u32, dc: vec3<f32>, dir: vec3<f32>) -> vec3<f32> {
    let base = index;
    var c = SH_C0 * dc;
    if chunk.sh_degree >= 1u {
        let x = dir.x;
        let y = dir.y;
        let z = dir.z;
        c += SH_C1 * (-y * sh_coefficient(base, 1u) + z * sh_coefficient(base, 2u) - x * sh_coefficient(base, 3u));
        if chunk.sh_degree >= 2u {
            let xx = x * x;
            let yy = y * y;
            let zz = z * z;
            c += SH_C2[0] * x * y * sh_coefficient(base, 4u)
                + SH_C2[1] * y * z * sh_coefficient(base, 5u)
                + SH_C2[2] * (2.0 * zz - xx - yy) * sh_coefficient(base, 6u)
                + SH_C2[3] * x * z * sh_coefficient(base, 7u)
                + SH_C2[4] * (xx - yy) * sh_coefficient(base, 8u);
            if chunk.sh_degree >= 3u {
                c += SH_C3[0] * y * (3.0 * xx - yy) * sh_coefficient(base, 9u)
                    + SH_C3[1] * x * y * z * sh_coefficient(base, 10u)
                    + SH_C3[2] * y * (4.0 * zz - xx - yy) * sh_coefficient(base, 11u)
                    + SH_C3[3] * z * (2.0 * zz - 3.0 * xx - 3.0 * yy) * sh_coefficient(base, 12u)
                    + SH_C3[4] * x * (4.0 * zz - xx - yy) * sh_coefficient(base, 13u)
                    + SH_C3[5] * z * (xx - yy) * sh_coefficient(base, 14u)
                    + SH_C3[6] * x * (xx - 3.0 * yy) * sh_coefficient(base, 15u);
            }
        }
    }
    return c;
}

// Finiteness by the bit pattern: WGSL lets compilers assume float math never sees
// NaN or infinity, so comparisons can't be trusted to catch them.
fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

fn finite4(v: vec4<f32>) -> bool {
    return finite(v.x) && finite(v.y) && finite(v.z) && finite(v.w);
}

fn is_neg_inf(x: f32) -> bool {
    return bitcast<u32>(x) == 0xff800000u;
}

// A log-scale may be −∞ (a scale of zero: the splat is a 0.3 px dot), never NaN or +∞.
fn valid_log_scale(x: f32) -> bool {
    return finite(x) || is_neg_inf(x);
}

// sigmoid of the logit, with ±∞ meaning opacity exactly 1 or 0.
fn opacity_of(logit: f32) -> f32 {
    let bits = bitcast<u32>(logit);
    if bits == 0x7f800000u {
        return 1.0;
    }
    if !finite(logit) {
        return 0.0;
    }
    return 1.0 / (1.0 + exp(-logit));
}

var<workgroup> group_key_max: atomic<u32>;
var<workgroup> group_key_min_complement: atomic<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn preprocess(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) group: vec3<u32>,
) {
    if local == 0u {
        atomicStore(&group_key_max, 0u);
        atomicStore(&group_key_min_complement, 0u);
    }
#ifdef LOD
    lod_begin(local);
#endif
    workgroupBarrier();
    let written = project_splat(gid.x + gid.y * chunk.grid_width);
    if written.y == 1u {
        atomicMax(&group_key_max, written.x);
        atomicMax(&group_key_min_complement, ~written.x);
    }
    // One global atomic per workgroup and word, not one per splat.
    workgroupBarrier();
    if local == 0u {
        let most = atomicLoad(&group_key_max);
        let least_complement = atomicLoad(&group_key_min_complement);
        if least_complement != 0u {
            let copy = &counters.depth_key_ranges[(group.x + group.y) % DEPTH_KEY_RANGE_COPIES];
            atomicMax(&(*copy).max, most);
            atomicMax(&(*copy).min_complement, least_complement);
        }
    }
#ifdef LOD
    lod_end(local);
#endif
}

// Projects the splat of `thread`; when it is kept and written, returns its depth key
// and 1, else (0, 0).
fn project_splat(thread: u32) -> vec2<u32> {
    let none = vec2<u32>(0u, 0u);
    if thread >= chunk.run_count * chunk.instance_count {
        return none;
    }
    // Consecutive threads take consecutive splats of one instance.
    let index = chunk.run_first + thread % chunk.run_count;
    let instance = chunk.first_instance + thread / chunk.run_count;
    let cam_from_cloud_4 = instances[instance].cam_from_cloud;
    let tint = instances[instance].tint;
#ifdef LOD
    // Nodes the cut leaves out read nothing more than their record.
    let lod_view = LodView(
        cam_from_cloud_4,
        instances[instance].camera_in_cloud.xyz,
        view.near,
        view.tan_limits,
        view.orthographic == 1u,
    );
    let weight = lod_weight(index, lod_view);
    if !(weight > 0.0) {
        return none;
    }
#endif
    let g = load_geometry(index);
    // Read with the geometry, so that its latency hides behind the projection (read
    // at the end, where the colour needs it, it made the SH0 preprocess 8 % slower).
    let dc = sh_coefficient(index, 0u);
    let scales_ok = valid_log_scale(g.log_scale.x) && valid_log_scale(g.log_scale.y)
        && valid_log_scale(g.log_scale.z);
    if !finite4(vec4<f32>(g.position, 0.0)) || !finite4(g.rotation) || !scales_ok {
        return none;
    }
    var opacity = opacity_of(g.opacity_logit) * tint.a;
#ifdef LOD
    // A node blending with its parent or children takes its share of the
    // transmittance, not of the opacity: T^weight, so that a parent and its
    // children blending together cover what either covers alone.
    if weight < 1.0 {
        opacity = 1.0 - pow(max(1.0 - opacity, 1e-6), weight);
    }
#endif
    if !(opacity >= ALPHA_MIN) || !kept_by_crop(instance, g.position) {
        return none;
    }

    // Centre in camera space (x right, y down, z forward).
    var p = (cam_from_cloud_4 * vec4<f32>(g.position, 1.0)).xyz;
    var s = exp(g.log_scale);
    // What a `SplatShader` adds to the colour.
    var colour_change = vec3<f32>(0.0);
#ifdef RECEIVE
    var world_position = (instances[instance].world_from_cloud * vec4<f32>(g.position, 1.0)).xyz;
#endif
#ifdef SPLAT_SHADER
    var splat_in: Splat;
    splat_in.position = (instances[instance].world_from_cloud * vec4<f32>(g.position, 1.0)).xyz;
    splat_in.opacity = opacity;
    splat_in.scale = s;
    splat_in.colour = max(SH_C0 * dc + 0.5, vec3<f32>(0.0)) * tint.rgb;
    let context = SplatContext(
        chunk.first_splat + index,
        instances[instance].shader_time,
        instances[instance].shader_params,
    );
    let splat_out = modify_splat(splat_in, context);
    opacity = min(splat_out.opacity, 1.0);
    colour_change = splat_out.colour - splat_in.colour;
    let changed_ok = finite4(vec4<f32>(splat_out.position, opacity))
        && finite4(vec4<f32>(splat_out.scale, 0.0)) && finite4(vec4<f32>(colour_change, 0.0));
    if !changed_ok || !(opacity >= ALPHA_MIN) || any(splat_out.scale < vec3<f32>(0.0)) {
        return none;
    }
    p = (view.cells[min(instances[instance].cell, LAYER_CELLS - 1u)].cam_from_world * vec4<f32>(splat_out.position, 1.0)).xyz;
    s = splat_out.scale;
#ifdef RECEIVE
    world_position = splat_out.position;
#endif
#endif
    if !(p.z >= view.near) {
        return none;
    }

    // 3-D covariance Σ = M Mᵀ with M = R S, taken into camera space.
    let q_norm = length(g.rotation);
    if !(q_norm > 0.0) || !finite(q_norm) {
        return none;
    }
    let q = g.rotation / q_norm;
    let w = q.x;
    let x = q.y;
    let y = q.z;
    let z = q.w;
    // Columns of R.
    let rot = mat3x3<f32>(
        vec3<f32>(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)),
        vec3<f32>(2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x)),
        vec3<f32>(2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)),
    );
    let m = mat3x3<f32>(rot[0] * s.x, rot[1] * s.y, rot[2] * s.z);
    let cam_from_cloud = mat3x3<f32>(cam_from_cloud_4[0].xyz, cam_from_cloud_4[1].xyz, cam_from_cloud_4[2].xyz);
    let t = cam_from_cloud * m;
    let cov = t * transpose(t);

    // EWA: J is the Jacobian of the projection at the centre. Perspective: x/z and y/z
    // clamped (as both references do) so splats far off-axis don't explode.
    // Orthographic: the projection is affine, J is constant.
    let fx = view.focal.x;
    let fy = view.focal.y;
    let orthographic = view.orthographic == 1u;
    let inv_z = select(1.0 / p.z, 1.0, orthographic);
    let tx = p.z * clamp(p.x * inv_z, -view.tan_limits.y, view.tan_limits.x);
    let ty = p.z * clamp(p.y * inv_z, -view.tan_limits.w, view.tan_limits.z);
    // J as a 3×2 (columns are the rows of the 2×3 Jacobian).
    var j_row0 = vec3<f32>(fx * inv_z, 0.0, -fx * tx * inv_z * inv_z);
    var j_row1 = vec3<f32>(0.0, fy * inv_z, -fy * ty * inv_z * inv_z);
    if orthographic {
        j_row0 = vec3<f32>(fx, 0.0, 0.0);
        j_row1 = vec3<f32>(0.0, fy, 0.0);
    }
    let cov_j0 = cov * j_row0;
    let cov_j1 = cov * j_row1;
    let cov_a = dot(j_row0, cov_j0) + 0.3;
    let cov_b = dot(j_row0, cov_j1);
    let cov_c = dot(j_row1, cov_j1) + 0.3;
    let det = cov_a * cov_c - cov_b * cov_b;
    // Huge scales overflow to ∞ or NaN here: such splats are culled, never drawn.
    if !finite4(vec4<f32>(cov_a, cov_b, cov_c, det)) || !(det > 0.0) {
        return none;
    }
    if instances[instance].antialiased == 1u {
        // The blur widened the footprint; scaling opacity by the ratio of the
        // determinants' roots keeps the splat's integral, as Mip-Splatting trains it.
        let det_unblurred = (cov_a - 0.3) * (cov_c - 0.3) - cov_b * cov_b;
        opacity *= sqrt(max(0.000025, det_unblurred / det));
        if !(opacity >= ALPHA_MIN) {
            return none;
        }
    }

    // The footprint's factors from Σ₂ᴅ itself: l_yy = sqrt(k / Σyy) (k = ½log₂e), where
    // the conic's own form, sqrt(k·c − l_yx²), cancels for long thin splats.
    let k = 0.7213475204444817;
    let conic_a = cov_c / det;
    var splat: ProjectedSplat;
    splat.x = fx * p.x * inv_z + view.principal.x;
    splat.y = fy * p.y * inv_z + view.principal.y;
    splat.depth = p.z;
    splat.l_xx = sqrt(k * conic_a);
    splat.l_yx = -k * cov_b / det / splat.l_xx;
    splat.l_yy = sqrt(k / cov_c);
    // The colour is packed below, once the SH are read; the opacity now, so that the
    // rows and bins are counted from the record exactly as duplicate will read it.
    splat.b_opacity = pack_colour_opacity(vec3<f32>(0.0), opacity).y;
    // A layer of several cells: the splat's colour word names its cell instead (only
    // shadow views, which draw no colour, have several), which bounds its tiles.
    let cell = min(instances[instance].cell, LAYER_CELLS - 1u);
    let cells = view.cell_count > 1u;
    splat.rg = select(0u, cell, cells);
    if !finite4(vec4<f32>(splat.x, splat.y, splat.l_xx, splat.l_yy)) || !finite(splat.l_yx)
        || !(splat.l_xx > 0.0) || !(splat.l_yy > 0.0) {
        return none;
    }

    let rows = splat_rows(splat, view);
    if rows.x > rows.y {
        return none;
    }

    // The pairs duplicate will write: one per bin (2×2 tiles) the splat reaches.
    var bins = 0u;
    for (var bin_row = rows.x / 2u; bin_row <= rows.y / 2u; bin_row++) {
        bins += bins_in_row(bin_row_spans(splat, rows, bin_row, view));
    }
    if bins == 0u {
        return none;
    }

    // A non-finite SH coefficient makes the sum non-finite (NaN and ∞ survive every
    // product and sum, ∞·0 included): testing the sum, once, for the splats that got
    // this far costs nothing, where testing each coefficient of every splat cost the SH3
    // preprocess a second read of its coefficients.
    let dir = normalize(g.position - instances[instance].camera_in_cloud.xyz);
    let sum = sh_sum(index, dc, dir);
    if !finite4(vec4<f32>(sum, 0.0)) {
        return none;
    }
    let colour = max(max(sum + 0.5, vec3<f32>(0.0)) * tint.rgb + colour_change, vec3<f32>(0.0));
    let packed = pack_colour_opacity(colour, opacity);
    splat.rg = select(packed.x, cell, cells);
    splat.b_opacity = packed.y;

    // Past the capacity the splat is only counted: the band needs bigger buffers (or
    // the view more bands) and the CPU sees it in the count.
    let slot = atomicAdd(&counters.visible, 1u);
    if slot < view.splat_capacity {
        projected[slot] = splat;
        // Sort keys must be positive floats: orthographic views count from their near
        // plane, which may lie behind the camera (p.z ≥ near was tested above).
        let key = bitcast<u32>(select(splat.depth, splat.depth - view.near, orthographic));
        depth_keys[slot] = key;
        depth_values[slot] = depth_value(slot, bins);
        if bins >= PAIRS_SPILLED {
            depth_keys[spilled_pairs_word(view.splat_capacity, slot)] = bins;
        }
        if slot < arrayLength(&sources) {
            sources[slot] = vec2<u32>(instance, chunk.first_splat + index);
        }
#ifdef RECEIVE
        lit_points[slot] = lit_point(instance, world_position, rot, s);
#endif
        return vec2<u32>(key, 1u);
    }
    return none;
}

#ifdef RECEIVE
// The splat's centre, shortest axis and largest spread in the world, and its cloud's
// lighting. The axis is carried into the world as a normal (by the cofactor of the
// cloud's linear part, right under any scale), and the standard deviation along it
// as a plane's thickness (|det| / |cofactor · axis|).
fn lit_point(instance: u32, world_position: vec3<f32>, rot_in: mat3x3<f32>, s_in: vec3<f32>) -> LitPoint {
    // Locals, which every backend indexes at run time.
    var rot = rot_in;
    var s = s_in;
    var shortest = 0u;
    var longest = 0u;
    for (var k = 1u; k < 3u; k++) {
        if s[k] < s[shortest] {
            shortest = k;
        }
        if s[k] > s[longest] {
            longest = k;
        }
    }
    let m4 = instances[instance].world_from_cloud;
    let m = mat3x3<f32>(m4[0].xyz, m4[1].xyz, m4[2].xyz);
    let cofactor = mat3x3<f32>(cross(m[1], m[2]), cross(m[2], m[0]), cross(m[0], m[1]));
    let normal = cofactor * rot[shortest];
    let normal_length = length(normal);
    let thickness = s[shortest] * abs(determinant(m)) / max(normal_length, 1e-30);
    var point: LitPoint;
    point.position = world_position;
    // At least 1e-12 long, so that a disc of no thickness keeps its normal.
    let axis_length = max(thickness, 1e-12);
    point.axis = select(vec3<f32>(0.0), normal / normal_length * axis_length, normal_length > 0.0);
    point.spread = s[longest] * length(m * rot[longest]);
    let strength = u32(round(saturate(instances[instance].lighting_strength) * 65535.0));
    point.lighting = (instances[instance].lighting & 0xffffu) | (strength << LIGHTING_STRENGTH_SHIFT);
    return point;
}
#endif
