//! tile order: the band's tiles, busiest first, so that the tile render's longest
//! workgroups start first rather than run alone at the end. The tile split files each
//! tile in a work class by its pair count; this pass turns those classes into one
//! order, in a single dispatch instead of a sort.

use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::common::{ShaderChecks, WORK_CLASSES, bind_group, grid_for, storage, uniform};
use super::library::wgsl_file;

/// Bytes of the work classes' counts at the start of the tile work buffer, cleared
/// every frame.
pub const WORK_COUNTS_BYTES: u64 = WORK_CLASSES as u64 * 4;

/// Bytes of the tile work buffer for a band of `band_tiles`: the class counts, then a
/// place per tile.
pub fn tile_work_bytes(band_tiles: u32) -> u64 {
    WORK_COUNTS_BYTES + u64::from(band_tiles) * 4
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

    /// From the tiles' `ranges` and the split's `tile_work` into `tile_order`, and the
    /// drawn tiles' count, grid and draw into the band's `counters`.
    pub fn bind_group(
        &self,
        device: &Device,
        view_uniform: &Buffer,
        ranges: &Buffer,
        tile_work: &Buffer,
        (tile_order, counters): (&Buffer, &Buffer),
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
