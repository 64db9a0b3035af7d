//! The level-of-detail trees on the GPU: each tree's interior nodes as splats in the
//! asset's layout, and every node's record (`preprocess_lod.wgsl`), in chunks that
//! line up with the splat chunks. Uploaded once a tree is built, freed with it.

use std::collections::HashMap;
use std::sync::Arc;

use bevy::asset::AssetId;
use bevy::ecs::prelude::*;
use bevy::log::warn_once;
use bevy::render::Extract;
use bevy::render::render_asset::RenderAssets;
use bevy::render::renderer::RenderDevice;
use wgpu::util::DeviceExt;

use super::gpu_cloud::GpuSplats;
use super::limits::SplatGpuLimits;
use super::lod_reach::ParentBound;
use super::memory::{GpuBytes, SplatMemory};
use super::passes::SplatPipelines;
use super::stream_pages::GpuStream;
use crate::asset::GaussianSplats;
use crate::lod::{CloudLod, SplatLodTrees};

/// One tree on the GPU.
pub struct GpuLodTree {
    /// The interior nodes, drawn as any splats are.
    pub interior: GpuSplats,
    /// Per chunk of the asset's `GpuSplats`: its leaves' records.
    pub leaf_records: Vec<wgpu::Buffer>,
    /// Per chunk of `interior`: its nodes' records.
    pub interior_records: Vec<wgpu::Buffer>,
    /// Per chunk of the asset's splats and of `interior`: its blocks' parents, bounded,
    /// so a view's dispatches can leave out the blocks its cut cannot reach.
    pub leaf_reach: Vec<Vec<ParentBound>>,
    pub interior_reach: Vec<Vec<ParentBound>>,
    /// The asset's splats (the first interior node's id).
    pub leaves: u32,
    _bytes: GpuBytes,
}

/// The trees on the GPU, by asset, and the main world's trees they come from.
#[derive(Resource, Default)]
pub struct GpuLodTrees {
    trees: HashMap<AssetId<GaussianSplats>, (Arc<CloudLod>, GpuLodTree)>,
    extracted: HashMap<AssetId<GaussianSplats>, Arc<CloudLod>>,
    generation: Option<u64>,
    /// Streamed assets' resident pages (`stream_pages.rs`): trees whose nodes come and
    /// go.
    streams: HashMap<AssetId<GaussianSplats>, GpuStream>,
}

impl GpuLodTrees {
    /// `asset`'s tree, once uploaded.
    pub fn get(&self, asset: AssetId<GaussianSplats>) -> Option<&GpuLodTree> {
        self.trees.get(&asset).map(|(_, tree)| tree)
    }

    /// `asset`'s resident pages, if it is streamed.
    pub fn stream(&self, asset: AssetId<GaussianSplats>) -> Option<&GpuStream> {
        self.streams.get(&asset)
    }

    /// A splat of `asset` under node `node` of its tree (the node itself for a leaf or
    /// an asset without a tree): what a pick on a merged node reports, so that a
    /// pick's index always names one of the asset's splats.
    pub fn leaf_under(&self, asset: AssetId<GaussianSplats>, node: u32) -> u32 {
        let Some((lod, _)) = self.trees.get(&asset) else {
            return node;
        };
        let tree = &lod.tree;
        let mut node = node as usize;
        while node >= tree.leaves() {
            match tree.children(node).first() {
                Some(&child) => node = child as usize,
                None => break,
            }
        }
        node as u32
    }
}

/// Copies the main world's list of trees when it changed (the trees are shared, not
/// copied).
pub fn extract_lod_trees(main: Extract<Res<SplatLodTrees>>, mut gpu: ResMut<GpuLodTrees>) {
    if gpu.generation == Some(main.generation()) {
        return;
    }
    gpu.generation = Some(main.generation());
    gpu.extracted = main.iter().map(|(id, lod)| (id, lod.clone())).collect();
}

/// Drops the trees the main world dropped and uploads the new ones whose assets are
/// on the GPU.
pub fn prepare_lod_trees(
    mut gpu: ResMut<GpuLodTrees>,
    device: Res<RenderDevice>,
    memory: Res<SplatMemory>,
    limits: Res<SplatGpuLimits>,
    pipelines: Option<Res<SplatPipelines>>,
    splats: Res<RenderAssets<GpuSplats>>,
) {
    let GpuLodTrees {
        trees, extracted, ..
    } = &mut *gpu;
    trees.retain(|id, (lod, _)| extracted.get(id).is_some_and(|now| Arc::ptr_eq(now, lod)));
    if extracted.len() == trees.len() {
        return;
    }
    let Some(pipelines) = pipelines else {
        return;
    };
    if !pipelines.preprocess.supports_lod() {
        warn_once!(
            "SplatLod needs a device with at least {} storage buffers per shader stage; \
             clouds are drawn whole",
            crate::render::passes::preprocess::LOD_STORAGE_BUFFERS
        );
        return;
    }
    let max_binding = limits.max_storage_binding(&device);
    for (id, lod) in extracted.iter() {
        if trees.contains_key(id) {
            continue;
        }
        let Some(leaves) = splats.get(*id) else {
            continue;
        };
        let tree = upload(lod, leaves, device.wgpu_device(), &memory, max_binding);
        trees.insert(*id, (lod.clone(), tree));
    }
}

fn upload(
    lod: &CloudLod,
    leaves: &GpuSplats,
    device: &wgpu::Device,
    memory: &SplatMemory,
    max_binding: u64,
) -> GpuLodTree {
    let interior = GpuSplats::upload(&lod.interior, device, memory, max_binding);
    let records = |label: &str, data: &[[f32; 4]]| {
        // A binding of zero bytes is invalid.
        let data = if data.is_empty() { &[[0.0; 4]] } else { data };
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::cast_slice(data),
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    let span = |first: u32, count: u32| first as usize..(first + count) as usize;
    let (leaf_records, leaf_reach): (Vec<_>, Vec<_>) = leaves
        .chunks
        .iter()
        .map(|chunk| {
            let data = lod.spheres.leaf_records(span(chunk.first, chunk.count));
            (
                records("splat LOD leaf records", &data),
                ParentBound::of_blocks(&data),
            )
        })
        .unzip();
    let (interior_records, interior_reach): (Vec<_>, Vec<_>) = interior
        .chunks
        .iter()
        .map(|chunk| {
            let data = lod.spheres.interior_records(span(chunk.first, chunk.count));
            // Each node's two records: its sphere, then its parent's.
            let parents: Vec<_> = data.iter().skip(1).step_by(2).copied().collect();
            (
                records("splat LOD interior records", &data),
                ParentBound::of_blocks(&parents),
            )
        })
        .unzip();
    let bytes = leaf_records
        .iter()
        .chain(&interior_records)
        .map(wgpu::Buffer::size)
        .sum();
    GpuLodTree {
        interior,
        leaf_records,
        interior_records,
        leaf_reach,
        interior_reach,
        leaves: leaves.len(),
        _bytes: memory.track(bytes),
    }
}

/// Streamed assets' pages: uploaded, rewritten or freed as the main world's page
/// tables say (`stream_pages.rs`).
#[cfg(feature = "rad")]
pub fn prepare_stream_pages(
    extracted: Res<super::stream_pages::ExtractedStreams>,
    mut trees: ResMut<GpuLodTrees>,
    device: Res<RenderDevice>,
    queue: Res<bevy::render::renderer::RenderQueue>,
    memory: Res<SplatMemory>,
    limits: Res<SplatGpuLimits>,
    assets: Res<RenderAssets<GpuSplats>>,
) {
    super::stream_pages::prepare_streams(
        &mut trees.streams,
        &extracted,
        &device,
        &queue,
        &memory,
        &limits,
        &assets,
    );
}
