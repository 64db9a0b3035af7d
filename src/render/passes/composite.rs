//! composite: the premultiplied splat layer into the view's main texture.

use wgpu::{BindGroup, Buffer, Device, RenderPass, RenderPipeline, TextureFormat};

use bevy::ecs::component::Component;
use bevy::ecs::reflect::ReflectComponent;
use bevy::reflect::prelude::*;

use bevy::render::render_resource::PipelineCache;

use super::builder::EntryShader;
use super::common::ShaderChecks;
use super::fullscreen::FullscreenTexturePass;
use super::library::wgsl_file;
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
/// the scene), each built per (target format, sample count) met so far.
pub struct CompositePass {
    premultiplied: FullscreenTexturePass,
    over_scene: FullscreenTexturePass,
}

/// Composite parameters (`params` in WGSL).
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
            premultiplied: FullscreenTexturePass::new(
                builder,
                "splat composite",
                (SHADER, "composite_premultiplied"),
                false,
            ),
            over_scene: FullscreenTexturePass::new(
                builder,
                "splat composite over the scene",
                (SHADER, "composite_over_scene"),
                true,
            ),
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

    pub fn encode(
        &self,
        pass: &mut RenderPass<'_>,
        pipeline: &RenderPipeline,
        bind_group: &BindGroup,
    ) {
        // Either pass draws the same fullscreen triangle.
        self.premultiplied.encode(pass, pipeline, bind_group);
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
