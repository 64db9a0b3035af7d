//! The depth write: a camera with [`SplatDepth`] gets its splats' median depth (where
//! each pixel's transmittance first falls to 0.5) in its depth buffer, nearer-only,
//! after the opaque pass and before the transparent one.

use bevy::ecs::component::Component;
use wgpu::{
    BindGroup, BindingType, Buffer, CompareFunction, Device, RenderPass, RenderPipeline,
    ShaderStages, TextureFormat, TextureSampleType, TextureViewDimension,
};

use super::common::{RenderPipelines, bind_group, fullscreen_pipeline, layout, uniform};

/// On a 3D camera: its splats write their surface (the median depth) into the view's
/// depth texture, so transparent meshes behind a dense splat surface are hidden and
/// later depth-reading passes see the splats. Costs a 4-byte-per-pixel texture and a
/// fullscreen pass.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SplatDepth;

pub struct DepthWritePass {
    layout: wgpu::BindGroupLayout,
    module: wgpu::ShaderModule,
    pipelines: RenderPipelines<(TextureFormat, u32)>,
}

impl DepthWritePass {
    pub fn new(device: &Device) -> Self {
        let layout = layout(
            device,
            "splat depth write",
            &[
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
                    visibility: ShaderStages::FRAGMENT,
                    ..uniform(1, false)
                },
            ],
        );
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("splat depth write"),
            source: wgpu::ShaderSource::Wgsl(include_str!("depth_write.wgsl").into()),
        });
        Self {
            layout,
            module,
            pipelines: RenderPipelines::default(),
        }
    }

    /// `median_depth`: the view's median-depth texture; `params`: the composite's
    /// uniform (its viewport origin).
    pub fn bind_group(
        &self,
        device: &Device,
        median_depth: &wgpu::TextureView,
        params: &Buffer,
    ) -> BindGroup {
        bind_group(
            device,
            "splat depth write",
            &self.layout,
            &[
                wgpu::BindingResource::TextureView(median_depth),
                params.as_entire_binding(),
            ],
        )
    }

    /// The pipeline for a depth buffer of `format` with `samples` samples.
    pub fn pipeline(&self, device: &Device, format: TextureFormat, samples: u32) -> RenderPipeline {
        self.pipelines.get_or_build((format, samples), || {
            // Reverse-Z: nearer is greater; only a nearer splat surface replaces what
            // the opaque pass wrote.
            let depth = wgpu::DepthStencilState {
                format,
                depth_write_enabled: Some(true),
                depth_compare: Some(CompareFunction::Greater),
                stencil: Default::default(),
                bias: Default::default(),
            };
            fullscreen_pipeline(
                device,
                "splat depth write",
                &self.layout,
                &self.module,
                "depth_write",
                &[],
                Some(depth),
                samples,
            )
        })
    }

    pub fn encode(&self, pass: &mut RenderPass<'_>, pipeline: &RenderPipeline, group: &BindGroup) {
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.draw(0..3, 0..1);
    }
}
