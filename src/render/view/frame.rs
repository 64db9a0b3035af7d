//! Everything one frame of one view binds: built in prepare, recorded by the node.

use bevy::math::UVec2;
use wgpu::{BindGroup, BindGroupLayout, ComputePipeline, Device, RenderPipeline, TextureView};

use super::band_buffers::BandBuffers;
use super::buffer_plan::{Role, Step};
use super::dispatch::Dispatch;
use super::picks::{PickTicket, ViewPicks};
use super::splat_layer::SplatLayer;
use crate::asset::SplatStorage;
use crate::render::passes::SplatPipelines;
use crate::render::passes::indirect::IndirectGroups;
use crate::render::passes::pair_slots::PairSlotsGroups;
use crate::render::passes::preprocess::{CHUNK_PARAMS_STRIDE, PreprocessVariant};
use crate::render::passes::tile_split::TileLists;

#[derive(bevy::ecs::component::Component)]
pub struct SplatFrame {
    /// Top to bottom, one per band of the view.
    pub bands: Vec<BandFrame>,
    pub multisampled_depth: bool,
    pub viewport_origin: UVec2,
    pub viewport_size: UVec2,
    pub composite: CompositeDraw,
    /// For a camera with `SplatDepth`: the depth write's pipeline and bind group.
    pub depth_write: Option<(RenderPipeline, BindGroup)>,
    /// For a camera with pointers over it: what the picks of this frame answer.
    pub pick: Option<PickTicket>,
}

/// How a view's layer is composited into its main texture.
pub enum CompositeDraw {
    /// Tile quads over the drawn tiles, blended (or written) into the main texture.
    Fragment {
        pipeline: RenderPipeline,
        bind_group: BindGroup,
    },
    /// A compute pass that reads the layer and the copy of the scene and writes the
    /// main texture (`ComputeComposite`); its bind group is made when it is recorded,
    /// with the main texture the view has then.
    Compute {
        pipeline: ComputePipeline,
        layout: BindGroupLayout,
    },
}

/// The bind groups of one band's passes.
pub struct BandFrame {
    /// One preprocess dispatch per cloud chunk.
    pub preprocess: Vec<PreprocessDispatch>,
    pub indirect: IndirectGroups,
    /// The first pair slots in depth order (after the depth sort).
    pub pair_slots: PairSlotsGroups,
    pub duplicate: BindGroup,
    /// The band is a run of several views in cells of one layer (the duplicate's
    /// variant that computes each splat's cell).
    pub cells: bool,
    /// Bits of the bin id, the pairs' sort key.
    pub key_bits: u32,
    pub tile_range: BindGroup,
    pub tile_split: BindGroup,
    pub tile_order: BindGroup,
    pub tile_render: BindGroup,
    /// The pick pass over this band's tiles (one bind group per tile list), when the
    /// view picks this frame.
    pub pick: Option<[BindGroup; 4]>,
    /// The band's tiles: every tile column, the band's tile rows (the tile order's
    /// threads; the tile render draws only the tiles it finds reached).
    pub tiles: UVec2,
    /// The tile split's grid: every bin column, the band's bin rows.
    pub bins: UVec2,
}

/// One cloud chunk's preprocess: its bind group, the offset of its `ChunkParams`, its
/// thread count (splats × instances), whether its asset is in the compact layout and
/// which preprocess it runs (and whether its `RECEIVE` variant).
pub struct PreprocessDispatch {
    pub bind_group: BindGroup,
    pub params_offset: u32,
    pub threads: u32,
    pub compact: bool,
    pub variant: PreprocessVariant,
    pub receive: bool,
}

/// Binds one band's buffers to every pass. The band's chunk parameters must already
/// be written, one per dispatch at `CHUNK_PARAMS_STRIDE` apart. `lod_feedback`: the
/// view's LOD feedback buffer, which dispatches over tree nodes bind. `None` where a
/// dispatch draws tree nodes on a view without one, or a device without the LOD
/// variant. `receive`: the preprocess also writes the band's `LitPoint`s (its
/// `RECEIVE` variants must be built); `cells`: the view is a run of views in cells of
/// one layer (`LayerCells`).
#[expect(clippy::too_many_arguments, reason = "one frame's bindings, named")]
pub fn band_frame(
    device: &Device,
    pipelines: &SplatPipelines,
    band: &BandBuffers,
    dispatches: &[Dispatch<'_>],
    scene_depth: &TextureView,
    multisampled_depth: bool,
    layer: &SplatLayer,
    picks: Option<&ViewPicks>,
    lod_feedback: Option<&wgpu::Buffer>,
    (receive, cells): (bool, bool),
) -> Option<BandFrame> {
    let lit_points = receive.then_some(&band.work.lit_points);
    let preprocess = dispatches
        .iter()
        .enumerate()
        .map(|(slot, dispatch)| {
            let buffers = [
                &band.view_uniform,
                &band.chunk_params,
                &dispatch.chunk.geometry,
                &dispatch.chunk.sh,
                &band.work.projected,
                &band.work.counters,
                &band.instances,
                band.work.shared.buffer(Step::Preprocess, Role::DepthKeys),
                band.work.shared.buffer(Step::Preprocess, Role::DepthValues),
                &band.work.sources,
            ];
            let bind_group = match &dispatch.lod {
                Some(lod) => pipelines.preprocess.lod_bind_group(
                    device,
                    buffers,
                    (lod.records, lod_feedback?),
                    lit_points,
                )?,
                None => pipelines
                    .preprocess
                    .bind_group(device, buffers, lit_points)?,
            };
            Some(PreprocessDispatch {
                bind_group,
                params_offset: (slot as u64 * CHUNK_PARAMS_STRIDE) as u32,
                threads: dispatch.threads(),
                compact: dispatch.splats.storage == SplatStorage::Compact,
                variant: dispatch.variant(),
                receive,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let capacity = &band.work.capacity;
    let pair_key_bits = capacity.pair_key_bits();
    let shared = &band.work.shared;
    // The sort's result lies in the ping-pong buffer its key width decides: the plan
    // knows which.
    let tile_range = pipelines.tile_range.bind_group(
        device,
        &band.view_uniform,
        shared.buffer(Step::TileRange, shared.sorted_pair_keys()),
        &band.work.counters,
        &band.work.bin_ranges,
    );
    let lists = |step| TileLists(shared.tile_lists(step));
    let tile_split = pipelines.tile_split.bind_group(
        device,
        &band.view_uniform,
        &band.work.bin_ranges,
        &lists(Step::TileSplit),
        &band.work.ranges,
        &band.work.tile_work,
    );
    let tile_render = pipelines.tile_render.bind_group(
        device,
        &band.view_uniform,
        &band.work.projected,
        &band.work.ranges,
        &lists(Step::TileRender),
        scene_depth,
        multisampled_depth,
        &layer.view,
        &band.work.tile_order,
        &layer.median_depth,
        (&band.work.tile_chunks, &band.work.capacities),
    );
    let pick = picks.map(|picks| {
        pipelines.pick.bind_groups(
            device,
            &band.view_uniform,
            picks.pixels(),
            &band.work.projected,
            &band.work.sources,
            &band.work.ranges,
            &lists(Step::Pick),
            (scene_depth, multisampled_depth),
            &picks.hits,
            &picks.pickable,
        )
    });
    Some(BandFrame {
        preprocess,
        indirect: pipelines.indirect.bind_groups(
            device,
            (&band.work.counters, &band.work.capacities),
            &band.work.depth_sort,
        ),
        duplicate: pipelines.duplicate.bind_group(
            device,
            &band.view_uniform,
            &band.work.projected,
            shared.buffer(Step::Duplicate, Role::FirstPairSlots),
            &band.work.counters,
            shared.buffer(Step::Duplicate, Role::PairKeys),
            shared.buffer(Step::Duplicate, Role::PairValues),
            shared.binding(Step::Duplicate, Role::SortedDepthValues),
        ),
        cells,
        pair_slots: pipelines.pair_slots.bind_groups(
            device,
            (&band.work.counters, &band.work.capacities),
            (
                shared.binding(Step::PairSlots, Role::SortedDepthValues),
                shared.buffer(Step::PairSlots, Role::SpilledPairs),
            ),
            (
                shared.buffer(Step::PairSlots, Role::FirstPairSlots),
                &band.work.block_sums,
            ),
            &band.work.sort,
        ),
        key_bits: pair_key_bits,
        tile_range,
        tile_split,
        tile_order: pipelines.tile_order.bind_group(
            device,
            &band.view_uniform,
            (&band.work.ranges, &band.work.tile_work),
            (
                &band.work.tile_order,
                &band.work.tile_runs,
                &band.work.counters,
            ),
            (&band.work.tile_chunks, &band.work.capacities),
        ),
        tile_render,
        pick,
        tiles: capacity.band_tiles(),
        bins: capacity.band_bins(),
    })
}
