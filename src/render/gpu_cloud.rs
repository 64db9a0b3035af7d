//! The splat asset on the GPU: uploaded once, freed when the asset is dropped.

use bevy::asset::AssetId;
use bevy::ecs::system::SystemParamItem;
use bevy::ecs::system::lifetimeless::SRes;
use bevy::render::render_asset::{PrepareAssetError, RenderAsset};
use bevy::render::renderer::RenderDevice;
use wgpu::util::DeviceExt;

use super::compact::{COMPACT_GEOMETRY_WORDS, compact_sh_words, encode_compact};
use super::limits::SplatGpuLimits;
use super::memory::{GpuBytes, SplatMemory};
use crate::asset::{GaussianSplats, SplatGeometry, SplatStorage};

/// One run of splats small enough for a single storage binding.
pub struct GpuChunk {
    pub geometry: wgpu::Buffer,
    pub sh: wgpu::Buffer,
    pub count: u32,
    /// Index of the chunk's first splat in the asset.
    pub first: u32,
}

/// A [`GaussianSplats`] asset uploaded to GPU storage buffers.
pub struct GpuSplats {
    pub chunks: Vec<GpuChunk>,
    pub sh_degree: u32,
    /// SH floats per splat.
    pub sh_stride: u32,
    /// 32-bit words of SH data per splat on the GPU.
    pub sh_words: u32,
    /// How geometry and SH are laid out (f32, f16 SH, or `render::compact`).
    pub storage: SplatStorage,
    /// The asset was trained antialiased: its clouds draw so by default.
    pub antialiased: bool,
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

/// 32-bit words of GPU SH data per splat: one per float, one per f16 pair, or one per
/// four bytes of the compact layout past DC, each splat starting on a whole word.
pub fn sh_words(sh_stride: usize, storage: SplatStorage) -> usize {
    match storage {
        SplatStorage::Full => sh_stride,
        SplatStorage::HalfSh => sh_stride.div_ceil(2),
        SplatStorage::Compact => compact_sh_words(sh_stride),
    }
}

/// Bytes of GPU geometry per splat.
pub fn geometry_bytes(storage: SplatStorage) -> usize {
    match storage {
        SplatStorage::Full | SplatStorage::HalfSh => size_of::<SplatGeometry>(),
        SplatStorage::Compact => COMPACT_GEOMETRY_WORDS * size_of::<u32>(),
    }
}

/// The most splats one chunk holds so that neither of its buffers passes `max_binding`.
pub fn splats_per_chunk(storage: SplatStorage, sh_words: usize, max_binding: u64) -> usize {
    let per_splat = geometry_bytes(storage).max(sh_words * size_of::<u32>()) as u64;
    // Whole splats only, and keep every chunk within u32 splat indices.
    (max_binding / per_splat).clamp(1, u64::from(u32::MAX / 2)) as usize
}

/// Each splat's `stride` SH floats as f16 pairs, the splat starting on a whole word
/// (an odd count leaves the last half word zero).
fn pack_half(sh: &[f32], stride: usize) -> Vec<u32> {
    let half = |v: f32| u32::from(half::f16::from_f32(v).to_bits());
    sh.chunks_exact(stride.max(1))
        .flat_map(|splat| {
            splat.chunks(2).map(move |pair| {
                let high = pair.get(1).map_or(0, |&v| half(v));
                half(pair[0]) | (high << 16)
            })
        })
        .collect()
}

impl RenderAsset for GpuSplats {
    type SourceAsset = GaussianSplats;
    type Param = (SRes<RenderDevice>, SRes<SplatMemory>, SRes<SplatGpuLimits>);

    fn byte_len(splats: &GaussianSplats) -> Option<usize> {
        let storage = splats.storage();
        let words = sh_words(splats.sh_stride(), storage);
        Some(splats.len() * (geometry_bytes(storage) + words * size_of::<u32>()))
    }

    fn prepare_asset(
        splats: GaussianSplats,
        _id: AssetId<GaussianSplats>,
        (device, memory, limits): &mut SystemParamItem<Self::Param>,
        _previous: Option<&Self>,
    ) -> Result<Self, PrepareAssetError<GaussianSplats>> {
        let max_binding = limits.max_storage_binding(device);
        let stride = splats.sh_stride();
        let storage = splats.storage();
        let words = sh_words(stride, storage);
        let per_chunk = splats_per_chunk(storage, words, max_binding);
        let device = device.wgpu_device();
        let mut chunks = Vec::new();
        let mut bytes = 0;
        for (index, geometry) in splats.geometry().chunks(per_chunk).enumerate() {
            let first = index * per_chunk;
            let sh = &splats.sh()[first * stride..(first + geometry.len()) * stride];
            let (packed_geometry, packed_sh) = match storage {
                SplatStorage::Full => (Vec::new(), Vec::new()),
                SplatStorage::HalfSh => (Vec::new(), pack_half(sh, stride)),
                SplatStorage::Compact => encode_compact(geometry, sh, stride),
            };
            let geometry_data: &[u8] = match storage {
                SplatStorage::Compact => bytemuck::cast_slice(&packed_geometry),
                _ => bytemuck::cast_slice(geometry),
            };
            let mut sh_bytes: &[u8] = match storage {
                SplatStorage::Full => bytemuck::cast_slice(sh),
                _ => bytemuck::cast_slice(&packed_sh),
            };
            // A binding of zero bytes is invalid: an SH-less chunk still gets 4 bytes.
            if sh_bytes.is_empty() {
                sh_bytes = &[0; 4];
            }
            let chunk = GpuChunk {
                geometry: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("splat geometry"),
                    contents: geometry_data,
                    usage: wgpu::BufferUsages::STORAGE,
                }),
                sh: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("splat sh"),
                    contents: sh_bytes,
                    usage: wgpu::BufferUsages::STORAGE,
                }),
                count: geometry.len() as u32,
                first: first as u32,
            };
            bytes += chunk.geometry.size() + chunk.sh.size();
            chunks.push(chunk);
        }
        Ok(Self {
            chunks,
            sh_degree: u32::from(splats.sh_degree()),
            sh_stride: stride as u32,
            sh_words: words as u32,
            storage,
            antialiased: splats.antialiased(),
            _bytes: memory.track(bytes),
        })
    }
}
