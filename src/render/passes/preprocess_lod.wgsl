// Level of detail in the preprocess (the `LOD` variant): each thread is a node of a
// cloud's tree, a trained splat in a leaf chunk or a merged one in an interior chunk.
// Its weight, from its size on screen and its parent's against the view's threshold,
// says whether the cut draws it and scales its opacity where it blends with its
// parent (`lod/cut.rs` is the same rule in Rust, with the reasoning). Band 0 also
// counts every node in view by its own size and its parent's: the histograms from
// which the CPU picks the next frame's threshold to hold the budget.
#define_import_path bevy_splat::preprocess::lod

#import bevy_splat::preprocess::types::chunk

const LOD_BINS: u32 = #{LOD_BINS}u;
const LOD_BINS_PER_OCTAVE: f32 = f32(#{LOD_BINS_PER_OCTAVE}u);
// The first bin's lower edge is 2^−LOD_OCTAVE_OFFSET.
const LOD_OCTAVE_OFFSET: f32 = f32(#{LOD_OCTAVE_OFFSET}u);
const LOD_WORKGROUP_SIZE: u32 = #{WORKGROUP_SIZE}u;
// Below this fraction of its radius, a sphere's distance no longer shrinks its size.
const NEAREST_FRACTION: f32 = 9.5367431640625e-7;

// Per node of a leaf chunk: its parent's sphere (centre, radius). Per node of an
// interior chunk or a streamed page: its own sphere, then its parent's. A parent
// radius below 0: no parent; an own radius below 0: see `lod_weight`.
@group(0) @binding(10) var<storage, read> lod_records: array<vec4<f32>>;

struct LodFeedback {
    leaves_in_view: atomic<u32>,
    spare: array<u32, 3>,
    own: array<atomic<u32>, LOD_BINS>,
    parent: array<atomic<u32>, LOD_BINS>,
}
@group(0) @binding(11) var<storage, read_write> lod_feedback: LodFeedback;

var<workgroup> group_own: array<atomic<u32>, LOD_BINS>;
var<workgroup> group_parent: array<atomic<u32>, LOD_BINS>;
var<workgroup> group_leaves: atomic<u32>;

// What the cut needs of the view and of the node's instance.
struct LodView {
    cam_from_cloud: mat4x4<f32>,
    camera_in_cloud: vec3<f32>,
    near: f32,
    tan_limits: vec4<f32>,
    orthographic: bool,
}

fn lod_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

// Before any thread counts: the workgroup's histograms cleared.
fn lod_begin(local: u32) {
    for (var bin = local; bin < LOD_BINS; bin += LOD_WORKGROUP_SIZE) {
        atomicStore(&group_own[bin], 0u);
        atomicStore(&group_parent[bin], 0u);
    }
    if local == 0u {
        atomicStore(&group_leaves, 0u);
    }
}

// After every thread counted (and a barrier): the workgroup's counts added to the
// view's, one global atomic per non-empty bin.
fn lod_end(local: u32) {
    if chunk.lod_feedback == 0u {
        return;
    }
    for (var bin = local; bin < LOD_BINS; bin += LOD_WORKGROUP_SIZE) {
        let own = atomicLoad(&group_own[bin]);
        if own != 0u {
            atomicAdd(&lod_feedback.own[bin], own);
        }
        let parent = atomicLoad(&group_parent[bin]);
        if parent != 0u {
            atomicAdd(&lod_feedback.parent[bin], parent);
        }
    }
    if local == 0u {
        let leaves = atomicLoad(&group_leaves);
        if leaves != 0u {
            atomicAdd(&lod_feedback.leaves_in_view, leaves);
        }
    }
}

// The angle a sphere subtends, seen from its nearest point; its radius in camera
// units for an orthographic view.
fn node_size(sphere: vec4<f32>, view: LodView, scale: f32) -> f32 {
    if view.orthographic {
        return sphere.w * scale;
    }
    let distance = length(sphere.xyz - view.camera_in_cloud);
    return sphere.w / max(distance - sphere.w, sphere.w * NEAREST_FRACTION);
}

// The histogram bin of a size, or LOD_BINS above the last (left out of the counts).
fn size_bin(size: f32) -> u32 {
    if !lod_finite(size) || !(size < exp2(f32(LOD_BINS) / LOD_BINS_PER_OCTAVE - LOD_OCTAVE_OFFSET)) {
        return LOD_BINS;
    }
    if !(size > 0.0) {
        return 0u;
    }
    let bin = floor((log2(size) + LOD_OCTAVE_OFFSET) * LOD_BINS_PER_OCTAVE);
    return u32(clamp(bin, 0.0, f32(LOD_BINS - 1u)));
}

// Whether a sphere (cloud frame) reaches into the view's frustum, as far as the
// Jacobian's widened limits.
fn sphere_in_view(sphere: vec4<f32>, view: LodView, scale: f32) -> bool {
    let c = (view.cam_from_cloud * vec4<f32>(sphere.xyz, 1.0)).xyz;
    let r = sphere.w * scale;
    if !(c.z + r >= view.near) {
        return false;
    }
    let t = view.tan_limits;
    if view.orthographic {
        return c.x - t.x <= r && -c.x - t.y <= r && c.y - t.z <= r && -c.y - t.w <= r;
    }
    return c.x - t.x * c.z <= r * sqrt(1.0 + t.x * t.x)
        && -c.x - t.y * c.z <= r * sqrt(1.0 + t.y * t.y)
        && c.y - t.z * c.z <= r * sqrt(1.0 + t.z * t.z)
        && -c.y - t.w * c.z <= r * sqrt(1.0 + t.w * t.w);
}

// The ramp from 0 (well below the threshold) to 1 (well above); non-finite sizes are
// infinite.
fn blend_step(size: f32) -> f32 {
    if !lod_finite(size) {
        return 1.0;
    }
    if !(size > 0.0) {
        return 0.0;
    }
    let half = chunk.lod_half_octaves;
    if half <= 0.0 {
        return select(0.0, 1.0, size > chunk.lod_threshold);
    }
    let octaves = log2(size / chunk.lod_threshold);
    return clamp((octaves + half) / (2.0 * half), 0.0, 1.0);
}

// Node `index` of the chunk: counts it (band 0) and returns its weight, 0 where the
// cut does not draw it.
fn lod_weight(index: u32, view: LodView) -> f32 {
    let leaf_chunk = chunk.lod_records == 1u;
    var own = vec4<f32>(0.0);
    var parent: vec4<f32>;
    // A streamed node's fade (x: its children's share, y: its own weight): a page's
    // nodes fade in over a few frames as it arrives, their parent out.
    var fade = vec4<f32>(1.0);
    if leaf_chunk {
        parent = lod_records[index];
    } else if chunk.lod_records == 3u {
        own = lod_records[3u * index];
        parent = lod_records[3u * index + 1u];
        fade = lod_records[3u * index + 2u];
    } else {
        own = lod_records[2u * index];
        parent = lod_records[2u * index + 1u];
    }
    // A streamed page's node (`streaming/table.rs`) may be drawn as a leaf, its
    // children not resident (radius −1), or not take part, its parent not split
    // (radius −2).
    if own.w < -1.5 {
        return 0.0;
    }
    let leaf = leaf_chunk || own.w < 0.0;
    let has_parent = parent.w >= 0.0;
    // Camera units per cloud unit (clouds are scaled uniformly for their sizes to
    // mean anything).
    let scale = length(view.cam_from_cloud[0].xyz);
    let own_size = node_size(own, view, scale);
    let parent_size = node_size(parent, view, scale);

    if chunk.lod_feedback == 1u {
        // A leaf stands in its parent's sphere (it has no record of its own).
        let counted = select(own, parent, leaf);
        if (leaf && !has_parent) || sphere_in_view(counted, view, scale) {
            if leaf {
                atomicAdd(&group_leaves, 1u);
            } else {
                let bin = size_bin(own_size);
                if bin < LOD_BINS {
                    atomicAdd(&group_own[bin], 1u);
                }
            }
            if has_parent {
                let bin = size_bin(parent_size);
                if bin < LOD_BINS {
                    atomicAdd(&group_parent[bin], 1u);
                }
            }
        }
    }

    // The weight is what the parent leaves minus what the children take; a fading
    // node's children take only their share, and the node itself (with every node
    // below a fading one) is scaled by its own.
    var above = 1.0;
    var below = select(1.0, 0.0, leaf);
    if chunk.lod_threshold > 0.0 {
        above = select(1.0, blend_step(parent_size), has_parent);
        below = select(blend_step(own_size), 0.0, leaf);
    }
    return max(above - fade.x * below, 0.0) * fade.y;
}
