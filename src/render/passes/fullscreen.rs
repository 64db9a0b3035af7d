//! The fullscreen passes' frame: one triangle over the viewport (`fullscreen.wgsl`,
//! the vertex stage) and a fragment stage reading the view's textures at its pixel.
//! The composite and the depth write are two of these.

use wgpu::{
    BindGroup, BindGroupLayout, BindGroupLayoutEntry, BindingType, Buffer, Device, ShaderStages,
};

use super::common::{ShaderChecks, bind_group, layout, uniform};
use super::library::{ShaderLibrary, WgslFile, wgsl_file};

/// A fullscreen pass over one of the view's textures: a fragment shader reading an
/// unfiltered 2-D texture (binding 0) and a uniform (binding 1), drawn as one triangle
/// over the viewport, with its pipelines built on first use, one per (attachment
/// format, sample count). The composite and the depth write are two of these.
pub struct FullscreenTexturePass {
    label: &'static str,
    layout: BindGroupLayout,
    vertex: wgpu::ShaderModule,
    fragment_module: wgpu::ShaderModule,
    fragment: &'static str,
    pipelines: std::sync::Mutex<
        std::collections::HashMap<(wgpu::TextureFormat, u32), wgpu::RenderPipeline>,
    >,
}

impl FullscreenTexturePass {
    /// `file`'s `fragment` entry point over the viewport, with the fragment reading a
    /// second texture at binding 2 when `second_texture` is set (the composite's copy
    /// of the scene behind).
    pub fn new(
        device: &Device,
        library: &mut ShaderLibrary,
        label: &'static str,
        (file, fragment): (WgslFile, &'static str),
        second_texture: bool,
    ) -> Self {
        let texture = |binding| BindGroupLayoutEntry {
            binding,
            visibility: ShaderStages::FRAGMENT,
            ty: BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: false },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        };
        let params = BindGroupLayoutEntry {
            visibility: ShaderStages::FRAGMENT,
            ..uniform(1, false)
        };
        let mut entries = vec![texture(0), params];
        if second_texture {
            entries.push(texture(2));
        }
        Self {
            label,
            layout: layout(device, label, &entries),
            vertex: library.module(
                device,
                label,
                wgsl_file!("fullscreen.wgsl"),
                &[],
                ShaderChecks::All,
            ),
            fragment_module: library.module(device, label, file, &[], ShaderChecks::All),
            fragment,
            pipelines: Default::default(),
        }
    }

    /// `texture` at binding 0, `params` at 1 and, for a pass made with a second
    /// texture, `second` at 2.
    pub fn bind_group(
        &self,
        device: &Device,
        texture: &wgpu::TextureView,
        params: &Buffer,
        second: Option<&wgpu::TextureView>,
    ) -> BindGroup {
        let mut resources = vec![
            wgpu::BindingResource::TextureView(texture),
            params.as_entire_binding(),
        ];
        resources.extend(second.map(wgpu::BindingResource::TextureView));
        bind_group(device, self.label, &self.layout, &resources)
    }

    /// The pipeline for an attachment of `format` with `samples` samples, built the
    /// first time it is asked for with `targets` and `depth_stencil`.
    pub fn pipeline(
        &self,
        device: &Device,
        (format, samples): (wgpu::TextureFormat, u32),
        targets: &[Option<wgpu::ColorTargetState>],
        depth_stencil: Option<wgpu::DepthStencilState>,
    ) -> wgpu::RenderPipeline {
        let mut pipelines = self
            .pipelines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pipelines
            .entry((format, samples))
            .or_insert_with(|| self.build(device, targets, depth_stencil, samples))
            .clone()
    }

    fn build(
        &self,
        device: &Device,
        targets: &[Option<wgpu::ColorTargetState>],
        depth_stencil: Option<wgpu::DepthStencilState>,
        samples: u32,
    ) -> wgpu::RenderPipeline {
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(self.label),
            bind_group_layouts: &[Some(&self.layout)],
            immediate_size: 0,
        });
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(self.label),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &self.vertex,
                entry_point: Some("fullscreen"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            fragment: Some(wgpu::FragmentState {
                module: &self.fragment_module,
                entry_point: Some(self.fragment),
                compilation_options: Default::default(),
                targets,
            }),
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil,
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
        pass: &mut wgpu::RenderPass<'_>,
        pipeline: &wgpu::RenderPipeline,
        group: &BindGroup,
    ) {
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.draw(0..3, 0..1);
    }
}
