//! The splat asset on the GPU: uploaded once, freed when the asset is dropped.

use bevy::asset::AssetId;
use bevy::ecs::system::SystemParamItem;
use bevy::ecs::system::lifetimeless::SRes;
use bevy::render::render_asset::{PrepareAssetError, RenderAsset};
use bevy::render::renderer::RenderDevice;
use wgpu::util::DeviceExt;

use super::compact::{
    COMPACT_GEOMETRY_WORDS, compact_geometry_words, compact_sh_bytes, compact_sh_words,
    encode_compact,
};
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
    /// 32-bit words of SH data per splat on the GPU in the full layouts (the compact
    /// one packs its SH bytes end to end: 0 there).
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

/// 32-bit words of GPU SH data per splat in the full layouts: one per float, or one
/// per f16 pair, each splat starting on a whole word. 0 for the compact layout, whose
/// splats' SH bytes run end to end (`render::compact`).
pub fn sh_words(sh_stride: usize, storage: SplatStorage) -> usize {
    match storage {
        SplatStorage::Full => sh_stride,
        SplatStorage::HalfSh => sh_stride.div_ceil(2),
        SplatStorage::Compact => 0,
    }
}

/// Bytes of GPU geometry and of GPU SH data for `count` splats of `sh_stride` SH floats.
pub fn chunk_bytes(count: usize, sh_stride: usize, storage: SplatStorage) -> (usize, usize) {
    match storage {
        SplatStorage::Full | SplatStorage::HalfSh => (
            count * size_of::<SplatGeometry>(),
            count * sh_words(sh_stride, storage) * size_of::<u32>(),
        ),
        SplatStorage::Compact => (
            compact_geometry_words(count) * size_of::<u32>(),
            compact_sh_words(count, sh_stride) * size_of::<u32>(),
        ),
    }
}

/// The most splats one chunk holds so that neither of its buffers passes `max_binding`.
pub fn splats_per_chunk(storage: SplatStorage, sh_stride: usize, max_binding: u64) -> usize {
    let per_splat = match storage {
        SplatStorage::Full | SplatStorage::HalfSh => {
            size_of::<SplatGeometry>().max(sh_words(sh_stride, storage) * size_of::<u32>())
        }
        // One more word of geometry for the position boxes (six words per 256
        // splats), and the SH bytes rounded up to whole words.
        SplatStorage::Compact => {
            ((COMPACT_GEOMETRY_WORDS + 1) * size_of::<u32>()).max(compact_sh_bytes(sh_stride) + 1)
        }
    } as u64;
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
        let (geometry, sh) = chunk_bytes(splats.len(), splats.sh_stride(), splats.storage());
        Some(geometry + sh)
    }

    fn prepare_asset(
        splats: GaussianSplats,
        _id: AssetId<GaussianSplats>,
        (device, memory, limits): &mut SystemParamItem<Self::Param>,
        _previous: Option<&Self>,
    ) -> Result<Self, PrepareAssetError<GaussianSplats>> {
        let max_binding = limits.max_storage_binding(device);
        Ok(Self::upload(
            &splats,
            device.wgpu_device(),
            memory,
            max_binding,
        ))
    }
}

impl GpuSplats {
    /// `splats` in storage buffers of at most `max_binding` bytes each (the interior
    /// nodes of a level-of-detail tree are uploaded this way too).
    pub fn upload(
        splats: &GaussianSplats,
        device: &wgpu::Device,
        memory: &SplatMemory,
        max_binding: u64,
    ) -> Self {
        let stride = splats.sh_stride();
        let storage = splats.storage();
        let words = sh_words(stride, storage);
        let per_chunk = splats_per_chunk(storage, stride, max_binding);
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
        Self {
            chunks,
            sh_degree: u32::from(splats.sh_degree()),
            sh_stride: stride as u32,
            sh_words: words as u32,
            storage,
            antialiased: splats.antialiased(),
            _bytes: memory.track(bytes),
        }
    }
}
