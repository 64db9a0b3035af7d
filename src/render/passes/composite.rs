//! composite: the premultiplied splat layer over the view's main texture.

use wgpu::{BindGroup, Buffer, Device, RenderPass, RenderPipeline, TextureFormat};

use bevy::ecs::component::Component;

use super::common::FullscreenTexturePass;

/// How a camera's finished splat layer is written into its image.
///
/// Trained colours are sRGB-encoded display values. By default they are converted to
/// Bevy's linear working space, so the camera's output encoding gives the trained
/// colours back. `Passthrough` writes the layer's values untouched, as the reference
/// rasterizer does: use it with an `Rgba8Unorm` render target for a parity render.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SplatComposite {
    #[default]
    Linearize,
    Passthrough,
}

/// The composite: the layer over the view's image, premultiplied, one pipeline per
/// (target format, sample count) met so far.
pub struct CompositePass(FullscreenTexturePass);

/// Composite parameters (`params` in WGSL).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CompositeUniform {
    pub viewport_origin: [u32; 2],
    /// 1: take the layer's sRGB values to linear light; 0: write them as they are.
    pub linearize: u32,
    pub _pad: u32,
}

impl CompositePass {
    pub fn new(device: &Device) -> Self {
        Self(FullscreenTexturePass::new(
            device,
            "splat composite",
            include_str!("composite.wgsl"),
            "composite",
        ))
    }

    pub fn bind_group(
        &self,
        device: &Device,
        splat_layer: &wgpu::TextureView,
        params: &Buffer,
    ) -> BindGroup {
        self.0.bind_group(device, splat_layer, params)
    }

    /// The pipeline for a target, built the first time that target is seen.
    pub fn pipeline(&self, device: &Device, format: TextureFormat, samples: u32) -> RenderPipeline {
        let target = wgpu::ColorTargetState {
            format,
            blend: Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
            write_mask: wgpu::ColorWrites::ALL,
        };
        self.0
            .pipeline(device, (format, samples), &[Some(target)], None)
    }

    pub fn encode(
        &self,
        pass: &mut RenderPass<'_>,
        pipeline: &RenderPipeline,
        bind_group: &BindGroup,
    ) {
        self.0.encode(pass, pipeline, bind_group);
    }
}
