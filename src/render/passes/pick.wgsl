// pick: the surface under each pointer pixel. The pixel's tile is composited as the
// tile render does (same splats, same order, same α, stopping at the opaque scene), up
// to the splat at which the transmittance first falls to 0.5: the hit, at the median
// depth. One workgroup per pointer pixel walks the tile's splats in batches of 256:
// every thread evaluates one splat at the pixel, a prefix product over the batch gives
// the transmittance after each, and the first to reach 0.5 is the hit. (A single
// thread walking a dense tile in order took 0.4 ms on the H200.) The transmittance
// before the splats that can cross 0.5 stays far above the tile render's 10⁻⁴ cut-off,
// so that rule never decides a hit.

#import bevy_splat::common::{
    SplatView, ProjectedSplat, SIGMA_MAX, footprint_factors, footprint_sigma,
    footprint_alpha, buffer_depth, TILE_SIZE, WORKGROUP_SIZE,
}

struct PickHit {
    // 1 where the pixel's transmittance reached 0.5.
    found: u32,
    // The hit splat's cloud (instance of this frame) and index in its asset.
    instance: u32,
    splat: u32,
    // Its view distance (camera-space z).
    depth: f32,
}

@group(0) @binding(0) var<uniform> view: SplatView;
// Viewport pixels (x, y), one per workgroup.
@group(0) @binding(1) var<storage, read> pick_pixels: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> projected: array<ProjectedSplat>;
@group(0) @binding(3) var<storage, read> sources: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> ranges: array<vec2<u32>>;
// The lists of the tiles whose place in their bin is LIST, (x & 1) + 2·(y & 1): the
// tiles' lists are in four buffers (`tile_split.wgsl`), too many to bind beside the
// rest, so the pick runs once per list and each run answers the pixels of its tiles.
@group(0) @binding(5) var<storage, read> sorted_splats: array<u32>;
const LIST: u32 = #{LIST}u;
// `texture_depth_2d` or, under MSAA, `texture_depth_multisampled_2d` (the shader def
// MULTISAMPLED_DEPTH).
#ifdef MULTISAMPLED_DEPTH
@group(0) @binding(6) var scene_depth: texture_depth_multisampled_2d;
#else
@group(0) @binding(6) var scene_depth: texture_depth_2d;
#endif
@group(0) @binding(7) var<storage, read_write> hits: array<PickHit>;
// 1 per instance that pointers may hit (`Pickable`): the others are seen through.
@group(0) @binding(8) var<storage, read> pickable: array<u32>;

const BATCH: u32 = WORKGROUP_SIZE;
const NONE: u32 = 0xffffffffu;

// Per splat of the batch: 1 − α at the pixel, then (scanned in place) the product of
// those up to and including it.
var<workgroup> batch_product: array<f32, BATCH>;
var<workgroup> batch_slot: array<u32, BATCH>;
// The first splat of the batch behind the opaque scene, and the first that takes the
// transmittance to 0.5.
var<workgroup> first_behind: atomic<u32>;
var<workgroup> first_crossing: atomic<u32>;
var<workgroup> transmittance: f32;
var<workgroup> finished: u32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn pick(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_index) thread: u32,
) {
    let pixel = pick_pixels[group.x];
    let row = pixel.y / TILE_SIZE;
    // The same for the whole workgroup: the pixel is outside the view or in another band.
    if pixel.x >= view.viewport_size.x || pixel.y >= view.viewport_size.y
        || row < view.band_first_row || row >= view.band_end_row {
        return;
    }
    let column = pixel.x / TILE_SIZE;
    if (column & 1u) + 2u * (row & 1u) != LIST {
        return;
    }
    let tile = column + row * view.tile_count.x;
    let centre = vec2<f32>(pixel) + 0.5;
    let scene = textureLoad(scene_depth, vec2<i32>(pixel + view.viewport_origin), 0);

    // Thread 0 resets the batch's markers before the first batch and after reading
    // them at the end of each; the barriers at the loop's top and bottom order those
    // writes before any thread's `atomicMin` of the next batch.
    if thread == 0u {
        transmittance = 1.0;
        finished = 0u;
        atomicStore(&first_behind, NONE);
        atomicStore(&first_crossing, NONE);
    }
    let range = ranges[tile];
    for (var start = range.x; start < range.y; start += BATCH) {
        if workgroupUniformLoad(&finished) == 1u {
            break;
        }
        let fetch = start + thread;
        var keep = 1.0;
        if fetch < range.y {
            let slot = sorted_splats[fetch];
            let s = projected[slot];
            // Reverse-Z: a splat below the scene's depth is behind the opaque meshes.
            if buffer_depth(view.depth_from_distance, s.depth) < scene {
                atomicMin(&first_behind, thread);
            }
            let sigma = footprint_sigma(footprint_factors(s), vec2<f32>(s.x, s.y) - centre);
            if sigma <= SIGMA_MAX && pickable[sources[slot].x] == 1u {
                keep = 1.0 - footprint_alpha(sigma);
            }
            batch_slot[thread] = slot;
        }
        batch_product[thread] = keep;
        workgroupBarrier();
        // Inclusive prefix product (Hillis–Steele), in place.
        for (var offset = 1u; offset < BATCH; offset <<= 1u) {
            var product = batch_product[thread];
            if thread >= offset {
                product *= batch_product[thread - offset];
            }
            workgroupBarrier();
            batch_product[thread] = product;
            workgroupBarrier();
        }
        let before = workgroupUniformLoad(&transmittance);
        let count = min(BATCH, range.y - start);
        // The products only fall, so the splats past 0.5 are a suffix of the batch.
        if thread < count && before * batch_product[thread] <= 0.5 {
            atomicMin(&first_crossing, thread);
        }
        workgroupBarrier();
        if thread == 0u {
            let behind = atomicLoad(&first_behind);
            let crossing = atomicLoad(&first_crossing);
            if crossing < behind && crossing != NONE {
                let slot = batch_slot[crossing];
                let source = sources[slot];
                hits[group.x] = PickHit(1u, source.x, source.y, projected[slot].depth);
                finished = 1u;
            } else if behind != NONE {
                finished = 1u;
            } else {
                transmittance = before * batch_product[count - 1u];
            }
            atomicStore(&first_behind, NONE);
            atomicStore(&first_crossing, NONE);
        }
        workgroupBarrier();
    }
}
