//! The depth write: a camera with [`SplatDepth`] gets its splats' median depth (where
//! each pixel's transmittance first falls to 0.5) in its depth buffer, nearer-only,
//! after the opaque pass and before the transparent one.

use bevy::ecs::component::Component;
use bevy::ecs::reflect::ReflectComponent;
use bevy::reflect::prelude::*;
use wgpu::{BindGroup, Buffer, CompareFunction, Device, RenderPass, RenderPipeline, TextureFormat};

use bevy::render::render_resource::PipelineCache;

use super::builder::EntryShader;
use super::common::ShaderChecks;
use super::library::wgsl_file;
use super::tile_quads::{BandTiles, TileQuadPass};
use crate::render::pipelines::CachedBuilder;

/// On a 3D camera: its splats write their surface (the median depth) into the view's
/// depth texture, so transparent meshes behind a dense splat surface are hidden and
/// later depth-reading passes see the splats. Costs a 4-byte-per-pixel texture and a
/// pass over the tiles the splats cover.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
pub struct SplatDepth;

pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("depth_write.wgsl"),
    checks: ShaderChecks::All,
};

pub struct DepthWritePass(TileQuadPass);

impl DepthWritePass {
    pub fn new(builder: &CachedBuilder<'_>) -> Self {
        Self(TileQuadPass::new(
            builder,
            "splat depth write",
            (SHADER, "depth_write"),
            false,
        ))
    }

    /// `median_depth`: the view's median-depth texture; `params`: the layer's
    /// uniform (its viewport origin and tiles).
    pub fn bind_group(
        &self,
        device: &Device,
        median_depth: &wgpu::TextureView,
        params: &Buffer,
    ) -> BindGroup {
        self.0.bind_group(device, median_depth, params, None)
    }

    /// The pipeline for a depth buffer of `format` with `samples` samples; `None` until
    /// it is compiled.
    pub fn pipeline(
        &self,
        cache: &PipelineCache,
        format: TextureFormat,
        samples: u32,
    ) -> Option<RenderPipeline> {
        // Reverse-Z: nearer is greater; only a nearer splat surface replaces what the
        // opaque pass wrote.
        let depth = wgpu::DepthStencilState {
            format,
            depth_write_enabled: Some(true),
            depth_compare: Some(CompareFunction::Greater),
            stencil: Default::default(),
            bias: Default::default(),
        };
        self.0.pipeline(cache, (format, samples), &[], Some(depth))
    }

    /// Over every band's drawn tiles.
    pub fn encode<'a>(
        &self,
        pass: &mut RenderPass<'_>,
        pipeline: &RenderPipeline,
        group: &BindGroup,
        bands: impl IntoIterator<Item = BandTiles<'a>>,
    ) {
        self.0.encode(pass, pipeline, group, bands);
    }
}
