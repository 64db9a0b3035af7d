//! The buffers of one band of a view (see `bands`): the view's own inputs and the work
//! its passes do, which views of one shape share (`shared_work`); kept across frames
//! and rebuilt when the band needs more.

use std::ops::Range;
use std::sync::Arc;

use bevy::math::UVec2;
use wgpu::{Buffer, BufferUsages, Device};

use super::buffer_plan::SharedBuffers;
use super::dispatch::Dispatch;
use super::lod::LodFrame;
use super::uniform::{BandUniform, LayerCells, SplatCamera, SplatViewUniform};
use crate::asset::SplatStorage;
use crate::render::memory::{GpuBytes, SplatMemory};
use crate::render::passes::SplatPipelines;
use crate::render::passes::common::buffer;
use crate::render::passes::indirect::{
    COUNTERS_SIZE, DEPTH_KEY_RANGE_OFFSET, PAIRS_KEPT_OFFSET, VISIBLE_KEPT_OFFSET,
};
use crate::render::passes::pair_slots::block_sums_bytes;
use crate::render::passes::preprocess::DEPTH_KEY_BITS;
use crate::render::passes::preprocess::{
    CHUNK_PARAMS_STRIDE, ChunkParams, CloudInstance, LIT_POINT_BYTES, PROJECTED_SPLAT_BYTES,
    PreprocessPass,
};
use crate::render::passes::radix_sort::{KeyRange, SortBuffers, SortValues};
use crate::render::passes::tile_order::{tile_chunk_bytes, tile_chunk_capacity, tile_work_bytes};
use crate::render::passes::tile_quads::{BandTiles, TILE_RUN_BYTES};
use crate::render::passes::tile_split::bins_for;

/// The sizes a band's buffers are built for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BandCapacity {
    /// Projected splats the band can keep.
    pub splats: u32,
    /// (splat, bin) pairs: one per bin of 2×2 tiles a splat reaches.
    pub pairs: u32,
    /// Preprocess dispatches (distinct asset chunks) per frame.
    pub chunks: u32,
    /// Clouds (instances of assets) per frame.
    pub instances: u32,
    /// Tiles of the whole view.
    pub tiles: UVec2,
    /// The tile rows this band draws: whole bin rows, so it starts at an even row.
    pub rows: Range<u32>,
    /// Whether the band records where each projected splat came from (a view that
    /// picks): 8 more bytes per splat.
    pub sources: bool,
    /// Whether the band records what the light pass needs of each projected splat (a
    /// view whose clouds receive light): `LIT_POINT_BYTES` more per splat.
    pub lit_points: bool,
    /// The most chunks of long tile lists the band keeps room for, each drawn by its
    /// own workgroup (a shadow view's; 0 draws every tile whole): no more than its
    /// pairs may need (`tile_chunk_capacity`).
    pub tile_chunks: u32,
}

impl BandCapacity {
    /// The band's tile grid: every tile column of the view, the band's tile rows.
    pub fn band_tiles(&self) -> UVec2 {
        UVec2::new(self.tiles.x, self.rows.len() as u32)
    }

    /// The band's bins (2×2 tiles): every bin column, the bin rows of its tile rows.
    pub fn band_bins(&self) -> UVec2 {
        bins_for(self.band_tiles())
    }

    /// Bits of the pairs' sort key: the bin id, over the whole view's bins.
    pub fn pair_key_bits(&self) -> u32 {
        let bins = bins_for(self.tiles);
        let count = (bins.x * bins.y).max(2);
        u32::BITS - (count - 1).leading_zeros()
    }

    /// Whether work built for `self` is the work `other` asks for: everything but the
    /// chunks and instances, which size a view's own inputs (`BandInputs`).
    pub fn same_work(&self, other: &BandCapacity) -> bool {
        let inputs_aside = BandCapacity {
            chunks: self.chunks,
            instances: self.instances,
            ..other.clone()
        };
        *self == inputs_aside
    }

    /// The tile chunks the band keeps room for (none where it draws tiles whole).
    pub fn chunk_capacity(&self) -> u32 {
        tile_chunk_capacity(self.pairs).min(self.tile_chunks)
    }
}

/// One band of one view: its own inputs (its camera and rows, its clouds, its
/// dispatches' parameters), written each frame before it records, and the working
/// buffers its passes fill, which the views of its shape share (`shared_work`: they
/// record one after another, and each view's passes clear or overwrite whatever they
/// read of it first).
pub struct BandBuffers {
    /// Chunk parameters and instances this view's own buffers hold.
    pub inputs: BandInputs,
    pub view_uniform: Buffer,
    pub chunk_params: Buffer,
    pub instances: Buffer,
    pub work: Arc<BandWork>,
    _bytes: GpuBytes,
}

/// How many preprocess dispatches and clouds a view's own band buffers hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandInputs {
    pub chunks: u32,
    pub instances: u32,
}

impl BandInputs {
    /// Whether these hold what `need` asks of them.
    pub fn hold(&self, need: &BandCapacity) -> bool {
        self.chunks >= need.chunks && self.instances >= need.instances
    }
}

/// The buffers a band's passes work in, sized by its [`BandCapacity`].
pub struct BandWork {
    /// What it was built for. Its chunks and instances are those of the plan it was
    /// built from: they size no buffer here (each view's `BandInputs` hold its own).
    pub capacity: BandCapacity,
    pub projected: Buffer,
    /// Each projected splat's instance and asset index, for picks (see
    /// `BandCapacity::sources`); one element otherwise.
    pub sources: Buffer,
    /// Each projected splat's `LitPoint`, for the light pass (see
    /// `BandCapacity::lit_points`); one element otherwise.
    pub lit_points: Buffer,
    /// The four buffers the frame's per-splat and per-pair arrays share
    /// (`buffer_plan`): the depth and pair sorts' keys and values, the spilled pair
    /// counts, the first pair slots and the tile lists.
    pub shared: SharedBuffers,
    pub counters: Buffer,
    /// Pair and splat capacities for the indirect kernels (a uniform).
    pub capacities: Buffer,
    /// Each tile's run in its list (`tile_split`).
    pub ranges: Buffer,
    /// Each bin's run of the sorted pairs: the tile range writes every bin of the band
    /// each frame.
    pub bin_ranges: Buffer,
    /// One word per block of the visible splats in depth order: its pair count, then
    /// its first pair slot (`pair_slots`).
    pub block_sums: Buffer,
    /// Visible splats by depth: keys are depths, values their slots, in the shared
    /// buffers.
    pub depth_sort: SortBuffers,
    /// (splat, bin) pairs by bin, in the shared buffers.
    pub sort: SortBuffers,
    /// The work classes' counts and each tile's place in its class (`tile_split`).
    pub tile_work: Buffer,
    /// The band's tiles, busiest first: the tile render's launch order.
    pub tile_order: Buffer,
    /// The band's runs of drawn tiles along its rows: the instances of the tile quads
    /// that read the layer (`tile_order.wgsl`).
    pub tile_runs: Buffer,
    /// Long tiles' chunks and their transmittances (`common.wgsl`), where the band
    /// cuts long tile lists; a few bytes otherwise.
    pub tile_chunks: Buffer,
    _bytes: GpuBytes,
}

impl BandBuffers {
    /// What the passes that read the layer draw this band's tiles from.
    pub fn tiles(&self) -> BandTiles<'_> {
        BandTiles {
            tile_runs: &self.work.tile_runs,
            counters: &self.work.counters,
        }
    }

    /// A view's own inputs, holding `inputs`, over `work` (its own or shared).
    pub fn over(
        device: &Device,
        memory: &SplatMemory,
        inputs: BandInputs,
        work: Arc<BandWork>,
    ) -> Self {
        let storage = BufferUsages::STORAGE | BufferUsages::COPY_DST;
        let uniform = BufferUsages::UNIFORM | BufferUsages::COPY_DST;
        let view_uniform = buffer(
            device,
            "splat view",
            size_of::<SplatViewUniform>() as u64,
            uniform,
        );
        let chunk_params = buffer(
            device,
            "splat chunk params",
            CHUNK_PARAMS_STRIDE * u64::from(inputs.chunks.max(1)),
            uniform,
        );
        let instances = buffer(
            device,
            "splat cloud instances",
            size_of::<CloudInstance>() as u64 * u64::from(inputs.instances.max(1)),
            storage,
        );
        let bytes = view_uniform.size() + chunk_params.size() + instances.size();
        Self {
            inputs,
            view_uniform,
            chunk_params,
            instances,
            work,
            _bytes: memory.track(bytes),
        }
    }

    /// The same inputs over other work.
    pub fn with_work(self, work: Arc<BandWork>) -> Self {
        Self { work, ..self }
    }
}

impl BandWork {
    pub fn new(
        device: &Device,
        pipelines: &SplatPipelines,
        memory: &SplatMemory,
        capacity: BandCapacity,
    ) -> Self {
        let storage = BufferUsages::STORAGE | BufferUsages::COPY_DST;
        let uniform = BufferUsages::UNIFORM | BufferUsages::COPY_DST;
        let splats = u64::from(capacity.splats.max(1));
        let tile_count = u64::from(capacity.tiles.x * capacity.tiles.y);

        let projected = buffer(
            device,
            "splat projected",
            splats * PROJECTED_SPLAT_BYTES,
            storage,
        );
        let sources = buffer(
            device,
            "splat sources",
            if capacity.sources { splats * 8 } else { 8 },
            storage,
        );
        let lit_points = buffer(
            device,
            "splat lit points",
            LIT_POINT_BYTES * if capacity.lit_points { splats } else { 1 },
            storage,
        );
        // The frame's per-splat and per-pair arrays share four buffers (`buffer_plan`).
        let shared = SharedBuffers::new(
            device,
            capacity.splats,
            capacity.pairs,
            capacity.pair_key_bits(),
        );
        let counters = buffer(
            device,
            "splat counters",
            COUNTERS_SIZE,
            storage | BufferUsages::INDIRECT | BufferUsages::COPY_SRC,
        );
        let capacities = buffer(device, "splat capacities", 16, uniform);
        // Indexed by the tile (bin) id of the whole view: a few bytes per tile.
        let ranges = buffer(device, "splat tile ranges", tile_count * 8, storage);
        let bin_count = u64::from(bins_for(capacity.tiles).element_product());
        let bin_ranges = buffer(device, "splat bin ranges", bin_count * 8, storage);

        let block_sums = buffer(
            device,
            "splat pair block sums",
            block_sums_bytes(capacity.splats),
            storage,
        );
        let depth_sort = SortBuffers::in_storage(
            device,
            &pipelines.sort,
            shared.depth_sort_storage(),
            capacity.splats.max(1),
            &counters,
            VISIBLE_KEPT_OFFSET,
            Some(KeyRange {
                offset: DEPTH_KEY_RANGE_OFFSET,
                bits: DEPTH_KEY_BITS,
            }),
            SortValues::Given,
        );
        let sort = SortBuffers::in_storage(
            device,
            &pipelines.sort,
            shared.pair_sort_storage(),
            capacity.pairs.max(1),
            &counters,
            PAIRS_KEPT_OFFSET,
            None,
            SortValues::Given,
        );
        let tiles_in_band = capacity.band_tiles().element_product();
        let tile_work = buffer(
            device,
            "splat tile work",
            tile_work_bytes(tiles_in_band),
            storage,
        );
        let tile_chunks = buffer(
            device,
            "splat tile chunks",
            tile_chunk_bytes(tiles_in_band, capacity.chunk_capacity()),
            storage,
        );
        let tile_order = buffer(
            device,
            "splat tile order",
            u64::from(tiles_in_band.max(1)) * 4,
            storage,
        );
        // At most one run per tile.
        let tile_runs = buffer(
            device,
            "splat tile runs",
            u64::from(tiles_in_band.max(1)) * TILE_RUN_BYTES,
            // Copied out by a shadow view that keeps its surface (`shadows::still`).
            storage | BufferUsages::VERTEX | BufferUsages::COPY_SRC,
        );

        let bytes = [
            &projected,
            &sources,
            &lit_points,
            &counters,
            &capacities,
            &ranges,
            &bin_ranges,
            &block_sums,
            &tile_work,
            &tile_order,
            &tile_runs,
            &tile_chunks,
        ]
        .iter()
        .map(|b| b.size())
        .sum::<u64>()
            + shared.bytes()
            + depth_sort.gpu_bytes()
            + sort.gpu_bytes();

        Self {
            capacity,
            projected,
            sources,
            lit_points,
            shared,
            counters,
            capacities,
            ranges,
            bin_ranges,
            block_sums,
            depth_sort,
            sort,
            tile_work,
            tile_order,
            tile_runs,
            tile_chunks,
            _bytes: memory.track(bytes),
        }
    }
}

impl BandBuffers {
    /// Writes this frame's uniforms: the camera for this band's rows and capacities,
    /// the clouds' instances and one `ChunkParams` per preprocess dispatch.
    /// `lod`: the view's cut, and whether this band counts its nodes.
    pub fn write_uniforms(
        &self,
        queue: &wgpu::Queue,
        (camera, cells): (&SplatCamera, Option<&LayerCells>),
        (origin, size): (UVec2, UVec2),
        instances: &[CloudInstance],
        dispatches: &[Dispatch<'_>],
        lod: Option<(LodFrame, bool)>,
    ) {
        let capacity = &self.work.capacity;
        let band = BandUniform {
            pair_capacity: capacity.pairs,
            splat_capacity: capacity.splats,
            first_row: capacity.rows.start,
            end_row: capacity.rows.end,
        };
        let mut uniform = camera.uniform(origin, size, band);
        // A layer of several cells (`render::shadows::cells`) replaces the view's own.
        if let Some(cells) = cells {
            cells.apply(&mut uniform);
        }
        queue.write_buffer(&self.view_uniform, 0, bytemuck::bytes_of(&uniform));
        // The same for every view over this work.
        queue.write_buffer(
            &self.work.capacities,
            0,
            bytemuck::bytes_of(&[
                capacity.pairs,
                capacity.splats,
                capacity.chunk_capacity(),
                0,
            ]),
        );
        queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(instances));
        for (slot, dispatch) in dispatches.iter().enumerate() {
            let params = ChunkParams {
                splat_count: dispatch.chunk.count,
                sh_degree: dispatch.splats.sh_degree,
                sh_stride: dispatch.splats.sh_stride,
                grid_width: PreprocessPass::grid_width(dispatch.threads()),
                first_instance: dispatch.first_instance,
                instance_count: dispatch.instance_count,
                sh_words: dispatch.splats.sh_words,
                sh_half: u32::from(dispatch.splats.storage == SplatStorage::HalfSh),
                first_splat: dispatch.first_splat(),
                lod_records: dispatch.lod.as_ref().map_or(0, |lod| lod.layout),
                lod_feedback: u32::from(lod.is_some_and(|(_, counts)| counts)),
                lod_threshold: lod.map_or(0.0, |(frame, _)| frame.threshold),
                lod_half_octaves: lod.map_or(0.0, |(frame, _)| frame.half_octaves),
                run_first: dispatch.run.start,
                run_count: dispatch.run.len() as u32,
                _pad: 0,
            };
            let offset = slot as u64 * CHUNK_PARAMS_STRIDE;
            queue.write_buffer(&self.chunk_params, offset, bytemuck::bytes_of(&params));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_key_bits_cover_every_bin() {
        let bits = |tiles_x, tiles_y| {
            BandCapacity {
                splats: 1,
                pairs: 1,
                chunks: 1,
                instances: 1,
                tiles: UVec2::new(tiles_x, tiles_y),
                rows: 0..tiles_y,
                sources: false,
                lit_points: false,
                tile_chunks: 0,
            }
            .pair_key_bits()
        };
        // Bins are 2×2 tiles: 1, 1,200, 8,160 and 8,192 bins.
        assert_eq!(bits(1, 1), 1);
        assert_eq!(bits(80, 60), 11);
        assert_eq!(bits(240, 135), 13);
        assert_eq!(bits(256, 128), 13);
    }

    #[test]
    fn the_same_work_ignores_only_the_views_own_inputs() {
        let work = BandCapacity {
            splats: 1_000,
            pairs: 3_000,
            chunks: 2,
            instances: 4,
            tiles: UVec2::new(64, 64),
            rows: 0..64,
            sources: false,
            lit_points: false,
            tile_chunks: 16,
        };
        let more_clouds = BandCapacity {
            chunks: 9,
            instances: 30,
            ..work.clone()
        };
        assert!(work.same_work(&more_clouds));
        let inputs = BandInputs {
            chunks: work.chunks,
            instances: work.instances,
        };
        assert!(
            !inputs.hold(&more_clouds),
            "a view's inputs still grow for them"
        );
        for other in [
            BandCapacity {
                pairs: 2_999,
                ..work.clone()
            },
            BandCapacity {
                splats: 1_001,
                ..work.clone()
            },
            BandCapacity {
                rows: 0..32,
                ..work.clone()
            },
            BandCapacity {
                tile_chunks: 0,
                ..work.clone()
            },
        ] {
            assert!(!work.same_work(&other), "{other:?}");
        }
    }
}
