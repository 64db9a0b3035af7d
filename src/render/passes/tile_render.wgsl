// tile render: one workgroup per 16×16 tile of the band, one thread per pixel. The
// tile's splats, already sorted front to back, are staged through workgroup memory in
// batches of 256 and blended with the reference's rules. The workgroup leaves as soon as every pixel
// is done: saturated, or behind the opaque scene.

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(1) var<storage, read> projected: array<ProjectedSplat>;
@group(0) @binding(2) var<storage, read> ranges: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> sorted_splats: array<u32>;
// `texture_depth_2d` or, under MSAA, `texture_depth_multisampled_2d` (set by the host).
@group(0) @binding(4) var scene_depth: SCENE_DEPTH_TEXTURE;
@group(0) @binding(5) var splat_layer: texture_storage_2d<rgba32float, write>;
// The band's tiles (index within the band), most pairs first: workgroup i draws
// tile_order[i], so the longest tiles start first.
@group(0) @binding(6) var<storage, read> tile_order: array<u32>;
// `SplatDepth`: the depth (buffer terms) where each pixel's transmittance first falls
// to 0.5, or 0 (far) where it never does. A 1×1 stand-in when the camera has none.
@group(0) @binding(7) var median_depth: texture_storage_2d<r32float, write>;

const BATCH: u32 = 256u;

var<workgroup> batch_position: array<vec4<f32>, BATCH>; // x, y, depth in the depth buffer's terms, opacity
var<workgroup> batch_conic: array<vec4<f32>, BATCH>;    // a, b, c, ln(255·opacity)
var<workgroup> batch_colour: array<vec4<f32>, BATCH>;   // r, g, b, unused
var<workgroup> pixels_done: atomic<u32>;
var<workgroup> all_done: u32;

@compute @workgroup_size(16, 16)
fn tile_render(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_id) local: vec3<u32>,
    @builtin(local_invocation_index) thread: u32,
) {
    // The grid covers this band's rows only, in the order of `tile_order`.
    let in_band = tile_order[group.x + group.y * view.tile_count.x];
    let tile_xy = vec2<u32>(in_band % view.tile_count.x, in_band / view.tile_count.x + view.band_first_row);
    let tile = tile_xy.x + tile_xy.y * view.tile_count.x;
    let pixel = tile_xy * TILE_SIZE + local.xy;
    let inside = pixel.x < view.viewport_size.x && pixel.y < view.viewport_size.y;
    let centre = vec2<f32>(pixel) + 0.5;

    // Reverse-Z: nearer is larger. A splat whose depth is below the scene's is hidden.
    var scene = 0.0;
    if inside {
        scene = textureLoad(scene_depth, vec2<i32>(pixel + view.viewport_origin), 0);
    }

    if thread == 0u {
        atomicStore(&pixels_done, 0u);
    }
    workgroupBarrier();

    var transmittance = 1.0;
    var colour = vec3<f32>(0.0);
    var median = 0.0;
    var done = !inside;
    if done {
        atomicAdd(&pixels_done, 1u);
    }

    let range = ranges[tile];
    for (var start = range.x; start < range.y; start += BATCH) {
        if thread == 0u {
            all_done = atomicLoad(&pixels_done);
        }
        if workgroupUniformLoad(&all_done) == BATCH {
            break;
        }
        let fetch = start + thread;
        if fetch < range.y {
            let s = projected[sorted_splats[fetch]];
            batch_position[thread] = vec4<f32>(s.x, s.y, buffer_depth(view.depth_from_distance, s.depth), s.opacity);
            batch_conic[thread] = vec4<f32>(s.conic_a, s.conic_b, s.conic_c, 0.5 * s.extent);
            batch_colour[thread] = vec4<f32>(s.r, s.g, s.b, 0.0);
        }
        workgroupBarrier();

        if !done {
            let count = min(BATCH, range.y - start);
            for (var j = 0u; j < count; j++) {
                let p = batch_position[j];
                if p.z < scene {
                    done = true;
                    break;
                }
                let conic = batch_conic[j];
                let power = footprint_power(conic, p.xy - centre);
                if outside_footprint(conic, power) {
                    continue;
                }
                let alpha = footprint_alpha(p.w, power);
                if alpha < ALPHA_MIN {
                    continue;
                }
                let next = transmittance * (1.0 - alpha);
                if next <= T_MIN {
                    done = true;
                    break;
                }
                colour += batch_colour[j].rgb * (alpha * transmittance);
                if next <= 0.5 && transmittance > 0.5 {
                    median = p.z;
                }
                transmittance = next;
            }
            if done {
                atomicAdd(&pixels_done, 1u);
            }
        }
        workgroupBarrier();
    }

    if inside {
        textureStore(splat_layer, vec2<i32>(pixel), vec4<f32>(colour, 1.0 - transmittance));
        if all(pixel < textureDimensions(median_depth)) {
            textureStore(median_depth, vec2<i32>(pixel), vec4<f32>(median, 0.0, 0.0, 0.0));
        }
    }
}
