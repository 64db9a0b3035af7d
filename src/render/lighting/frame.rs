//! What the light pass records for one camera this frame: a component on the view,
//! made by `prepare` and recorded after each band's preprocess.

use bevy::ecs::component::Component;
use wgpu::{BindGroup, Buffer, ComputePass, ComputePipeline};

use crate::render::passes::indirect::VISIBLE_DISPATCH_OFFSET;

/// The light pass of one camera view this frame (its clouds receive light).
#[derive(Component)]
pub struct ViewLightPass {
    /// For the camera's `ShadowFilteringMethod`.
    pub pipeline: ComputePipeline,
    /// Bevy's view bindings (group 0) and their dynamic offsets: the view uniform's,
    /// then the lights'.
    pub view_bindings: BindGroup,
    pub view_offsets: [u32; 2],
    /// Per band, top to bottom: its counters, projected splats, `LitPoint`s and the
    /// pass's parameters (group 1).
    pub bands: Vec<BindGroup>,
}

impl ViewLightPass {
    /// Records the pass over band `band`'s kept splats (the indirect arguments the
    /// preprocess's visible count made, in `counters`).
    pub fn encode(&self, pass: &mut ComputePass<'_>, band: usize, counters: &Buffer) {
        let Some(group) = self.bands.get(band) else {
            return;
        };
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.view_bindings, &self.view_offsets);
        pass.set_bind_group(1, group, &[]);
        pass.dispatch_workgroups_indirect(counters, VISIBLE_DISPATCH_OFFSET);
    }
}
