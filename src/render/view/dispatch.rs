//! One preprocess dispatch: what the band's uniforms describe and its bind groups bind.

use crate::render::gpu_cloud::{GpuChunk, GpuSplats};
use crate::shader::SplatShaderId;

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
