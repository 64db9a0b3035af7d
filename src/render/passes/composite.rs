//! composite: the premultiplied splat layer into the view's main texture.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use wgpu::{
    BindGroup, BindGroupLayoutEntry, BindingType, Buffer, ComputePass, ComputePipeline, Device,
    RenderPass, RenderPipeline, ShaderStages, TextureFormat, TextureUsages, TextureViewDimension,
};

use bevy::ecs::component::Component;
use bevy::ecs::reflect::ReflectComponent;
use bevy::reflect::prelude::*;

use bevy::render::render_resource::{
    BindGroupLayoutDescriptor, CachedComputePipelineId, ComputePipelineDescriptor, PipelineCache,
};
use bevy::shader::ShaderDefVal;

use super::builder::EntryShader;
use super::common::{ShaderChecks, bind_group, storage, uniform, write_only_texture};
use super::indirect::TILE_DISPATCH_OFFSET;
use super::library::wgsl_file;
use super::tile_quads::{BandTiles, TileQuadPass};
use crate::render::pipelines::CachedBuilder;

/// How a camera's finished splat layer is written into its image.
///
/// Trained colours are sRGB display values, and the training blended them in sRGB:
/// over a background `b` a splat layer of premultiplied colour `C` and coverage `A`
/// shows `C + (1 - A) b`. By default ([`SplatComposite::Linearize`]) the composite
/// gives exactly that image in Bevy's linear working space, over black, a clear
/// colour or meshes alike. [`SplatComposite::Passthrough`] writes the layer's values
/// untouched with premultiplied blending, as the reference rasterizer does: use it with
/// an `Rgba8Unorm` render target for a parity render.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
pub enum SplatComposite {
    /// The trained image over the scene, blended in sRGB values as it was trained, and
    /// stored in the view's own encoding. A view in linear light has its colour under
    /// the viewport copied once a frame for this (its main texture keeps Bevy's
    /// default `COPY_SRC` usage; without it the blend is exact over black only).
    #[default]
    Linearize,
    /// The layer's values blended into the view's as they are.
    Passthrough,
}

/// How one view composites this frame (chosen in prepare from [`SplatComposite`] and
/// the view's target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompositeMode {
    /// Premultiplied hardware blending of the layer's values: `Passthrough`, and
    /// `Linearize` into a view that stores sRGB values (where it is exact).
    Premultiplied,
    /// Premultiplied blending of the layer taken to linear light: exact over black, for
    /// a view in linear light whose colour cannot be copied.
    LinearOverBlack,
    /// The layer over a copy of the scene behind it, blended in sRGB values and written
    /// in linear light.
    OverScene,
}

impl CompositeMode {
    /// `linear_target`: the view stores linear light; `copyable`: its main texture can
    /// be copied from.
    pub fn choose(composite: SplatComposite, linear_target: bool, copyable: bool) -> Self {
        match composite {
            SplatComposite::Passthrough => Self::Premultiplied,
            SplatComposite::Linearize if !linear_target => Self::Premultiplied,
            SplatComposite::Linearize if copyable => Self::OverScene,
            SplatComposite::Linearize => Self::LinearOverBlack,
        }
    }

    /// The composite reads a copy of the view's colour.
    pub fn reads_scene(self) -> bool {
        self == Self::OverScene
    }
}

pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("composite.wgsl"),
    checks: ShaderChecks::All,
};

/// The composite's two pipelines (premultiplied blending, and the blend over a copy of
/// the scene), each built per (target format, sample count) met so far, and their
/// compute forms.
pub struct CompositePass {
    premultiplied: TileQuadPass,
    over_scene: TileQuadPass,
    compute: ComputeComposite,
}

/// The composite as a compute pass (`composite_compute`): for a single-sampled view
/// whose main texture takes storage writes in one of [`ComputeComposite::FORMATS`] and
/// can be copied, it reads the scene behind from the view's copy and writes each
/// blended pixel itself, instead of drawing tile quads. Built per (format,
/// blend) met so far.
pub struct ComputeComposite {
    shader: bevy::asset::Handle<bevy::shader::Shader>,
    defs: Vec<ShaderDefVal>,
    pipelines: Mutex<HashMap<(TextureFormat, bool), CachedComputePipelineId>>,
}

impl ComputeComposite {
    /// The main-texture formats it writes (WebGPU's write-only storage formats among
    /// those Bevy's views use).
    pub const FORMATS: [TextureFormat; 3] = [
        TextureFormat::Rgba8Unorm,
        TextureFormat::Rgba16Float,
        TextureFormat::Rgba32Float,
    ];

    /// Whether a view's main texture of `format`, `usage` and `samples` is composited
    /// in a compute pass.
    pub fn serves(format: TextureFormat, usage: TextureUsages, samples: u32) -> bool {
        samples == 1
            && Self::FORMATS.contains(&format)
            && usage.contains(TextureUsages::STORAGE_BINDING | TextureUsages::COPY_SRC)
    }

    fn layout(format: TextureFormat) -> BindGroupLayoutDescriptor {
        let texture = |binding| BindGroupLayoutEntry {
            binding,
            visibility: ShaderStages::COMPUTE,
            ty: BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: false },
                view_dimension: TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        };
        BindGroupLayoutDescriptor::new(
            "splat composite (compute)",
            &[
                texture(0),
                uniform(1, false),
                texture(2),
                write_only_texture(3, format),
                storage(4, true),
            ],
        )
    }

    /// The pipeline for `format` (one of [`Self::FORMATS`]), blending over the scene
    /// or premultiplied; queued the first time, `None` until compiled.
    pub fn pipeline(
        &self,
        cache: &PipelineCache,
        format: TextureFormat,
        over_scene: bool,
    ) -> Option<ComputePipeline> {
        let id = *self
            .pipelines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((format, over_scene))
            .or_insert_with(|| {
                let mut defs = self.defs.clone();
                let format_def = match format {
                    TextureFormat::Rgba8Unorm => Some("TARGET_RGBA8UNORM"),
                    TextureFormat::Rgba32Float => Some("TARGET_RGBA32FLOAT"),
                    _ => None,
                };
                defs.extend(format_def.map(ShaderDefVal::from));
                if over_scene {
                    defs.push("OVER_SCENE".into());
                }
                cache.queue_compute_pipeline(ComputePipelineDescriptor {
                    label: Some("splat composite (compute)".into()),
                    layout: vec![Self::layout(format)],
                    shader: self.shader.clone(),
                    shader_defs: defs,
                    entry_point: Some("composite_compute".into()),
                    ..Default::default()
                })
            });
        cache
            .get_compute_pipeline(id)
            .map(|pipeline| (**pipeline).clone())
    }

    /// The bind group layout of the pipeline for `format`.
    pub fn layout_for(cache: &PipelineCache, format: TextureFormat) -> wgpu::BindGroupLayout {
        (*cache.get_bind_group_layout(&Self::layout(format))).clone()
    }

    /// Binds the layer, the copy of the scene behind it, the view's main texture
    /// (`layout`: [`Self::layout_for`] its format) and one band's tile order.
    pub fn bind_group(
        device: &Device,
        layout: &wgpu::BindGroupLayout,
        (splat_layer, params, scene): (&wgpu::TextureView, &Buffer, &wgpu::TextureView),
        (target, tile_order): (&wgpu::TextureView, &Buffer),
    ) -> BindGroup {
        bind_group(
            device,
            "splat composite (compute)",
            layout,
            &[
                wgpu::BindingResource::TextureView(splat_layer),
                params.as_entire_binding(),
                wgpu::BindingResource::TextureView(scene),
                wgpu::BindingResource::TextureView(target),
                tile_order.as_entire_binding(),
            ],
        )
    }

    /// One workgroup per drawn tile of a band (`bind_group` its tile order), on the
    /// tile render's grid from the band's `counters`.
    pub fn encode(
        pass: &mut ComputePass<'_>,
        pipeline: &ComputePipeline,
        bind_group: &BindGroup,
        counters: &Buffer,
    ) {
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups_indirect(counters, TILE_DISPATCH_OFFSET);
    }
}

/// A view's composite pipeline, of either form.
pub enum CompositePipeline {
    Fragment(RenderPipeline),
    Compute(ComputePipeline),
}

/// The uniform of the passes that read the layer (`LayerParams` in WGSL): the
/// composite's parameters, and the tiles the tile quads are placed by.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CompositeUniform {
    pub viewport_origin: [u32; 2],
    /// 1: `CompositeMode::LinearOverBlack`; 0 otherwise.
    pub linearize: u32,
    /// The levels per channel of a target that stores sRGB-encoded bytes (255), whose
    /// values the composite snaps its sRGB result to before taking it to linear light;
    /// 0 for any other target.
    pub srgb_levels: u32,
    /// The view's tiles across.
    pub tiles_across: u32,
    pub viewport_size: [u32; 2],
    /// Target texels per layer texel along each axis: a shadow view drawn at a
    /// `SplatShadowScale`; 1 for a camera.
    pub texel_scale: u32,
    /// Where the view's cell starts in the layer (0 but for a light's cascades drawn
    /// together).
    pub cell_origin: [u32; 2],
    pub _pad_cell: [u32; 2],
}

impl CompositeUniform {
    /// `srgb_levels` for a target of `format`.
    pub fn srgb_levels(format: TextureFormat) -> u32 {
        match format {
            TextureFormat::Rgba8UnormSrgb | TextureFormat::Bgra8UnormSrgb => 255,
            _ => 0,
        }
    }
}

impl CompositePass {
    pub fn new(builder: &CachedBuilder<'_>) -> Self {
        Self {
            premultiplied: TileQuadPass::new(
                builder,
                "splat composite",
                (SHADER, "composite_premultiplied"),
                false,
            ),
            over_scene: TileQuadPass::new(
                builder,
                "splat composite over the scene",
                (SHADER, "composite_over_scene"),
                true,
            ),
            compute: ComputeComposite {
                shader: builder.entry_shader(SHADER),
                defs: builder.shader_defs(&[]),
                pipelines: Mutex::default(),
            },
        }
    }

    /// The pipeline a view's composite runs: the compute form where it serves the
    /// view's main texture (`format`, `usage`, `samples`), else the fragment pass for
    /// `mode`; queued the first time, `None` until compiled.
    pub fn pipeline_for_view(
        &self,
        cache: &PipelineCache,
        mode: CompositeMode,
        (format, usage, samples): (TextureFormat, TextureUsages, u32),
    ) -> Option<CompositePipeline> {
        if ComputeComposite::serves(format, usage, samples) {
            let over_scene = mode == CompositeMode::OverScene;
            let pipeline = self.compute.pipeline(cache, format, over_scene)?;
            Some(CompositePipeline::Compute(pipeline))
        } else {
            let pipeline = self.pipeline(cache, mode, format, samples)?;
            Some(CompositePipeline::Fragment(pipeline))
        }
    }

    /// `scene`: the copy of the view's colour, for `CompositeMode::OverScene`.
    pub fn bind_group(
        &self,
        device: &Device,
        splat_layer: &wgpu::TextureView,
        params: &Buffer,
        scene: Option<&wgpu::TextureView>,
    ) -> BindGroup {
        match scene {
            Some(scene) => self
                .over_scene
                .bind_group(device, splat_layer, params, Some(scene)),
            None => self
                .premultiplied
                .bind_group(device, splat_layer, params, None),
        }
    }

    /// The pipeline for a target, queued the first time that target is seen; `None`
    /// until it is compiled.
    pub fn pipeline(
        &self,
        cache: &PipelineCache,
        mode: CompositeMode,
        format: TextureFormat,
        samples: u32,
    ) -> Option<RenderPipeline> {
        let (pass, blend) = match mode {
            CompositeMode::OverScene => (&self.over_scene, None),
            CompositeMode::Premultiplied | CompositeMode::LinearOverBlack => (
                &self.premultiplied,
                Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
            ),
        };
        let target = wgpu::ColorTargetState {
            format,
            blend,
            write_mask: wgpu::ColorWrites::ALL,
        };
        pass.pipeline(cache, (format, samples), &[Some(target)], None)
    }

    /// Over every band's drawn tiles.
    pub fn encode<'a>(
        &self,
        pass: &mut RenderPass<'_>,
        pipeline: &RenderPipeline,
        bind_group: &BindGroup,
        bands: impl IntoIterator<Item = BandTiles<'a>>,
    ) {
        // Either pass draws the same tile quads.
        self.premultiplied.encode(pass, pipeline, bind_group, bands);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_linear_view_that_can_be_copied_reads_the_scene() {
        use CompositeMode::*;
        let linearize = SplatComposite::Linearize;
        assert_eq!(CompositeMode::choose(linearize, true, true), OverScene);
        assert_eq!(
            CompositeMode::choose(linearize, true, false),
            LinearOverBlack
        );
        assert_eq!(CompositeMode::choose(linearize, false, true), Premultiplied);
        for (linear, copyable) in [(true, true), (false, false)] {
            let mode = CompositeMode::choose(SplatComposite::Passthrough, linear, copyable);
            assert_eq!(mode, Premultiplied);
        }
    }
}
