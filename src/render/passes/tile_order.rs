//! tile order: the band's tiles, busiest first, so that the tile render's longest
//! workgroups start first rather than run alone at the end. The tile split files each
//! tile in a work class by its pair count; this pass turns those classes into one
//! order, in a single dispatch instead of a sort.

use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::common::{
    MAX_GROUPS_PER_DIMENSION, ShaderChecks, TILE_CHUNK_PAIRS, TILE_SIZE, WORK_CLASSES, bind_group,
    grid_for, storage, uniform,
};
use super::library::wgsl_file;

/// Bytes of the work classes' counts at the start of the tile work buffer, cleared
/// every frame.
pub const WORK_COUNTS_BYTES: u64 = WORK_CLASSES as u64 * 4;

/// Bytes of the tile work buffer for a band of `band_tiles`: the class counts, then a
/// place per tile.
pub fn tile_work_bytes(band_tiles: u32) -> u64 {
    WORK_COUNTS_BYTES + u64::from(band_tiles) * 4
}

/// Tile chunks a band of `pairs` pair capacity keeps room for (a view that cuts long
/// tile lists: shadow views). A tile's list holds at most its bin's pairs, so the
/// four tiles' lists of all bins hold at most 4 × `pairs`, and a list of n ≥
/// `TILE_CHUNK_PAIRS` makes fewer than 2n / `TILE_CHUNK_PAIRS` chunks; room for half
/// of that bound, since every bin's tiles are seldom all long, and at most one grid
/// row of workgroups (so that every workgroup of the chunks' grid has a chunk). A tile
/// whose chunks do not fit is drawn whole, which is right, only slower.
pub fn tile_chunk_capacity(pairs: u32) -> u32 {
    let room = 4 * u64::from(pairs) / u64::from(TILE_CHUNK_PAIRS);
    room.min(u64::from(MAX_GROUPS_PER_DIMENSION)) as u32
}

/// Bytes of a band's tile chunks (`common.wgsl`) for `band_tiles` and room for
/// `capacity` chunks: a word per tile, two per chunk and one per pixel of a chunk's
/// tile; none without room for a chunk (nothing reads them then).
pub fn tile_chunk_bytes(band_tiles: u32, capacity: u32) -> u64 {
    if capacity == 0 {
        return 0;
    }
    let per_chunk = 2 + u64::from(TILE_SIZE * TILE_SIZE);
    4 * (u64::from(band_tiles) + per_chunk * u64::from(capacity))
}

pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("tile_order.wgsl"),
    checks: ShaderChecks::All,
};

pub struct TileOrderPass {
    layout: BindGroupLayout,
    places: ComputePipeline,
}

impl TileOrderPass {
    pub fn new(builder: &mut dyn PipelineBuilder) -> Option<Self> {
        let layout = BindGroupLayoutDescriptor::new(
            "splat tile order",
            &[
                uniform(0, false),
                storage(1, true),
                storage(2, true),
                storage(3, false),
                storage(4, false),
                storage(5, false),
                uniform(6, false),
                storage(7, false),
            ],
        );
        let places = builder.kernel(&Kernel {
            label: "splat tile order",
            layout: &layout,
            shader: SHADER,
            entry_point: "tile_order_places",
            defs: &[],
        })?;
        Some(Self {
            layout: builder.layout(&layout),
            places,
        })
    }

    /// From the tiles' `ranges` and the split's `tile_work` into `tile_order`, the
    /// drawn tiles' count and grid and the draw over their runs into the band's
    /// `counters`, the runs into `tile_runs` (`TILE_RUN_BYTES` per band tile), and the
    /// long tiles' chunks into `tile_chunks` (within the chunk capacity of
    /// `capacities`).
    pub fn bind_group(
        &self,
        device: &Device,
        view_uniform: &Buffer,
        (ranges, tile_work): (&Buffer, &Buffer),
        (tile_order, tile_runs, counters): (&Buffer, &Buffer, &Buffer),
        (tile_chunks, capacities): (&Buffer, &Buffer),
    ) -> BindGroup {
        bind_group(
            device,
            "splat tile order",
            &self.layout,
            &[
                view_uniform.as_entire_binding(),
                ranges.as_entire_binding(),
                tile_work.as_entire_binding(),
                tile_order.as_entire_binding(),
                counters.as_entire_binding(),
                tile_chunks.as_entire_binding(),
                capacities.as_entire_binding(),
                tile_runs.as_entire_binding(),
            ],
        )
    }

    /// One thread per tile of the band.
    pub fn encode(&self, pass: &mut ComputePass<'_>, bind_group: &BindGroup, tiles: u32) {
        let (x, y) = grid_for(tiles);
        if x == 0 {
            return;
        }
        pass.set_pipeline(&self.places);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(x, y, 1);
    }
}
