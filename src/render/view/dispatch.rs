//! One preprocess dispatch: what the band's uniforms describe and its bind groups bind.

use bevy::asset::AssetId;
use bevy::render::render_asset::RenderAssets;

use crate::asset::GaussianSplats;
use crate::render::gpu_cloud::{GpuChunk, GpuSplats};
use crate::shader::SplatShaderId;

/// A dispatch as planned before its bind groups are made: its asset and chunk named,
/// not borrowed, so the plan can be kept on the view between systems.
#[derive(Clone, Copy, Debug)]
pub struct DispatchPlan {
    pub asset: AssetId<GaussianSplats>,
    /// The chunk's index in the asset's `GpuSplats::chunks`.
    pub chunk: usize,
    pub first_instance: u32,
    pub instance_count: u32,
    pub shader: Option<SplatShaderId>,
}

impl DispatchPlan {
    /// The dispatch over the asset's GPU data; `None` if the asset is gone (the plan
    /// and the bind groups are made in one frame, after the assets are prepared).
    pub fn resolve<'a>(&self, assets: &'a RenderAssets<GpuSplats>) -> Option<Dispatch<'a>> {
        let splats = assets.get(self.asset)?;
        Some(Dispatch {
            chunk: splats.chunks.get(self.chunk)?,
            splats,
            first_instance: self.first_instance,
            instance_count: self.instance_count,
            shader: self.shader,
        })
    }
}

/// One preprocess dispatch: a chunk of an asset for a run of instances of it.
pub struct Dispatch<'a> {
    pub chunk: &'a GpuChunk,
    pub splats: &'a GpuSplats,
    pub first_instance: u32,
    pub instance_count: u32,
    /// The instances' `SplatShader`, which picks the preprocess variant.
    pub shader: Option<SplatShaderId>,
}

impl Dispatch<'_> {
    pub fn threads(&self) -> u32 {
        self.chunk.count * self.instance_count
    }
}
