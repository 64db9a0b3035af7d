// tile render: one workgroup per tile of the band (TILE_SIZE² pixels), one thread per
// pixel. The tile's splats, already sorted front to back, are staged through workgroup
// memory in batches of one per thread and blended with the reference's rules. The
// workgroup leaves as soon as every pixel is done: saturated, or behind the opaque
// scene.
//
// Each staged splat carries a mask of the tile's strips of STRIP_ROWS pixel rows that
// its α ≥ 1/255 ellipse reaches. A thread skips a splat whose mask misses its strip
// before reading the footprint: the exact test would reject every pixel there anyway,
// and where every thread of a hardware subgroup (32 threads: four rows of 8) misses,
// the whole subgroup skips at the cost of one compare.
//
// A pixel ends at the first splat behind the opaque scene. That test runs only for a
// batch whose farthest splat lies beyond the tile's nearest scene depth (both taken
// with workgroup atomics); other batches, and every batch of a view without geometry
// there, blend without it (`blend_batch`, specialised both ways).
//
// SURFACE_ONLY (shadow views): only the median depth is wanted, so a pixel stops at
// its median and blends no colour. MEDIAN_DEPTH (`SplatDepth`): the colour, and the
// median depth tracked beside it; without either, the blend loop leaves the median's
// compares out.
//
// Chunks (shadow views): seen from a light far away, a whole cloud falls into a few
// tiles, and one workgroup walking a list of tens of thousands held up the view. A
// tile of at least TILE_CHUNK_PAIRS pairs is cut into chunks of that many
// (`tile_order.wgsl` files them), which the SURFACE_ONLY variants draw with a
// workgroup each, in two dispatches:
//   CHUNK_TRANSMITTANCE  each chunk but a tile's last: every pixel's transmittance
//                        through the chunk alone, stopping where it falls to 0.5
//                        (0 behind the scene)
//   TILE_CHUNKS          each chunk: a pixel starts from the product of its earlier
//                        chunks' transmittances (taken in order, the same products
//                        every later chunk takes), skips the chunk if that is 0.5 or
//                        less, and otherwise walks it as the whole tile would, its
//                        running product the same as the first dispatch's. So the
//                        chunk where the pixel's transmittance falls to 0.5 finds its
//                        median exactly there, and writes it; the chunk where the pixel
//                        meets the scene, or the tile's last chunk, writes 0 (far).
// Exactly one chunk writes each pixel. The plain variant leaves a chunked tile alone.

#import bevy_splat::common::{
    T_MIN, SplatView, ProjectedSplat, splat_colour, half_height, SIGMA_MAX,
    footprint_factors, footprint_sigma, footprint_alpha, buffer_depth, TILE_SIZE,
    LAYER_CELLS,
    TILE_CHUNK_PAIRS, NO_TILE, chunk_item_word, chunk_transmittance_word,
}
#import bevy_splat::common::grid::linear_group

@group(0) @binding(0) var<uniform> view: SplatView;
@group(0) @binding(1) var<storage, read> projected: array<ProjectedSplat>;
@group(0) @binding(2) var<storage, read> ranges: array<vec2<u32>>;
// The tiles' lists of slots, front to back: tile (x & 1) + 2·(y & 1) of each bin keeps
// its list in `list_<that>` (`tile_split.wgsl`).
@group(0) @binding(3) var<storage, read> list_0: array<u32>;
@group(0) @binding(8) var<storage, read> list_1: array<u32>;
@group(0) @binding(9) var<storage, read> list_2: array<u32>;
@group(0) @binding(10) var<storage, read> list_3: array<u32>;
// `texture_depth_2d` or, under MSAA, `texture_depth_multisampled_2d` (the shader def
// MULTISAMPLED_DEPTH).
#ifdef MULTISAMPLED_DEPTH
@group(0) @binding(4) var scene_depth: texture_depth_multisampled_2d;
#else
@group(0) @binding(4) var scene_depth: texture_depth_2d;
#endif
@group(0) @binding(5) var splat_layer: texture_storage_2d<rgba32float, write>;
// The band's tiles (whole-view ids), most pairs first: workgroup i draws
// tile_order[i], so the longest tiles start first. The grid (`tile_order.wgsl`) covers
// the tiles some splat reaches, in whole rows of the view's width.
@group(0) @binding(6) var<storage, read> tile_order: array<u32>;
// `SplatDepth`: the depth (buffer terms) where each pixel's transmittance first falls
// to 0.5, or 0 (far) where it never does. A 1×1 stand-in when the camera has none.
@group(0) @binding(7) var median_depth: texture_storage_2d<r32float, write>;
// The view's tile chunks (`common.wgsl`; a shadow view's), with room for
// `capacities.z` chunks, 0 in views that draw every tile whole.
@group(0) @binding(11) var<storage, read_write> tile_chunks: array<u32>;
@group(0) @binding(12) var<uniform> capacities: vec4<u32>;

const BATCH: u32 = TILE_SIZE * TILE_SIZE;
const STRIP_ROWS: u32 = 2u;
const STRIPS: u32 = TILE_SIZE / STRIP_ROWS;
// The mask over STRIPS strips fits one word.
const_assert STRIPS <= 32u && TILE_SIZE % STRIP_ROWS == 0u;
const ALL_STRIPS: u32 = 0xffffffffu >> (32u - STRIPS);

// The strip mask, then the bits of x, y and the depth in the depth buffer's terms: one
// read of workgroup memory where the strip test passes. (Integers, so that no float
// rule touches the mask's bits.)
var<workgroup> batch_position: array<vec4<u32>, BATCH>;
var<workgroup> batch_factors: array<vec4<f32>, BATCH>;  // `footprint_factors`
var<workgroup> batch_colour: array<vec3<f32>, BATCH>;
var<workgroup> pixels_done: atomic<u32>;
var<workgroup> all_done: u32;
// The nearest scene depth of the tile's pixels, and the farthest splat depth of the
// current batch (as `ordered_bits`): where the batch's farthest splat is no farther
// than the tile's nearest scene, no splat of it can be behind the scene at any pixel,
// and the blend leaves the per-pixel test out (in a view without geometry: always).
var<workgroup> tile_scene_nearest: atomic<u32>;
var<workgroup> batch_farthest: atomic<u32>;
// What the workgroup draws: its tile (NO_TILE: nothing), the first and the end of its
// run of the tile's list, and its chunk (or 0 for a whole tile).
var<workgroup> work: vec4<u32>;

// The strips of the tile starting at pixel row `tile_top` that the splat's ellipse
// reaches, as bits. Its half-height (`half_height`) is widened by a small margin so
// that rounding never drops a row the exact per-pixel test would draw.
fn strip_mask(s: ProjectedSplat, tile_top: f32) -> u32 {
    let half = half_height(s) * 1.001 + 0.01;
    // Rows whose centre (tile_top + row + 0.5) lies within the half-height.
    let top = ceil(s.y - half - 0.5 - tile_top);
    let bottom = floor(s.y + half - 0.5 - tile_top);
    if !(top <= bottom) || bottom < 0.0 || top > f32(TILE_SIZE - 1u) {
        // NaN bounds (a degenerate footprint) keep every strip: the exact test decides.
        return select(0u, ALL_STRIPS, !(top <= bottom) && !(top > bottom));
    }
    let first = u32(max(top, 0.0)) / STRIP_ROWS;
    let last = u32(min(bottom, f32(TILE_SIZE - 1u))) / STRIP_ROWS;
    let through_last = select((2u << last) - 1u, 0xffffffffu, last >= 31u);
    return through_last & ~((1u << first) - 1u);
}

// A whole tile, or nothing where its chunks draw it.
fn whole_tile(tile: u32) -> vec4<u32> {
    let range = ranges[tile];
#ifdef SURFACE_ONLY
    let in_band = tile - view.band_first_row * view.tile_count.x;
    if capacities.z > 0u && tile_chunks[in_band] != 0u {
        return vec4<u32>(NO_TILE, 0u, 0u, 0u);
    }
#endif
    return vec4<u32>(tile, range, 0u);
}

#ifdef TILE_CHUNKS
// Chunk `chunk` of the view's tile chunks: its run of its tile's list.
fn tile_chunk(chunk: u32) -> vec4<u32> {
    let word = chunk_item_word(view, chunk);
    let tile = tile_chunks[word];
    if chunk >= capacities.z || tile == NO_TILE {
        return vec4<u32>(NO_TILE, 0u, 0u, 0u);
    }
    let range = ranges[tile];
    let first = range.x + tile_chunks[word + 1u] * TILE_CHUNK_PAIRS;
    let end = min(first + TILE_CHUNK_PAIRS, range.y);
#ifdef CHUNK_TRANSMITTANCE
    // No later chunk reads the last one's.
    if end == range.y {
        return vec4<u32>(NO_TILE, 0u, 0u, 0u);
    }
#endif
    return vec4<u32>(tile, first, end, chunk);
}
#endif

// The `index`-th slot of the list of a tile whose place in its bin is `list`.
fn listed_slot(list: u32, index: u32) -> u32 {
    switch list {
        case 0u: { return list_0[index]; }
        case 1u: { return list_1[index]; }
        case 2u: { return list_2[index]; }
        default: { return list_3[index]; }
    }
}

#ifdef SURFACE_ONLY
// The depth mapping of the layer cell that holds `pixel` (the view's own where it has
// one cell), read from the uniform in place: indexed in a copy of the view, the whole
// view would be copied into every thread. Only shadow views (`SURFACE_ONLY`) share a
// layer among cells.
fn cell_depth_from_distance(pixel: vec2<u32>) -> vec4<f32> {
    var cell = 0u;
    for (var k = 1u; k < min(view.cell_count, LAYER_CELLS); k++) {
        let rect = view.cells[k].rect;
        if all(pixel >= rect.xy) && all(pixel < rect.xy + rect.zw) {
            cell = k;
        }
    }
    return view.cells[cell].depth_from_distance;
}
#endif

// A float's bits, as an unsigned integer that orders like the float (negative
// values below positive ones), so that workgroup atomics can take a depth's min or max.
fn ordered_bits(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

// One pixel's blend so far.
struct PixelBlend {
    transmittance: f32,
    colour: vec3<f32>,
    median: f32,
    // Saturated, at its median, behind the scene, or outside the viewport.
    done: bool,
    // Ended in this run: at its median, or behind the scene.
    ended: bool,
    behind_scene: bool,
}

// Blends the batch's first `count` staged splats into the pixel at `centre` (strip
// bit `my_strip`, scene depth `scene`), stopping where the pixel is done. With
// `test_scene` false, no splat of the batch can lie behind the scene at the pixel, and
// the test is left out. `before`: the transmittance of the tile's earlier chunks.
fn blend_batch(
    pixel: ptr<function, PixelBlend>,
    count: u32,
    centre: vec2<f32>,
    my_strip: u32,
    scene: f32,
    before: f32,
    test_scene: bool,
) {
    for (var j = 0u; j < count; j++) {
        // A splat behind the scene ends the pixel only where it reaches the pixel's
        // strip: the ones after it are behind too, so nothing more is blended either
        // way.
        let staged = batch_position[j];
        if (staged.x & my_strip) == 0u {
            continue;
        }
        let p = bitcast<vec3<f32>>(staged.yzw);
        if test_scene && p.z < scene {
            (*pixel).done = true;
            (*pixel).ended = true;
            (*pixel).behind_scene = true;
            break;
        }
        let sigma = footprint_sigma(batch_factors[j], p.xy - centre);
        if !(sigma <= SIGMA_MAX) {
            continue;
        }
        let alpha = footprint_alpha(sigma);
        let transmittance = (*pixel).transmittance;
        let next = transmittance * (1.0 - alpha);
#ifdef SURFACE_ONLY
        // `before` is 1 for a whole tile, so this is the plain test there.
        if before * next <= 0.5 {
            (*pixel).median = p.z;
            (*pixel).done = true;
            (*pixel).ended = true;
            (*pixel).transmittance = next;
            break;
        }
#else
        if next <= T_MIN {
            (*pixel).done = true;
            break;
        }
        (*pixel).colour += batch_colour[j] * (alpha * transmittance);
#ifdef MEDIAN_DEPTH
        if next <= 0.5 && transmittance > 0.5 {
            (*pixel).median = p.z;
        }
#endif
#endif
        (*pixel).transmittance = next;
    }
}

@compute @workgroup_size(TILE_SIZE, TILE_SIZE)
fn tile_render(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) local: vec3<u32>,
    @builtin(local_invocation_index) thread: u32,
) {
    if thread == 0u {
#ifdef TILE_CHUNKS
        work = tile_chunk(linear_group(group, groups));
#else
        work = whole_tile(tile_order[group.x + group.y * view.tile_count.x]);
#endif
    }
    let drawn = workgroupUniformLoad(&work);
    if drawn.x == NO_TILE {
        return;
    }
    let tile = drawn.x;
    let tile_xy = vec2<u32>(tile % view.tile_count.x, tile / view.tile_count.x);
    let list = (tile_xy.x & 1u) | ((tile_xy.y & 1u) << 1u);
    let pixel = tile_xy * TILE_SIZE + local.xy;
    let inside = pixel.x < view.viewport_size.x && pixel.y < view.viewport_size.y;
    let centre = vec2<f32>(pixel) + 0.5;
    let tile_top = f32(tile_xy.y * TILE_SIZE);
    let my_strip = 1u << (local.y / STRIP_ROWS);
#ifdef SURFACE_ONLY
    // A tile lies in one cell of the layer, whose depth mapping its splats take.
    let depth_from_distance = cell_depth_from_distance(tile_xy * TILE_SIZE);
#else
    // A camera's layer is one cell, so it skips the lookup (about 0.005 ms of its
    // tile render at K = 9 on an H100).
    let depth_from_distance = view.depth_from_distance;
#endif

    // Reverse-Z: nearer is larger. A splat whose depth is below the scene's is hidden.
    var scene = 0.0;
    if inside {
        scene = textureLoad(scene_depth, vec2<i32>(pixel + view.viewport_origin), 0);
    }

    if thread == 0u {
        atomicStore(&pixels_done, 0u);
        atomicStore(&tile_scene_nearest, 0u);
    }
    workgroupBarrier();
    if inside {
        atomicMax(&tile_scene_nearest, ordered_bits(scene));
    }

    var pixel_blend = PixelBlend(1.0, vec3<f32>(0.0), 0.0, !inside, false, false);
    // The transmittance before the run: below 1 only for a tile's later chunks.
    var before = 1.0;
#ifdef TILE_CHUNKS
#ifndef CHUNK_TRANSMITTANCE
    // The earlier chunks' transmittances, in order: chunk `drawn.w` is the tile's
    // chunk `place`, and its earlier chunks take the places before it.
    let place = (drawn.y - ranges[tile].x) / TILE_CHUNK_PAIRS;
    for (var earlier = drawn.w - place; earlier < drawn.w; earlier++) {
        let word = chunk_transmittance_word(view, capacities.z, earlier, thread);
        before *= bitcast<f32>(tile_chunks[word]);
    }
    // The pixel ended in an earlier chunk.
    pixel_blend.done = pixel_blend.done || before <= 0.5;
#endif
#endif
    if pixel_blend.done {
        atomicAdd(&pixels_done, 1u);
    }

    let range = drawn.yz;
    // Each thread's splat of the next batch is read while the workgroup blends the
    // current one, so that the read's latency hides behind the blending; its slot in
    // the list was read a batch earlier still, so that the record's read waits on no
    // other.
    var next: ProjectedSplat;
    if range.x + thread < range.y {
        next = projected[listed_slot(list, range.x + thread)];
    }
    var slot_after_next = 0u;
    if range.x + BATCH + thread < range.y {
        slot_after_next = listed_slot(list, range.x + BATCH + thread);
    }
    for (var start = range.x; start < range.y; start += BATCH) {
        if thread == 0u {
            all_done = atomicLoad(&pixels_done);
            atomicStore(&batch_farthest, 0xffffffffu);
        }
        if workgroupUniformLoad(&all_done) == BATCH {
            break;
        }
        if start + thread < range.y {
            let s = next;
            let depth = buffer_depth(depth_from_distance, s.depth);
            atomicMin(&batch_farthest, ordered_bits(depth));
            batch_position[thread] = vec4<u32>(strip_mask(s, tile_top), bitcast<vec3<u32>>(vec3<f32>(s.x, s.y, depth)));
            batch_factors[thread] = footprint_factors(s);
#ifndef SURFACE_ONLY
            batch_colour[thread] = splat_colour(s);
#endif
        }
        workgroupBarrier();
        let ahead = start + BATCH + thread;
        if ahead < range.y {
            next = projected[slot_after_next];
        }
        if ahead + BATCH < range.y {
            slot_after_next = listed_slot(list, ahead + BATCH);
        }

        // The same for every thread: read after the barrier, written again only after
        // the next.
        let scene_may_hide = atomicLoad(&batch_farthest) < atomicLoad(&tile_scene_nearest);
        if !pixel_blend.done {
            let count = min(BATCH, range.y - start);
            // Two loops the compiler specialises, so that the common case carries no
            // scene test.
            if scene_may_hide {
                blend_batch(&pixel_blend, count, centre, my_strip, scene, before, true);
            } else {
                blend_batch(&pixel_blend, count, centre, my_strip, scene, before, false);
            }
            if pixel_blend.done {
                atomicAdd(&pixels_done, 1u);
            }
        }
        workgroupBarrier();
    }

#ifdef CHUNK_TRANSMITTANCE
    // Through this chunk alone; 0 where the pixel went behind the scene (and for pixels
    // outside the viewport), so that no later chunk walks on.
    let through = select(pixel_blend.transmittance, 0.0, pixel_blend.behind_scene || !inside);
    let word = chunk_transmittance_word(view, capacities.z, drawn.w, thread);
    tile_chunks[word] = bitcast<u32>(through);
#else
#ifdef TILE_CHUNKS
    // One chunk writes each pixel: the one where it ended, or the tile's last.
    let writes = before > 0.5 && (pixel_blend.ended || range.y == ranges[tile].y);
#else
    let writes = true;
#endif
    if inside && writes {
#ifndef SURFACE_ONLY
        textureStore(splat_layer, vec2<i32>(pixel), vec4<f32>(pixel_blend.colour, 1.0 - pixel_blend.transmittance));
#endif
        if all(pixel < textureDimensions(median_depth)) {
            textureStore(median_depth, vec2<i32>(pixel), vec4<f32>(pixel_blend.median, 0.0, 0.0, 0.0));
        }
    }
#endif
}
