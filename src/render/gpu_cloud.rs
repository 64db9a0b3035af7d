//! The splat asset on the GPU: uploaded once, freed when the asset is dropped.

use bevy::asset::AssetId;
use bevy::ecs::system::SystemParamItem;
use bevy::ecs::system::lifetimeless::SRes;
use bevy::render::render_asset::{PrepareAssetError, RenderAsset};
use bevy::render::renderer::RenderDevice;
use wgpu::util::DeviceExt;

use super::memory::{GpuBytes, SplatMemory};
use crate::asset::{GaussianSplats, SplatGeometry};

/// One run of splats small enough for a single storage binding.
pub struct GpuChunk {
    pub geometry: wgpu::Buffer,
    pub sh: wgpu::Buffer,
    pub count: u32,
}

/// A [`GaussianSplats`] asset uploaded to GPU storage buffers.
pub struct GpuSplats {
    pub chunks: Vec<GpuChunk>,
    pub sh_degree: u32,
    pub sh_stride: u32,
    _bytes: GpuBytes,
}

impl GpuSplats {
    pub fn len(&self) -> u32 {
        self.chunks.iter().map(|chunk| chunk.count).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The most splats one chunk holds so that neither of its buffers passes `max_binding`.
pub fn splats_per_chunk(sh_stride: usize, max_binding: u64) -> usize {
    let per_splat = size_of::<SplatGeometry>().max(sh_stride * size_of::<f32>()) as u64;
    // Whole splats only, and keep every chunk within u32 splat indices.
    (max_binding / per_splat).clamp(1, u64::from(u32::MAX / 2)) as usize
}

impl RenderAsset for GpuSplats {
    type SourceAsset = GaussianSplats;
    type Param = (SRes<RenderDevice>, SRes<SplatMemory>);

    fn byte_len(splats: &GaussianSplats) -> Option<usize> {
        Some(size_of_val(splats.geometry()) + size_of_val(splats.sh()))
    }

    fn prepare_asset(
        splats: GaussianSplats,
        _id: AssetId<GaussianSplats>,
        (device, memory): &mut SystemParamItem<Self::Param>,
        _previous: Option<&Self>,
    ) -> Result<Self, PrepareAssetError<GaussianSplats>> {
        let limits = device.limits();
        let max_binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        let stride = splats.sh_stride();
        let per_chunk = splats_per_chunk(stride, max_binding);
        let device = device.wgpu_device();
        let mut chunks = Vec::new();
        let mut bytes = 0;
        for (index, geometry) in splats.geometry().chunks(per_chunk).enumerate() {
            let first = index * per_chunk;
            let sh = &splats.sh()[first * stride..(first + geometry.len()) * stride];
            // A binding of zero bytes is invalid: an SH-less chunk still gets 4 bytes.
            let sh_bytes: &[u8] = if sh.is_empty() {
                &[0; 4]
            } else {
                bytemuck::cast_slice(sh)
            };
            let chunk = GpuChunk {
                geometry: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("splat geometry"),
                    contents: bytemuck::cast_slice(geometry),
                    usage: wgpu::BufferUsages::STORAGE,
                }),
                sh: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("splat sh"),
                    contents: sh_bytes,
                    usage: wgpu::BufferUsages::STORAGE,
                }),
                count: geometry.len() as u32,
            };
            bytes += chunk.geometry.size() + chunk.sh.size();
            chunks.push(chunk);
        }
        Ok(Self {
            chunks,
            sh_degree: u32::from(splats.sh_degree()),
            sh_stride: stride as u32,
            _bytes: memory.track(bytes),
        })
    }
}
