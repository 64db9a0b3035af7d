//! The threshold depth: a shadow view of a light with `SplatShadowDepth::Threshold`
//! draws its projected splats straight into the light's shadow map, each where its
//! own opacity reaches the threshold, nearest first by the map's depth test. It
//! replaces everything after the preprocess (both sorts, the tiles and the depth
//! write) with one indirect draw per band.

use std::sync::OnceLock;

use bevy::render::render_resource::{
    BindGroupLayoutDescriptor, CachedRenderPipelineId, FragmentState, PipelineCache,
    RenderPipelineDescriptor, VertexState,
};
use bevy::shader::{Shader, ShaderDefVal};
use wgpu::{
    BindGroup, BindGroupLayout, BindGroupLayoutEntry, Buffer, CompareFunction, RenderPass,
    RenderPipeline, ShaderStages, TextureFormat,
};

use super::builder::EntryShader;
use super::common::{ShaderChecks, bind_group, storage, uniform};
use super::indirect::SPLAT_DRAW_OFFSET;
use super::library::wgsl_file;
use crate::render::pipelines::CachedBuilder;

pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("threshold_depth.wgsl"),
    checks: ShaderChecks::All,
};

/// What one band's draw binds: its view uniform, the view's layer uniform (the
/// threshold, the layer's size and scale) and its projected splats.
pub struct ThresholdBand<'a> {
    pub view_uniform: &'a Buffer,
    pub layer_params: &'a Buffer,
    pub projected: &'a Buffer,
}

pub struct ThresholdDepthPass {
    layout_descriptor: BindGroupLayoutDescriptor,
    layout: BindGroupLayout,
    shader: bevy::asset::Handle<Shader>,
    shader_defs: Vec<ShaderDefVal>,
    /// Queued the first time a light asks for it: shadow maps have one format.
    pipeline: OnceLock<CachedRenderPipelineId>,
}

impl ThresholdDepthPass {
    pub fn new(builder: &CachedBuilder<'_>) -> Self {
        let stages = ShaderStages::VERTEX_FRAGMENT;
        let entries = [
            BindGroupLayoutEntry {
                visibility: stages,
                ..uniform(0, false)
            },
            BindGroupLayoutEntry {
                visibility: stages,
                ..uniform(1, false)
            },
            BindGroupLayoutEntry {
                visibility: ShaderStages::VERTEX,
                ..storage(2, true)
            },
        ];
        let layout_descriptor = BindGroupLayoutDescriptor::new("splat threshold depth", &entries);
        Self {
            layout: builder.layout_of(&layout_descriptor),
            layout_descriptor,
            shader: builder.entry_shader(SHADER),
            shader_defs: builder.shader_defs(&[]),
            pipeline: OnceLock::new(),
        }
    }

    pub fn bind_group(&self, device: &wgpu::Device, band: ThresholdBand<'_>) -> BindGroup {
        bind_group(
            device,
            "splat threshold depth",
            &self.layout,
            &[
                band.view_uniform.as_entire_binding(),
                band.layer_params.as_entire_binding(),
                band.projected.as_entire_binding(),
            ],
        )
    }

    /// The pipeline for a single-sampled depth map of `format`, queued the first time;
    /// `None` until it is compiled.
    pub fn pipeline(&self, cache: &PipelineCache, format: TextureFormat) -> Option<RenderPipeline> {
        let id = *self.pipeline.get_or_init(|| {
            cache.queue_render_pipeline(RenderPipelineDescriptor {
                label: Some("splat threshold depth".into()),
                layout: vec![self.layout_descriptor.clone()],
                vertex: VertexState {
                    shader: self.shader.clone(),
                    shader_defs: self.shader_defs.clone(),
                    entry_point: Some("splat_corner".into()),
                    buffers: Vec::new(),
                },
                fragment: Some(FragmentState {
                    shader: self.shader.clone(),
                    shader_defs: self.shader_defs.clone(),
                    entry_point: Some("splat_coverage".into()),
                    targets: Vec::new(),
                }),
                // Reverse-Z: a nearer splat (greater depth) replaces what the map holds,
                // meshes and other splats alike.
                depth_stencil: Some(wgpu::DepthStencilState {
                    format,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(CompareFunction::Greater),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                ..Default::default()
            })
        });
        cache
            .get_render_pipeline(id)
            .map(|pipeline| (**pipeline).clone())
    }

    /// Draws every band's kept splats, each band's from its own counters.
    pub fn encode<'a>(
        pass: &mut RenderPass<'_>,
        pipeline: &RenderPipeline,
        bands: impl IntoIterator<Item = (&'a BindGroup, &'a Buffer)>,
    ) {
        pass.set_pipeline(pipeline);
        for (group, counters) in bands {
            pass.set_bind_group(0, group, &[]);
            pass.draw_indirect(counters, SPLAT_DRAW_OFFSET);
        }
    }
}
