//! The passes that read the splat layer, drawn over the tiles the tile render drew:
//! a fragment stage reading the view's textures at its pixel over two triangles per
//! run of drawn tiles along a tile row (`tile_quads.wgsl`, one instance per run from
//! the band's tile runs, the count from its counters). The composite and the depth
//! write are two of these.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use bevy::mesh::VertexBufferLayout;
use bevy::render::render_resource::{
    BindGroupLayoutDescriptor, CachedRenderPipelineId, FragmentState, PipelineCache,
    RenderPipelineDescriptor, VertexState,
};
use bevy::shader::ShaderDefVal;
use wgpu::{BindGroup, BindGroupLayout, BindGroupLayoutEntry, BindingType, Buffer, ShaderStages};

use super::builder::EntryShader;
use super::common::{ShaderChecks, bind_group, uniform};
use super::indirect::TILE_DRAW_OFFSET;
use super::library::wgsl_file;
use crate::render::pipelines::CachedBuilder;

pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("tile_quads.wgsl"),
    checks: ShaderChecks::All,
};

/// Bytes of one run of drawn tiles in a band's tile runs: its first tile (a whole-view
/// id) and its length in tiles.
pub const TILE_RUN_BYTES: u64 = 8;

/// What one band's draw of tile quads reads: its runs of drawn tiles (the instances)
/// and its counters (the draw's arguments; the tile order writes both).
#[derive(Clone, Copy)]
pub struct BandTiles<'a> {
    pub tile_runs: &'a Buffer,
    pub counters: &'a Buffer,
}

/// A pass over the drawn tiles of one of the view's textures: a fragment shader
/// reading an unfiltered 2-D texture (binding 0) and the layer's uniform (binding 1,
/// `LayerParams`, which the vertex stage reads too). Its pipelines are specialized per
/// (attachment format, sample count) and queued on Bevy's `PipelineCache` the first
/// time a view asks for one.
pub struct TileQuadPass {
    label: &'static str,
    layout_descriptor: BindGroupLayoutDescriptor,
    layout: BindGroupLayout,
    vertex: VertexState,
    fragment: (bevy::asset::Handle<bevy::shader::Shader>, &'static str),
    shader_defs: Vec<ShaderDefVal>,
    pipelines: Mutex<HashMap<(wgpu::TextureFormat, u32), CachedRenderPipelineId>>,
}

impl TileQuadPass {
    /// `shader`'s `fragment` entry point over the drawn tiles, with the fragment
    /// reading a second texture at binding 2 when `second_texture` is set (the
    /// composite's copy of the scene behind).
    pub fn new(
        builder: &CachedBuilder<'_>,
        label: &'static str,
        (shader, fragment): (EntryShader, &'static str),
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
            visibility: ShaderStages::VERTEX_FRAGMENT,
            ..uniform(1, false)
        };
        let mut entries = vec![texture(0), params];
        if second_texture {
            entries.push(texture(2));
        }
        let layout_descriptor = BindGroupLayoutDescriptor::new(label, &entries);
        let shader_defs = builder.shader_defs(&[]);
        Self {
            label,
            layout: builder.layout_of(&layout_descriptor),
            layout_descriptor,
            vertex: VertexState {
                shader: builder.entry_shader(SHADER),
                shader_defs: shader_defs.clone(),
                entry_point: Some("tile_quad".into()),
                buffers: vec![VertexBufferLayout {
                    array_stride: TILE_RUN_BYTES,
                    step_mode: wgpu::VertexStepMode::Instance,
                    attributes: vec![wgpu::VertexAttribute {
                        format: wgpu::VertexFormat::Uint32x2,
                        offset: 0,
                        shader_location: 0,
                    }],
                }],
            },
            fragment: (builder.entry_shader(shader), fragment),
            shader_defs,
            pipelines: Mutex::default(),
        }
    }

    /// `texture` at binding 0, `params` at 1 and, for a pass made with a second
    /// texture, `second` at 2.
    pub fn bind_group(
        &self,
        device: &wgpu::Device,
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

    /// The pipeline for an attachment of `format` with `samples` samples, queued with
    /// `targets` and `depth_stencil` the first time it is asked for; `None` until it
    /// is compiled.
    pub fn pipeline(
        &self,
        cache: &PipelineCache,
        (format, samples): (wgpu::TextureFormat, u32),
        targets: &[Option<wgpu::ColorTargetState>],
        depth_stencil: Option<wgpu::DepthStencilState>,
    ) -> Option<wgpu::RenderPipeline> {
        let id = *self
            .pipelines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((format, samples))
            .or_insert_with(|| {
                cache.queue_render_pipeline(RenderPipelineDescriptor {
                    label: Some(self.label.into()),
                    layout: vec![self.layout_descriptor.clone()],
                    vertex: self.vertex.clone(),
                    fragment: Some(FragmentState {
                        shader: self.fragment.0.clone(),
                        shader_defs: self.shader_defs.clone(),
                        entry_point: Some(self.fragment.1.into()),
                        targets: targets.to_vec(),
                    }),
                    depth_stencil,
                    multisample: wgpu::MultisampleState {
                        count: samples,
                        ..Default::default()
                    },
                    ..Default::default()
                })
            });
        cache
            .get_render_pipeline(id)
            .map(|pipeline| (**pipeline).clone())
    }

    /// Draws the drawn tiles of every band, each band's from its own tile runs.
    pub fn encode<'a>(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        pipeline: &wgpu::RenderPipeline,
        group: &BindGroup,
        bands: impl IntoIterator<Item = BandTiles<'a>>,
    ) {
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group, &[]);
        for band in bands {
            pass.set_vertex_buffer(0, band.tile_runs.slice(..));
            pass.draw_indirect(band.counters, TILE_DRAW_OFFSET);
        }
    }
}
