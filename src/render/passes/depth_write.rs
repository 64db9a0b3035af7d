//! The depth write: a camera with [`SplatDepth`] gets its splats' median depth (where
//! each pixel's transmittance first falls to 0.5) in its depth buffer, nearer-only,
//! after the opaque pass and before the transparent one.

use bevy::ecs::component::Component;
use bevy::ecs::reflect::ReflectComponent;
use bevy::reflect::prelude::*;
use wgpu::{BindGroup, Buffer, CompareFunction, Device, RenderPass, RenderPipeline, TextureFormat};

use super::fullscreen::FullscreenTexturePass;
use super::library::{ShaderLibrary, wgsl_file};

/// On a 3D camera: its splats write their surface (the median depth) into the view's
/// depth texture, so transparent meshes behind a dense splat surface are hidden and
/// later depth-reading passes see the splats. Costs a 4-byte-per-pixel texture and a
/// fullscreen pass.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
pub struct SplatDepth;

pub struct DepthWritePass(FullscreenTexturePass);

impl DepthWritePass {
    pub fn new(device: &Device, library: &mut ShaderLibrary) -> Self {
        Self(FullscreenTexturePass::new(
            device,
            library,
            "splat depth write",
            (wgsl_file!("depth_write.wgsl"), "depth_write"),
            false,
        ))
    }

    /// `median_depth`: the view's median-depth texture; `params`: the composite's
    /// uniform (its viewport origin).
    pub fn bind_group(
        &self,
        device: &Device,
        median_depth: &wgpu::TextureView,
        params: &Buffer,
    ) -> BindGroup {
        self.0.bind_group(device, median_depth, params, None)
    }

    /// The pipeline for a depth buffer of `format` with `samples` samples.
    pub fn pipeline(&self, device: &Device, format: TextureFormat, samples: u32) -> RenderPipeline {
        // Reverse-Z: nearer is greater; only a nearer splat surface replaces what the
        // opaque pass wrote.
        let depth = wgpu::DepthStencilState {
            format,
            depth_write_enabled: Some(true),
            depth_compare: Some(CompareFunction::Greater),
            stencil: Default::default(),
            bias: Default::default(),
        };
        self.0.pipeline(device, (format, samples), &[], Some(depth))
    }

    pub fn encode(&self, pass: &mut RenderPass<'_>, pipeline: &RenderPipeline, group: &BindGroup) {
        self.0.encode(pass, pipeline, group);
    }
}
