//! tile order: the band's tiles sorted by their pair counts, largest first, so that
//! the tile render's longest workgroups start first rather than run alone at the end.

use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::common::{
    bind_group, compute_pipeline, grid_for, layout, shader_module, storage, uniform,
};

/// Bits of a tile's work key: its pair count in steps of 16, saturating.
pub const TILE_ORDER_KEY_BITS: u32 = 16;

pub struct TileOrderPass {
    layout: BindGroupLayout,
    keys: ComputePipeline,
}

impl TileOrderPass {
    pub fn new(device: &Device) -> Self {
        let layout = layout(
            device,
            "splat tile order",
            &[
                uniform(0, false),
                storage(1, true),
                storage(2, false),
                storage(3, false),
            ],
        );
        let module = shader_module(device, "splat tile order", include_str!("tile_order.wgsl"));
        let keys = compute_pipeline(
            device,
            "splat tile order",
            &layout,
            &module,
            "tile_work_keys",
        );
        Self { layout, keys }
    }

    /// Keys from `ranges` into the sort's input `keys`/`values`.
    pub fn bind_group(
        &self,
        device: &Device,
        view_uniform: &Buffer,
        ranges: &Buffer,
        keys: &Buffer,
        values: &Buffer,
    ) -> BindGroup {
        bind_group(
            device,
            "splat tile order",
            &self.layout,
            &[
                view_uniform.as_entire_binding(),
                ranges.as_entire_binding(),
                keys.as_entire_binding(),
                values.as_entire_binding(),
            ],
        )
    }

    /// One thread per tile of the band.
    pub fn encode_keys(&self, pass: &mut ComputePass<'_>, bind_group: &BindGroup, tiles: u32) {
        let (x, y) = grid_for(tiles);
        if x == 0 {
            return;
        }
        pass.set_pipeline(&self.keys);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(x, y, 1);
    }
}
