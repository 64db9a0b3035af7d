//! Streamed clouds on the GPU: each resident chunk of a streamed asset's file as a
//! page (its nodes as splats in the asset's layout, and their records for the cut),
//! uploaded when the main world's page table takes it in and freed when it is
//! evicted (`crate::streaming`). The first chunk's nodes are the asset's own splats,
//! already on the GPU: its page holds only records.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::gpu_cloud::{GpuChunk, GpuSplats};
use super::memory::GpuBytes;
use super::passes::preprocess::LOD_PAGE_RECORD_BYTES;
#[cfg(feature = "rad")]
use {
    super::limits::SplatGpuLimits,
    super::memory::SplatMemory,
    crate::asset::GaussianSplats,
    crate::streaming::{SplatStreams, StreamedPage},
    bevy::asset::AssetId,
    bevy::ecs::prelude::*,
    bevy::render::Extract,
    bevy::render::render_asset::RenderAssets,
    bevy::render::renderer::{RenderDevice, RenderQueue},
    std::collections::HashMap,
    wgpu::util::DeviceExt,
};

/// One resident chunk on the GPU.
pub struct GpuPage {
    /// The file's index of its first node.
    pub base: u32,
    /// Its nodes; `None` for the first chunk (the asset's own `GpuSplats`).
    pub splats: Option<GpuSplats>,
    /// Per chunk of its splats, those nodes' records.
    pub records: Vec<wgpu::Buffer>,
    /// The main world's records these were written from (compared when pages are
    /// prepared, which only the `rad` feature's streams do).
    #[cfg_attr(not(feature = "rad"), allow(dead_code))]
    written: Arc<Vec<[f32; 4]>>,
    _bytes: GpuBytes,
}

impl GpuPage {
    /// Its splats: its own, or the asset's for the first chunk.
    pub fn splats<'a>(&'a self, asset: &'a GpuSplats) -> &'a GpuSplats {
        self.splats.as_ref().unwrap_or(asset)
    }

    /// Its splats' chunk `part` and that chunk's records.
    pub fn part<'a>(
        &'a self,
        asset: &'a GpuSplats,
        part: usize,
    ) -> Option<(&'a GpuSplats, &'a GpuChunk, &'a wgpu::Buffer)> {
        let splats = self.splats(asset);
        let chunk = splats.chunks.get(part)?;
        let records = self.records.get(part)?;
        // Every node's records, or the page is not drawn.
        let whole = records.size() >= u64::from(chunk.count) * LOD_PAGE_RECORD_BYTES;
        whole.then_some((splats, chunk, records))
    }
}

/// A streamed asset's resident pages, by chunk.
#[derive(Default)]
pub struct GpuStream {
    pub pages: BTreeMap<usize, GpuPage>,
}

/// The main world's pages, copied (as shared data) when they changed.
#[cfg(feature = "rad")]
#[derive(Resource, Default)]
pub struct ExtractedStreams {
    pages: HashMap<AssetId<GaussianSplats>, Vec<StreamedPage>>,
    generation: Option<u64>,
}

#[cfg(feature = "rad")]
pub fn extract_stream_pages(
    main: Extract<Option<Res<SplatStreams>>>,
    mut extracted: ResMut<ExtractedStreams>,
) {
    let Some(main) = main.as_ref() else {
        return;
    };
    if extracted.generation == Some(main.generation()) {
        return;
    }
    extracted.generation = Some(main.generation());
    extracted.pages = main
        .pages()
        .map(|(id, pages)| (id, pages.cloned().collect()))
        .collect();
}

/// Uploads the pages that arrived, rewrites the records that changed and frees the
/// pages that were evicted (run by `lod_trees::prepare_stream_pages`, which holds the
/// streams beside the built trees).
#[cfg(feature = "rad")]
pub fn prepare_streams(
    streams: &mut HashMap<AssetId<GaussianSplats>, GpuStream>,
    extracted: &ExtractedStreams,
    device: &RenderDevice,
    queue: &RenderQueue,
    memory: &SplatMemory,
    limits: &SplatGpuLimits,
    assets: &RenderAssets<GpuSplats>,
) {
    streams.retain(|id, _| extracted.pages.contains_key(id));
    let max_binding = limits.max_storage_binding(device);
    let device = device.wgpu_device();
    for (id, pages) in &extracted.pages {
        let Some(asset) = assets.get(*id) else {
            continue;
        };
        let stream = streams.entry(*id).or_default();
        stream
            .pages
            .retain(|chunk, _| pages.iter().any(|page| page.chunk == *chunk));
        for page in pages {
            match stream.pages.get_mut(&page.chunk) {
                Some(gpu) if Arc::ptr_eq(&gpu.written, &page.records) => {}
                Some(gpu) => {
                    let splats = gpu.splats(asset);
                    for (chunk, buffer) in splats.chunks.iter().zip(&gpu.records) {
                        let words = span(&page.records, chunk);
                        if words.len() as u64 * 16 == buffer.size() {
                            queue.write_buffer(buffer, 0, bytemuck::cast_slice(words));
                        }
                    }
                    gpu.written = page.records.clone();
                }
                None => {
                    let splats = page
                        .splats
                        .as_ref()
                        .map(|splats| GpuSplats::upload(splats, device, memory, max_binding));
                    let parts = splats.as_ref().unwrap_or(asset);
                    let records: Vec<wgpu::Buffer> = parts
                        .chunks
                        .iter()
                        .map(|chunk| {
                            let words = span(&page.records, chunk);
                            // A binding of zero bytes is invalid.
                            let zero = [[0.0f32; 4]; 3];
                            let words = if words.is_empty() { &zero[..] } else { words };
                            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                                label: Some("splat stream page records"),
                                contents: bytemuck::cast_slice(words),
                                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                            })
                        })
                        .collect();
                    let bytes = records.iter().map(wgpu::Buffer::size).sum();
                    stream.pages.insert(
                        page.chunk,
                        GpuPage {
                            base: page.base,
                            splats,
                            records,
                            written: page.records.clone(),
                            _bytes: memory.track(bytes),
                        },
                    );
                }
            }
        }
    }
}

#[cfg(feature = "rad")]
/// The records of `chunk`'s nodes within its page (three vec4 each); empty where the
/// records are short (a page whose records have not arrived draws nothing).
fn span<'a>(records: &'a [[f32; 4]], chunk: &GpuChunk) -> &'a [[f32; 4]] {
    let start = 3 * chunk.first as usize;
    let end = start + 3 * chunk.count as usize;
    records.get(start..end).unwrap_or(&[])
}
