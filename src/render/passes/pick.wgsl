// pick: the surface under each pointer pixel. The pixel's tile is composited exactly
// as the tile render does (same splats, same order, same α, stopping at the opaque
// scene), up to the splat at which the transmittance first falls to 0.5: the hit, at
// the median depth. One workgroup per pointer pixel: its threads evaluate a batch of
// the tile's splats at the pixel, then one thread walks the batch in order.

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
@group(0) @binding(5) var<storage, read> sorted_splats: array<u32>;
// `texture_depth_2d` or, under MSAA, `texture_depth_multisampled_2d` (set by the host).
@group(0) @binding(6) var scene_depth: SCENE_DEPTH_TEXTURE;
@group(0) @binding(7) var<storage, read_write> hits: array<PickHit>;
// 1 per instance that pointers may hit (`Pickable`): the others are seen through.
@group(0) @binding(8) var<storage, read> pickable: array<u32>;

const BATCH: u32 = 256u;

var<workgroup> batch_alpha: array<f32, BATCH>;
// In the depth buffer's terms, for the test against the opaque scene.
var<workgroup> batch_depth: array<f32, BATCH>;
var<workgroup> batch_slot: array<u32, BATCH>;
var<workgroup> finished: u32;

@compute @workgroup_size(256)
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
    let tile = pixel.x / TILE_SIZE + row * view.tile_count.x;
    let centre = vec2<f32>(pixel) + 0.5;
    let scene = textureLoad(scene_depth, vec2<i32>(pixel + view.viewport_origin), 0);

    if thread == 0u {
        finished = 0u;
    }
    var transmittance = 1.0;
    var hit = PickHit(0u, 0u, 0u, 0.0);
    let range = ranges[tile];
    for (var start = range.x; start < range.y; start += BATCH) {
        if workgroupUniformLoad(&finished) == 1u {
            break;
        }
        let fetch = start + thread;
        var alpha = 0.0;
        var depth = 0.0;
        if fetch < range.y {
            let slot = sorted_splats[fetch];
            let s = projected[slot];
            depth = buffer_depth(view.depth_from_distance, s.depth);
            let conic = vec4<f32>(s.conic_a, s.conic_b, s.conic_c, 0.5 * s.extent);
            alpha = footprint_alpha(conic, s.opacity, vec2<f32>(s.x, s.y) - centre);
            if pickable[sources[slot].x] == 0u {
                alpha = 0.0;
            }
            batch_slot[thread] = slot;
        }
        batch_alpha[thread] = alpha;
        batch_depth[thread] = depth;
        workgroupBarrier();

        if thread == 0u {
            let count = min(BATCH, range.y - start);
            for (var j = 0u; j < count; j++) {
                // Reverse-Z: a splat below the scene's depth is behind the opaque meshes.
                if batch_depth[j] < scene {
                    finished = 1u;
                    break;
                }
                let a = batch_alpha[j];
                if a < ALPHA_MIN {
                    continue;
                }
                let next = transmittance * (1.0 - a);
                if next <= T_MIN {
                    finished = 1u;
                    break;
                }
                if next <= 0.5 {
                    let slot = batch_slot[j];
                    let source = sources[slot];
                    hit = PickHit(1u, source.x, source.y, projected[slot].depth);
                    finished = 1u;
                    break;
                }
                transmittance = next;
            }
        }
        workgroupBarrier();
    }
    if thread == 0u && hit.found == 1u {
        hits[group.x] = hit;
    }
}
