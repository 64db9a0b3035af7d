//! One preprocess dispatch: what the band's uniforms describe and its bind groups bind.

use bevy::asset::AssetId;
use bevy::render::render_asset::RenderAssets;

use crate::asset::GaussianSplats;
use crate::render::gpu_cloud::{GpuChunk, GpuSplats};
use crate::render::lod_trees::GpuLodTrees;
use crate::render::passes::preprocess::{
    LOD_INTERIOR_RECORDS, LOD_LEAF_RECORDS, LOD_PAGE_RECORDS, PreprocessVariant,
};
use crate::shader::SplatShaderId;

/// Which nodes of a cloud's level-of-detail tree a dispatch runs over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LodNodes {
    /// A chunk of the asset's splats, the tree's leaves.
    Leaves,
    /// A chunk of the tree's interior nodes.
    Interior,
    /// A resident page of a streamed asset: the chunk of its file with this index
    /// (`render/stream_pages.rs`).
    Page(u32),
}

/// A dispatch as planned before its bind groups are made: its asset and chunk named,
/// not borrowed, so the plan can be kept on the view between systems.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DispatchPlan {
    pub asset: AssetId<GaussianSplats>,
    /// The chunk's index in the asset's `GpuSplats::chunks` (or, for interior nodes,
    /// in its tree's; for a page, in the page's).
    pub chunk: usize,
    pub first_instance: u32,
    pub instance_count: u32,
    pub shader: Option<SplatShaderId>,
    /// For a cut of the asset's level-of-detail tree: which nodes.
    pub lod: Option<LodNodes>,
    /// The run of the chunk's splats drawn (start, end): all of them unless the
    /// view's cut reaches only part of a tree's chunk.
    pub run: (u32, u32),
}

impl DispatchPlan {
    /// The level-of-detail nodes it weighs: its run for each instance.
    pub fn nodes_weighed(&self) -> u64 {
        match self.lod {
            Some(_) => {
                u64::from(self.run.1.saturating_sub(self.run.0)) * u64::from(self.instance_count)
            }
            None => 0,
        }
    }

    /// The dispatch over the asset's GPU data; `None` if the asset (or its tree) is
    /// gone (the plan and the bind groups are made in one frame, after the assets are
    /// prepared).
    pub fn resolve<'a>(
        &self,
        assets: &'a RenderAssets<GpuSplats>,
        trees: &'a GpuLodTrees,
    ) -> Option<Dispatch<'a>> {
        let leaves = assets.get(self.asset)?;
        let (splats, chunk, lod) = match self.lod {
            None => (leaves, leaves.chunks.get(self.chunk)?, None),
            Some(LodNodes::Leaves) => {
                let tree = trees.get(self.asset)?;
                let records = tree.leaf_records.get(self.chunk)?;
                let chunk = leaves.chunks.get(self.chunk)?;
                (
                    leaves,
                    chunk,
                    Some(DispatchLod {
                        records,
                        layout: LOD_LEAF_RECORDS,
                        first_node: chunk.first,
                    }),
                )
            }
            Some(LodNodes::Interior) => {
                let tree = trees.get(self.asset)?;
                let records = tree.interior_records.get(self.chunk)?;
                let chunk = tree.interior.chunks.get(self.chunk)?;
                (
                    &tree.interior,
                    chunk,
                    Some(DispatchLod {
                        records,
                        layout: LOD_INTERIOR_RECORDS,
                        first_node: tree.leaves + chunk.first,
                    }),
                )
            }
            Some(LodNodes::Page(page)) => {
                let page = trees.stream(self.asset)?.pages.get(&(page as usize))?;
                let (splats, chunk, records) = page.part(leaves, self.chunk)?;
                (
                    splats,
                    chunk,
                    Some(DispatchLod {
                        records,
                        layout: LOD_PAGE_RECORDS,
                        first_node: page.base + chunk.first,
                    }),
                )
            }
        };
        let (start, end) = self.run;
        let run = start.min(chunk.count)..end.min(chunk.count);
        Some(Dispatch {
            chunk,
            run,
            splats,
            first_instance: self.first_instance,
            instance_count: self.instance_count,
            shader: self.shader,
            lod,
        })
    }
}

/// A dispatch's part of a level-of-detail tree.
pub struct DispatchLod<'a> {
    /// The chunk's node records (`preprocess_lod.wgsl`).
    pub records: &'a wgpu::Buffer,
    /// `LOD_LEAF_RECORDS`, `LOD_INTERIOR_RECORDS` or `LOD_PAGE_RECORDS`.
    pub layout: u32,
    /// The chunk's first node id in the tree.
    pub first_node: u32,
}

/// One preprocess dispatch: a chunk of an asset for a run of instances of it.
pub struct Dispatch<'a> {
    pub chunk: &'a GpuChunk,
    /// The run of the chunk's splats it draws.
    pub run: std::ops::Range<u32>,
    /// The chunk's splats' layout (the asset's, or its tree's interior nodes').
    pub splats: &'a GpuSplats,
    pub first_instance: u32,
    pub instance_count: u32,
    /// The instances' `SplatShader`, which picks the preprocess variant.
    pub shader: Option<SplatShaderId>,
    pub lod: Option<DispatchLod<'a>>,
}

impl Dispatch<'_> {
    pub fn threads(&self) -> u32 {
        self.run.len() as u32 * self.instance_count
    }

    /// The preprocess it runs.
    pub fn variant(&self) -> PreprocessVariant {
        match (&self.lod, self.shader) {
            (Some(_), _) => PreprocessVariant::Lod,
            (None, Some(shader)) => PreprocessVariant::Shader(shader),
            (None, None) => PreprocessVariant::Plain,
        }
    }

    /// The id its picks and its splat shader see for the chunk's first splat.
    pub fn first_splat(&self) -> u32 {
        self.lod
            .as_ref()
            .map_or(self.chunk.first, |lod| lod.first_node)
    }
}
