// Shared by the splat passes: the per-view camera, the projected splat record and the
// exact ellipse/tile test that preprocess and duplicate must agree on.
#define_import_path bevy_splat::common

// Pixels on a side of a tile, and the tile order's work classes: shader defs from
// `common.rs`'s `TILE_SIZE` and `WORK_CLASSES`, their one definition.
const TILE_SIZE: u32 = #{TILE_SIZE}u;
const WORK_CLASSES: u32 = #{WORK_CLASSES}u;
// Pairs of one chunk of a long tile list in a shadow view (`TILE_CHUNK_PAIRS` in
// common.rs).
const TILE_CHUNK_PAIRS: u32 = #{TILE_CHUNK_PAIRS}u;
// Threads of the kernels that run over splats, pairs or tiles (`WORKGROUP_SIZE`).
const WORKGROUP_SIZE: u32 = #{WORKGROUP_SIZE}u;
// Cells a view's layer may hold (`MAX_LAYER_CELLS` in uniform.rs).
const LAYER_CELLS: u32 = #{LAYER_CELLS}u;

// Words of a band's counters buffer (`ViewCounters` in indirect.rs, which makes these
// defs from its fields): visible splats, pairs needed, pairs kept (≤ capacity),
// visible splats kept (≤ capacity), the dispatches over kept splats and kept pairs,
// the largest depth key written and then the complement of the smallest; the tiles
// some splat reaches, the tile render's grid, the fragment passes' draw over the runs
// of drawn tiles and the chunks of long tile lists filed (the tile order writes those
// four), then the grid over the chunks. Preprocess and duplicate count what they would
// write past a capacity, so the CPU learns what the band needs.
const COUNTER_VISIBLE: u32 = #{COUNTER_VISIBLE}u;
const COUNTER_PAIRS_NEEDED: u32 = #{COUNTER_PAIRS_NEEDED}u;
const COUNTER_PAIRS_KEPT: u32 = #{COUNTER_PAIRS_KEPT}u;
const COUNTER_VISIBLE_KEPT: u32 = #{COUNTER_VISIBLE_KEPT}u;
const COUNTER_VISIBLE_DISPATCH: u32 = #{COUNTER_VISIBLE_DISPATCH}u;
const COUNTER_PAIR_DISPATCH: u32 = #{COUNTER_PAIR_DISPATCH}u;
const COUNTER_DEPTH_KEY_MAX: u32 = #{COUNTER_DEPTH_KEY_MAX}u;
// The depth-key range's copies, one a cache line of COUNTER_LINE_WORDS words from
// COUNTER_DEPTH_KEY_MAX on (`ViewCounters::depth_key_ranges`).
const DEPTH_KEY_RANGE_COPIES: u32 = #{DEPTH_KEY_RANGE_COPIES}u;
const COUNTER_LINE_WORDS: u32 = #{COUNTER_LINE_WORDS}u;
const COUNTER_TILES_DRAWN: u32 = #{COUNTER_TILES_DRAWN}u;
const COUNTER_TILE_DISPATCH: u32 = #{COUNTER_TILE_DISPATCH}u;
const COUNTER_TILE_DRAW: u32 = #{COUNTER_TILE_DRAW}u;
const COUNTER_TILE_CHUNKS: u32 = #{COUNTER_TILE_CHUNKS}u;
const COUNTER_CHUNK_DISPATCH: u32 = #{COUNTER_CHUNK_DISPATCH}u;
const COUNTER_SCAN_DISPATCH: u32 = #{COUNTER_SCAN_DISPATCH}u;
// The last pixel centre of a tile, from its first pixel's edge.
const TILE_LAST_CENTRE: f32 = f32(TILE_SIZE) - 0.5;
// Indirect grids over a GPU-only count are rows of at most GRID_MAX_X workgroups of
// 256 threads (see indirect.wgsl).
const GRID_MAX_X: u32 = 65535u;
const GRID_WIDTH: u32 = GRID_MAX_X * WORKGROUP_SIZE;
// No pixel is drawn where a splat's alpha is below this (the reference's cut-off).
const ALPHA_MIN: f32 = 1.0 / 255.0;
// The reference caps α below 1 so transmittance never hits zero in one step.
const ALPHA_MAX: f32 = 0.999;
// A splat that would take transmittance to this or below is not blended; the pixel ends.
const T_MIN: f32 = 1e-4;

// The uniform of the passes that read the splat layer over the drawn tiles (the
// composite and the depth write; `CompositeUniform` on the host).
struct LayerParams {
    // x, y: the viewport's origin in the target; z: 1 to take the composite's result
    // to linear light; w: the levels per channel of a target that stores sRGB-encoded
    // bytes (255), else 0.
    origin_and_modes: vec4<u32>,
    // x: the view's tiles across; y, z: the viewport's size in the layer's pixels; w:
    // target pixels per layer pixel along each axis (a shadow view drawn at a
    // `SplatShadowScale`; 1 for a camera).
    tiles: vec4<u32>,
    // x, y: where the view's cell starts in the layer, in its pixels (0 but for the
    // cascades of a light drawn together, `LayerCell`).
    cell_origin: vec4<u32>,
}

// One view's part of a layer that holds several: a directional light's cascades are
// drawn in one run of the passes, side by side in one layer, each in its own cell.
// The instances of a cascade's clouds are taken into the first cascade's camera
// space (scaled and moved, `shadows/cells.rs`), so that one projection puts every
// cascade's splats in their cells; what the passes cannot fold into the instances is
// here.
struct LayerCell {
    // The cascade's camera space (folded as its instances are) from the world, for a
    // `SplatShader`'s moved splats.
    cam_from_world: mat4x4<f32>,
    // The cell in the layer: its first pixel (a multiple of the bin size) and its size.
    // A splat reaches no tile outside its own cell.
    rect: vec4<u32>,
    // The cascade's depth buffer value of a folded distance (as `depth_from_distance`).
    depth_from_distance: vec4<f32>,
}

struct SplatView {
    // Camera space here is OpenCV-like: x right, y down, z forward (t > 0 in front).
    cam_from_world: mat4x4<f32>,
    world_position: vec4<f32>,
    // fx, fy, cx, cy in pixels of the viewport (for an orthographic view, fx and fy
    // are pixels per unit).
    focal: vec2<f32>,
    principal: vec2<f32>,
    // Jacobian clamp of x/t and y/t: (+x, -x, +y, -y) limits.
    tan_limits: vec4<f32>,
    viewport_size: vec2<u32>,
    tile_count: vec2<u32>,
    // Maps view distance t to the depth buffer's value: (a·t + b) / (c·t + d).
    depth_from_distance: vec4<f32>,
    viewport_origin: vec2<u32>,
    near: f32,
    pair_capacity: u32,
    splat_capacity: u32,
    // The band of tile rows this pass draws: first, and one past the last.
    band_first_row: u32,
    band_end_row: u32,
    // 1: orthographic (pixel = focal·x + principal), 0: perspective (focal·x/t + ...).
    orthographic: u32,
    // The cells of the layer: 1 for a view of its own (cell 0 is then the whole
    // viewport); with more, a projected splat's `rg` word holds its cell. They lie in
    // a grid of `cell_columns` columns, `cell_stride` pixels apart, each `cell_size`
    // pixels: the rects of `cells`, which `splat_rect` computes instead of indexing
    // `cells` (a view passed by value and indexed at run time is copied whole into
    // every thread: duplicate took 12× as long on an H100).
    cell_count: u32,
    cell_columns: u32,
    cell_stride: vec2<u32>,
    cell_size: vec2<u32>,
    cells: array<LayerCell, LAYER_CELLS>,
}

// One splat after projection: everything the tile render needs, in 32 bytes, so that
// each of the tile render's random reads of a record touches one 32-byte memory sector
// (a 48-byte record straddled two). What preprocess and duplicate also need — the tile
// rows, the ellipse's reach — is derived from these fields by the functions below, the
// same arithmetic in every pass.
struct ProjectedSplat {
    x: f32,
    y: f32,
    depth: f32,
    // The footprint's factors (see `footprint_sigma`; no field name here ends in a
    // digit: naga_oil writes imported structs through naga's namer, which renames such
    // names, and a pass's own `splat.l00` would then miss): u₀ = l_xx·dx + l_yx·dy,
    // u1 = l_yy·dy, with u₀² + u₁² = ½log₂e · dᵀΣ⁻¹d.
    l_xx: f32,
    l_yx: f32,
    l_yy: f32,
    // Colour r, g (`pack_unbounded`, unorm16 each).
    rg: u32,
    // Colour b (`pack_unbounded`) and the opacity (unorm16 over 0..=1).
    b_opacity: u32,
}

// Colours are at least 0 but have no upper bound. c / (1 + c) maps them into [0, 1),
// where unorm16 keeps |Δc| = (1 + c)² / 131070: under 3.1e-5 for c ≤ 1 (four times
// finer than f16 there), and any c ≥ 0 is kept.
fn pack_unbounded(c: vec2<f32>) -> u32 {
    return pack2x16unorm(c / (1.0 + c));
}

fn unpack_unbounded(word: u32) -> vec2<f32> {
    let y = unpack2x16unorm(word);
    return y / max(1.0 - y, vec2<f32>(1.0 / 65535.0));
}

fn splat_colour(s: ProjectedSplat) -> vec3<f32> {
    return vec3<f32>(unpack_unbounded(s.rg), unpack_unbounded(s.b_opacity).x);
}

fn splat_opacity(s: ProjectedSplat) -> f32 {
    return unpack2x16unorm(s.b_opacity).y;
}

// The record's colour and opacity words.
fn pack_colour_opacity(colour: vec3<f32>, opacity: f32) -> vec2<u32> {
    let b = pack_unbounded(vec2<f32>(colour.b, 0.0)) & 0xffffu;
    return vec2<u32>(pack_unbounded(colour.rg), b | (pack2x16unorm(vec2<f32>(0.0, opacity)) & 0xffff0000u));
}

// The footprint at the ellipse's edge, u₀² + u₁² = log₂(255·opacity): every pixel with
// α ≥ 1/255 lies inside (σ ≤ SIGMA_MAX, see `footprint_sigma`). At least 0, as the
// preprocess keeps only splats with opacity ≥ 1/255.
fn reach_squared(s: ProjectedSplat) -> f32 {
    return max(SIGMA_MAX + log2(splat_opacity(s)), 0.0);
}

// The cell a projected splat belongs to: its own where the layer holds several (its
// `rg` word, as only shadow views, which draw no colour, hold several), else 0.
fn splat_cell(s: ProjectedSplat, view: SplatView) -> u32 {
    return select(0u, min(s.rg, LAYER_CELLS - 1u), view.cell_count > 1u);
}

// The pixels (first x, first y, width, height) the splat may reach: its cell's.
fn splat_rect(s: ProjectedSplat, view: SplatView) -> vec4<u32> {
#ifdef ONE_CELL
    // Built for views of one cell (every camera's duplicate, which the grid's
    // arithmetic made 5 % slower): the rect is the viewport, the same numbers the
    // branch below gives such a view, so the preprocess (built for both) counts the
    // pairs this writes.
    return vec4<u32>(0u, 0u, view.viewport_size);
#else
    if view.cell_count <= 1u {
        return vec4<u32>(0u, 0u, view.viewport_size);
    }
    let cell = splat_cell(s, view);
    let columns = max(view.cell_columns, 1u);
    let origin = vec2<u32>(cell % columns, cell / columns) * view.cell_stride;
    return vec4<u32>(origin, view.cell_size);
#endif
}

// Half the height of the α ≥ 1/255 ellipse: at u₀ = 0, |dy| = R / l_yy. l_yy comes from
// Σ₂ᴅ's yy alone, so this holds for long thin splats too, where the conic's
// determinant cancels.
fn half_height(s: ProjectedSplat) -> f32 {
    return sqrt(reach_squared(s)) / s.l_yy;
}

// The tile rows (first, last; first > last when none) of the band that the splat's
// α ≥ 1/255 ellipse reaches.
fn splat_rows(s: ProjectedSplat, view: SplatView) -> vec2<u32> {
    let h = half_height(s);
    let rect = splat_rect(s, view);
    let rect_rows = vec2<u32>(rect.y / TILE_SIZE, (rect.y + rect.w + TILE_SIZE - 1u) / TILE_SIZE);
    let first_row = max(view.band_first_row, rect_rows.x);
    let end_row = min(view.band_end_row, rect_rows.y);
    let first = max(ceil((s.y - h - TILE_LAST_CENTRE) / f32(TILE_SIZE)), f32(first_row));
    let last = min(floor((s.y + h - 0.5) / f32(TILE_SIZE)), f32(end_row) - 1.0);
    if !(first <= last) {
        return vec2<u32>(1u, 0u);
    }
    return vec2<u32>(u32(first), u32(last));
}

// The first and last tile column (inclusive) that the splat's α ≥ 1/255 ellipse touches
// in tile row `row`; first > last when it touches none. Exact for the pixel centres of
// the row (y from S·row + 0.5 to S·row + S − 0.5, S = TILE_SIZE), so preprocess and
// duplicate agree.
fn tile_span_in_row(s: ProjectedSplat, row: u32, view: SplatView) -> vec2<i32> {
    let r2 = reach_squared(s);
    let rect = splat_rect(s, view);
    let y_lo = f32(row * TILE_SIZE) + 0.5 - s.y;
    let y_hi = min(f32(row * TILE_SIZE) + TILE_LAST_CENTRE, f32(rect.y + rect.w) - 0.5) - s.y;
    // At height dy the ellipse spans l_xx·dx + l_yx·dy = ±sqrt(R² − l_yy²·dy²); its
    // rightmost point is at dy = −l_yx·R / (l_yy·sqrt(l_yx² + l_yy²)), its leftmost at the
    // opposite dy. Clamped into the row, those give the row's extreme columns.
    let dy_extreme = s.l_yx * sqrt(r2) / (s.l_yy * length(vec2<f32>(s.l_yx, s.l_yy)));
    let dy_right = clamp(-dy_extreme, y_lo, y_hi);
    let dy_left = clamp(dy_extreme, y_lo, y_hi);
    let disc_right = r2 - s.l_yy * s.l_yy * dy_right * dy_right;
    let disc_left = r2 - s.l_yy * s.l_yy * dy_left * dy_left;
    if disc_right < 0.0 || disc_left < 0.0 {
        return vec2<i32>(1, 0);
    }
    let x_right = s.x + (-s.l_yx * dy_right + sqrt(disc_right)) / s.l_xx;
    let x_left = s.x + (-s.l_yx * dy_left - sqrt(disc_left)) / s.l_xx;
    // Tile column j holds pixel centres S·j + 0.5 ..= S·j + S − 0.5.
    let first = i32(ceil((x_left - TILE_LAST_CENTRE) / f32(TILE_SIZE)));
    let last = i32(floor((x_right - 0.5) / f32(TILE_SIZE)));
    let first_col = i32(rect.x / TILE_SIZE);
    let last_col = i32((rect.x + rect.z + TILE_SIZE - 1u) / TILE_SIZE) - 1;
    return vec2<i32>(max(first, first_col), min(last, last_col));
}

// Pairs are made and sorted per bin of 2×2 tiles (fewer pairs to sort than per tile),
// each carrying which of the bin's tiles the splat reaches, and split into the tiles'
// own lists after the sort (`tile_split.wgsl`). The value of a bin pair is the splat's
// slot with those tiles as 4 bits above it: bit (tile x & 1) + 2·(tile y & 1).
const SLOT_BITS: u32 = 28u;
const SLOT_MASK: u32 = (1u << SLOT_BITS) - 1u;

// The depth sort's values carry each visible splat's pair count beside its slot, in
// the 4 bits above SLOT_BITS, so that the pair slots read the counts in depth order
// from the sorted values instead of gathering them by slot (a random read a splat,
// 1.5 ms at 64 M splats). A count of PAIRS_SPILLED or more does not fit: the value
// carries PAIRS_SPILLED and the count itself is written by slot after the depth keys,
// in their buffer (`spilled_pairs_word`).
const PAIRS_SPILLED: u32 = (1u << (32u - SLOT_BITS)) - 1u;

fn depth_value(slot: u32, pairs: u32) -> u32 {
    return slot | (min(pairs, PAIRS_SPILLED) << SLOT_BITS);
}

fn depth_value_slot(value: u32) -> u32 {
    return value & SLOT_MASK;
}

// The value's pair count, or PAIRS_SPILLED where it is at `spilled_pairs_word`.
fn depth_value_pairs(value: u32) -> u32 {
    return value >> SLOT_BITS;
}

// Where a spilled pair count of `slot` lies, for a band of `splat_capacity` slots.
fn spilled_pairs_word(splat_capacity: u32, slot: u32) -> u32 {
    return splat_capacity + slot;
}
// The bin columns of an empty span: no column is ≥ x and ≤ y.
const NO_COLUMNS: vec2<i32> = vec2<i32>(0x3fffffff, -1);

fn bins_across(view: SplatView) -> u32 {
    return (view.tile_count.x + 1u) / 2u;
}

// The splat's tile spans in the two tile rows of bin row `bin_row` (top in xy, bottom
// in zw), each empty (x > y) where that row is outside the splat's rows: the rows
// preprocess and duplicate walk, so both count the same pairs.
fn bin_row_spans(s: ProjectedSplat, rows: vec2<u32>, bin_row: u32, view: SplatView) -> vec4<i32> {
    let top_row = 2u * bin_row;
    var top = vec2<i32>(1, 0);
    var bottom = vec2<i32>(1, 0);
    if top_row >= rows.x && top_row <= rows.y {
        top = tile_span_in_row(s, top_row, view);
    }
    if top_row + 1u >= rows.x && top_row + 1u <= rows.y {
        bottom = tile_span_in_row(s, top_row + 1u, view);
    }
    return vec4<i32>(top, bottom);
}

// The bin columns a span of tile columns reaches.
fn bin_columns(span: vec2<i32>) -> vec2<i32> {
    return select(NO_COLUMNS, span >> vec2<u32>(1u), span.x <= span.y);
}

// The bins of one bin row that the two spans reach: the union of their bin columns,
// which may have a gap where a thin slanted splat crosses between the rows.
fn bins_in_row(spans: vec4<i32>) -> u32 {
    let top = bin_columns(spans.xy);
    let bottom = bin_columns(spans.zw);
    let overlap = min(top.y, bottom.y) - max(top.x, bottom.x) + 1;
    let count = max(top.y - top.x + 1, 0) + max(bottom.y - bottom.x + 1, 0) - max(overlap, 0);
    return u32(count);
}

// Which tiles of bin column `column` the spans reach, as the 4 bits of a bin pair.
fn bin_tiles(spans: vec4<i32>, column: i32) -> u32 {
    let left = 2 * column;
    let right = left + 1;
    return u32(spans.x <= left && left <= spans.y)
        | (u32(spans.x <= right && right <= spans.y) << 1u)
        | (u32(spans.z <= left && left <= spans.w) << 2u)
        | (u32(spans.z <= right && right <= spans.w) << 3u);
}

// A tile's work class by its pair count: more pairs, a higher class, in quarter
// octaves (each class at most 1.19× the pairs of its lowest) from 4 pairs up, the
// last class taking every tile beyond. Tiles of one class take about as long to draw.
fn work_class(pairs: u32) -> u32 {
    if pairs < 4u {
        return pairs;
    }
    let top = firstLeadingBit(pairs);
    let quarter = (pairs >> (top - 2u)) & 3u;
    return min(4u * (top - 1u) + quarter, WORK_CLASSES - 1u);
}

// A shadow view's tile chunks, in one buffer of words (`tile_order.wgsl` files them,
// `tile_render.wgsl` draws them): per tile of the band, its first chunk + 1 (0: the
// tile is drawn whole); then per chunk, its tile and its place in the tile's list;
// then per chunk, each of its tile's pixels' transmittance through the chunk (f32
// bits), which the tile's later chunks start from. `capacity` chunks at most.
const NO_TILE: u32 = 0xffffffffu;

fn band_tiles(view: SplatView) -> u32 {
    return (view.band_end_row - view.band_first_row) * view.tile_count.x;
}

// Chunks of a tile's list of `pairs`: one for a short list (drawn whole).
fn tile_chunk_count(pairs: u32) -> u32 {
    if pairs < TILE_CHUNK_PAIRS {
        return 1u;
    }
    return (pairs + TILE_CHUNK_PAIRS - 1u) / TILE_CHUNK_PAIRS;
}

fn chunk_item_word(view: SplatView, chunk: u32) -> u32 {
    return band_tiles(view) + 2u * chunk;
}

fn chunk_transmittance_word(view: SplatView, capacity: u32, chunk: u32, pixel: u32) -> u32 {
    return band_tiles(view) + 2u * capacity + chunk * TILE_SIZE * TILE_SIZE + pixel;
}

// The linear index of a thread of an indirect grid written by `indirect.wgsl`.
fn linear_thread(gid: vec3<u32>) -> u32 {
    return gid.x + gid.y * GRID_WIDTH;
}

// A splat's footprint at a pixel `d` = (splat centre − pixel centre) away, by the
// reference's rules, in two steps so that callers keep the cheap test in their own
// loop (an `exp` skipped is most of the tile render's saving). The exponent is taken
// in base 2 with the opacity folded in, σ = log₂e · ½dᵀΣ⁻¹d − log₂(opacity), so that
// α = min(ALPHA_MAX, 2^−σ) and α ≥ 1/255 ⇔ σ ≤ log₂ 255; and the quadratic form is
// factored, log₂e · ½dᵀΣ⁻¹d = u₀² + u₁² with (u₀, u₁) = (l₀₀dx + l₁₀dy, l₁₁dy), so that
// a pixel costs two multiply-adds fewer than with the conic. The tile render and the
// pick share these, so what is picked is what is drawn.

// The most σ of a pixel the splat is blended into: α = 1/255.
const SIGMA_MAX: f32 = log2(1.0 / ALPHA_MIN);

// (l₀₀, l₁₀, l₁₁, −log₂ opacity) of a projected splat: the Cholesky factor of
// ½log₂e·(a, b; b, c), the conic, scaled, as the preprocess stored it.
fn footprint_factors(s: ProjectedSplat) -> vec4<f32> {
    return vec4<f32>(s.l_xx, s.l_yx, s.l_yy, -log2(splat_opacity(s)));
}

// σ at `d`; the pixel takes no part of the splat unless σ ≤ SIGMA_MAX (which a NaN
// fails too).
fn footprint_sigma(factors: vec4<f32>, d: vec2<f32>) -> f32 {
    let u0 = factors.x * d.x + factors.y * d.y;
    let u1 = factors.z * d.y;
    return u0 * u0 + u1 * u1 + factors.w;
}

fn footprint_alpha(sigma: f32) -> f32 {
    return min(ALPHA_MAX, exp2(-sigma));
}

// The value the depth buffer would hold for a point at view distance t, given the
// view's `depth_from_distance`.
fn buffer_depth(m: vec4<f32>, t: f32) -> f32 {
    return (m.x * t + m.y) / (m.z * t + m.w);
}
