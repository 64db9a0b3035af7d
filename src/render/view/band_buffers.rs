//! The working buffers of one band of a camera view (see `bands`), kept across
//! frames and rebuilt when the band needs more.

use std::ops::Range;

use bevy::math::UVec2;
use wgpu::{Buffer, BufferUsages, Device};

use super::dispatch::Dispatch;
use super::uniform::{BandUniform, SplatCamera, SplatViewUniform};
use crate::asset::SplatStorage;
use crate::render::memory::{GpuBytes, SplatMemory};
use crate::render::passes::SplatPipelines;
use crate::render::passes::common::buffer;
use crate::render::passes::depth_sort::DEPTH_KEY_BITS;
use crate::render::passes::indirect::{
    COUNTERS_SIZE, DEPTH_KEY_RANGE_OFFSET, PAIRS_KEPT_OFFSET, PAIRS_NEEDED_OFFSET,
    VISIBLE_KEPT_OFFSET,
};
use crate::render::passes::preprocess::{
    CHUNK_PARAMS_STRIDE, ChunkParams, CloudInstance, PROJECTED_SPLAT_BYTES, PreprocessPass,
};
use crate::render::passes::radix_sort::{
    KeyRange, STORAGE_OFFSET_ALIGNMENT, SortBuffers, SortStorage, SortValues,
};
use crate::render::passes::scan::ScanBuffers;
use crate::render::passes::tile_order::tile_work_bytes;
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

    /// Whether buffers built for `self` can serve a frame that needs `need`.
    pub fn holds(&self, need: &BandCapacity) -> bool {
        self.splats >= need.splats
            && self.pairs >= need.pairs
            && self.chunks >= need.chunks
            && self.instances >= need.instances
            && self.tiles == need.tiles
            && self.rows == need.rows
            && self.sources == need.sources
    }
}

pub struct BandBuffers {
    pub capacity: BandCapacity,
    pub view_uniform: Buffer,
    pub chunk_params: Buffer,
    pub instances: Buffer,
    pub projected: Buffer,
    /// Each projected splat's instance and asset index, for picks (see
    /// `BandCapacity::sources`); one element otherwise.
    pub sources: Buffer,
    /// The tile counts in depth order, scanned in place into first pair slots (the
    /// depth sort's value scratch before, the tile sort's after).
    pub tile_offsets: Buffer,
    pub counters: Buffer,
    /// Pair and splat capacities for the indirect kernels (a uniform).
    pub capacities: Buffer,
    /// Each tile's run in its list (`tile_split`).
    pub ranges: Buffer,
    /// Each bin's run of the sorted pairs, cleared every frame.
    pub bin_ranges: Buffer,
    pub scan: ScanBuffers,
    /// Each visible splat's tile count by slot, for the gather in depth order (at the
    /// start of the buffer whose upper part holds the depth sort's result, and which
    /// the tile sort uses as key scratch after duplicate).
    pub tile_counts: Buffer,
    /// Visible splats by depth: keys are depths, values their slots (the result at
    /// an offset in `tile_counts`' buffer: see `SortBuffers::value_binding`).
    pub depth_sort: SortBuffers,
    /// (splat, bin) pairs by bin; its four buffers hold the tiles' lists after the
    /// split.
    pub sort: SortBuffers,
    /// The work classes' counts and each tile's place in its class (`tile_split`).
    pub tile_work: Buffer,
    /// The band's tiles, busiest first: the tile render's launch order.
    pub tile_order: Buffer,
    _bytes: GpuBytes,
}

impl BandBuffers {
    pub fn new(
        device: &Device,
        pipelines: &SplatPipelines,
        memory: &SplatMemory,
        capacity: BandCapacity,
    ) -> Self {
        let storage = BufferUsages::STORAGE | BufferUsages::COPY_DST;
        let sort_usage = storage | BufferUsages::COPY_SRC;
        let uniform = BufferUsages::UNIFORM | BufferUsages::COPY_DST;
        let splats = u64::from(capacity.splats.max(1));
        let tile_count = u64::from(capacity.tiles.x * capacity.tiles.y);

        let view_uniform = buffer(
            device,
            "splat view",
            size_of::<SplatViewUniform>() as u64,
            uniform,
        );
        let chunk_params = buffer(
            device,
            "splat chunk params",
            CHUNK_PARAMS_STRIDE * u64::from(capacity.chunks.max(1)),
            uniform,
        );
        let instances = buffer(
            device,
            "splat cloud instances",
            size_of::<CloudInstance>() as u64 * u64::from(capacity.instances.max(1)),
            storage,
        );
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
        // The frame's per-splat and per-pair arrays share four buffers where their
        // lives do not overlap (checked in the order the frame runs them: preprocess,
        // depth sort, gather, scan, duplicate, tile sort, tile range, tile split):
        //   pair counts by slot (preprocess → gather), and above them the slots by
        //     depth (depth sort → duplicate)            then  the tile sort's key scratch
        //   depth keys (preprocess → depth sort)        then  the pairs' keys
        //   depth sort's value scratch                  then  tile offsets (gather →
        //                                                     duplicate), then the tile
        //                                                     sort's value scratch
        //   depth sort's key scratch (its sorted keys)  then  the pairs' values
        // and the tile sort's four buffers then hold the four tile lists (see
        // `tile_split`). No dispatch writes a buffer that it also binds another way.
        let pairs = u64::from(capacity.pairs.max(1));
        let pair_or_splat = pairs.max(splats) * 4;
        let shared = |label: &str, bytes: u64| buffer(device, label, bytes, sort_usage);
        let by_depth_offset = (splats * 4).next_multiple_of(STORAGE_OFFSET_ALIGNMENT);
        let counts_and_order = shared(
            "splat tile counts and slots by depth, then pair key scratch",
            (pairs * 4).max(by_depth_offset + splats * 4),
        );
        let depth_keys = shared("splat depth keys, then pair keys", pair_or_splat);
        let pair_value_scratch = shared(
            "splat depth value scratch, then tile offsets, then pair value scratch",
            pair_or_splat,
        );
        let pair_values = shared("splat depth key scratch, then pair values", pair_or_splat);
        let tile_offsets = pair_value_scratch.clone();
        let tile_counts = counts_and_order.clone();
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

        let scan = ScanBuffers::new(
            device,
            &pipelines.scan,
            capacity.splats.max(1),
            &tile_offsets,
            &counters,
            VISIBLE_KEPT_OFFSET,
            &counters,
            PAIRS_NEEDED_OFFSET,
        );
        let depth_sort = SortBuffers::in_storage(
            device,
            &pipelines.sort,
            SortStorage {
                keys: [depth_keys.clone(), pair_values.clone()],
                values: [pair_value_scratch.clone(), counts_and_order.clone()],
                values_offset: [0, by_depth_offset],
            },
            capacity.splats.max(1),
            &counters,
            VISIBLE_KEPT_OFFSET,
            Some(KeyRange {
                offset: DEPTH_KEY_RANGE_OFFSET,
                bits: DEPTH_KEY_BITS,
            }),
            SortValues::InputIndex,
        );
        let sort = SortBuffers::in_storage(
            device,
            &pipelines.sort,
            SortStorage {
                keys: [depth_keys.clone(), counts_and_order.clone()],
                values: [pair_values.clone(), pair_value_scratch.clone()],
                values_offset: [0; 2],
            },
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
        let tile_order = buffer(
            device,
            "splat tile order",
            u64::from(tiles_in_band.max(1)) * 4,
            storage,
        );

        let bytes = [
            &view_uniform,
            &chunk_params,
            &instances,
            &projected,
            &sources,
            &counts_and_order,
            &depth_keys,
            &pair_value_scratch,
            &pair_values,
            &counters,
            &capacities,
            &ranges,
            &bin_ranges,
            &tile_work,
            &tile_order,
        ]
        .iter()
        .map(|b| b.size())
        .sum::<u64>()
            + depth_sort.gpu_bytes()
            + sort.gpu_bytes()
            + scan.gpu_bytes();

        Self {
            capacity,
            view_uniform,
            chunk_params,
            instances,
            projected,
            sources,
            tile_offsets,
            tile_counts,
            counters,
            capacities,
            ranges,
            bin_ranges,
            scan,
            depth_sort,
            sort,
            tile_work,
            tile_order,
            _bytes: memory.track(bytes),
        }
    }
}

impl BandBuffers {
    /// Writes this frame's uniforms: the camera for this band's rows and capacities,
    /// the clouds' instances and one `ChunkParams` per preprocess dispatch.
    pub fn write_uniforms(
        &self,
        queue: &wgpu::Queue,
        camera: &SplatCamera,
        origin: UVec2,
        size: UVec2,
        instances: &[CloudInstance],
        dispatches: &[Dispatch<'_>],
    ) {
        let capacity = &self.capacity;
        let band = BandUniform {
            pair_capacity: capacity.pairs,
            splat_capacity: capacity.splats,
            first_row: capacity.rows.start,
            end_row: capacity.rows.end,
        };
        queue.write_buffer(
            &self.view_uniform,
            0,
            bytemuck::bytes_of(&camera.uniform(origin, size, band)),
        );
        queue.write_buffer(
            &self.capacities,
            0,
            bytemuck::bytes_of(&[capacity.pairs, capacity.splats, 0, 0]),
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
                first_splat: dispatch.chunk.first,
                _pad: [0; 3],
            };
            let offset = slot as u64 * CHUNK_PARAMS_STRIDE;
            queue.write_buffer(&self.chunk_params, offset, bytemuck::bytes_of(&params));
        }
    }
}
