//! composite: the premultiplied splat layer over the view's main texture.

use wgpu::{
    BindGroup, BindGroupLayout, BindingType, Buffer, Device, RenderPass, RenderPipeline,
    ShaderStages, TextureFormat, TextureSampleType, TextureViewDimension,
};

use bevy::ecs::component::Component;

use super::common::{RenderPipelines, bind_group, fullscreen_pipeline};

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

/// Composite pipelines, one per (target format, sample count) met so far.
pub struct CompositePass {
    layout: BindGroupLayout,
    module: wgpu::ShaderModule,
    pipelines: RenderPipelines<(TextureFormat, u32)>,
}

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
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("splat composite"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: ShaderStages::FRAGMENT,
                    ty: BindingType::Texture {
                        sample_type: TextureSampleType::Float { filterable: false },
                        view_dimension: TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: ShaderStages::FRAGMENT,
                    ty: BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
            ],
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("splat composite"),
            source: wgpu::ShaderSource::Wgsl(include_str!("composite.wgsl").into()),
        });
        Self {
            layout,
            module,
            pipelines: RenderPipelines::default(),
        }
    }

    pub fn bind_group(
        &self,
        device: &Device,
        splat_layer: &wgpu::TextureView,
        params: &Buffer,
    ) -> BindGroup {
        bind_group(
            device,
            "splat composite",
            &self.layout,
            &[
                wgpu::BindingResource::TextureView(splat_layer),
                params.as_entire_binding(),
            ],
        )
    }

    /// The pipeline for a target, built the first time that target is seen.
    pub fn pipeline(&self, device: &Device, format: TextureFormat, samples: u32) -> RenderPipeline {
        self.pipelines.get_or_build((format, samples), || {
            let target = wgpu::ColorTargetState {
                format,
                blend: Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
                write_mask: wgpu::ColorWrites::ALL,
            };
            fullscreen_pipeline(
                device,
                "splat composite",
                &self.layout,
                &self.module,
                "composite",
                &[Some(target)],
                None,
                samples,
            )
        })
    }

    pub fn encode(
        &self,
        pass: &mut RenderPass<'_>,
        pipeline: &RenderPipeline,
        bind_group: &BindGroup,
    ) {
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.draw(0..3, 0..1);
    }
}
