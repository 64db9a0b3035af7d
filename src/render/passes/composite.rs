//! composite: the premultiplied splat layer over the view's main texture.

use std::collections::HashMap;
use std::sync::Mutex;

use wgpu::{
    BindGroup, BindGroupLayout, BindingType, Buffer, Device, RenderPass, RenderPipeline,
    ShaderStages, TextureFormat, TextureSampleType, TextureViewDimension,
};

use bevy::ecs::component::Component;

use super::common::bind_group;

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
    pipelines: Mutex<HashMap<(TextureFormat, u32), RenderPipeline>>,
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
            pipelines: Mutex::new(HashMap::new()),
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
        let mut pipelines = self
            .pipelines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pipelines
            .entry((format, samples))
            .or_insert_with(|| self.build(device, format, samples))
            .clone()
    }

    fn build(&self, device: &Device, format: TextureFormat, samples: u32) -> RenderPipeline {
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("splat composite"),
            bind_group_layouts: &[Some(&self.layout)],
            immediate_size: 0,
        });
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("splat composite"),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &self.module,
                entry_point: Some("fullscreen"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            fragment: Some(wgpu::FragmentState {
                module: &self.module,
                entry_point: Some("composite"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format,
                    blend: Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState {
                count: samples,
                ..Default::default()
            },
            multiview_mask: None,
            cache: None,
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
