//! tile render: one workgroup per 16×16 tile blends its sorted splats front to back
//! into the view's splat layer, stopping at the opaque scene's depth.

use bevy::math::UVec2;
use wgpu::{
    BindGroup, BindGroupLayout, BindingType, Buffer, ComputePass, ComputePipeline, Device,
    ShaderStages, StorageTextureAccess, TextureFormat, TextureSampleType, TextureView,
    TextureViewDimension,
};

use super::common::{bind_group, compute_pipeline, layout, shader_module, storage, uniform};

/// Pixels on a side of a tile (`TILE_SIZE` in `common.wgsl`).
pub const TILE_SIZE: u32 = 16;

/// The tiles covering a viewport.
pub fn tiles_for(viewport: UVec2) -> UVec2 {
    UVec2::new(
        viewport.x.div_ceil(TILE_SIZE),
        viewport.y.div_ceil(TILE_SIZE),
    )
}

/// Format of the splat layer: premultiplied colour and coverage, kept in f32 so the
/// composite sees exactly what the blend produced.
pub const SPLAT_LAYER_FORMAT: TextureFormat = TextureFormat::Rgba32Float;

/// Format of the median-depth texture (`SplatDepth`): the depth buffer's value at the
/// splat where each pixel's transmittance first falls to 0.5.
pub const MEDIAN_DEPTH_FORMAT: TextureFormat = TextureFormat::R32Float;

/// The tile render compiled for a single-sampled and for a multisampled depth buffer.
pub struct TileRenderPass {
    single: Variant,
    multisampled: Variant,
}

struct Variant {
    layout: BindGroupLayout,
    pipeline: ComputePipeline,
}

impl Variant {
    fn new(device: &Device, multisampled: bool) -> Self {
        let label = if multisampled {
            "splat tile render (msaa depth)"
        } else {
            "splat tile render"
        };
        let depth_type = if multisampled {
            "texture_depth_multisampled_2d"
        } else {
            "texture_depth_2d"
        };
        let layout = layout(
            device,
            label,
            &[
                uniform(0, false),
                storage(1, true),
                storage(2, true),
                storage(3, true),
                storage(6, true),
                wgpu::BindGroupLayoutEntry {
                    binding: 4,
                    visibility: ShaderStages::COMPUTE,
                    ty: BindingType::Texture {
                        sample_type: TextureSampleType::Depth,
                        view_dimension: TextureViewDimension::D2,
                        multisampled,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 5,
                    visibility: ShaderStages::COMPUTE,
                    ty: BindingType::StorageTexture {
                        access: StorageTextureAccess::WriteOnly,
                        format: SPLAT_LAYER_FORMAT,
                        view_dimension: TextureViewDimension::D2,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 7,
                    visibility: ShaderStages::COMPUTE,
                    ty: BindingType::StorageTexture {
                        access: StorageTextureAccess::WriteOnly,
                        format: MEDIAN_DEPTH_FORMAT,
                        view_dimension: TextureViewDimension::D2,
                    },
                    count: None,
                },
            ],
        );
        let source = include_str!("tile_render.wgsl").replace("SCENE_DEPTH_TEXTURE", depth_type);
        let module = shader_module(device, label, &source);
        let pipeline = compute_pipeline(device, label, &layout, &module, "tile_render");
        Self { layout, pipeline }
    }
}

impl TileRenderPass {
    pub fn new(device: &Device) -> Self {
        Self {
            single: Variant::new(device, false),
            multisampled: Variant::new(device, true),
        }
    }

    fn variant(&self, multisampled: bool) -> &Variant {
        if multisampled {
            &self.multisampled
        } else {
            &self.single
        }
    }

    pub fn bind_group(
        &self,
        device: &Device,
        view_uniform: &Buffer,
        projected: &Buffer,
        ranges: &Buffer,
        sorted_values: &Buffer,
        scene_depth: &TextureView,
        multisampled_depth: bool,
        splat_layer: &TextureView,
        tile_order: &Buffer,
        median_depth: &TextureView,
    ) -> BindGroup {
        bind_group(
            device,
            "splat tile render",
            &self.variant(multisampled_depth).layout,
            &[
                view_uniform.as_entire_binding(),
                projected.as_entire_binding(),
                ranges.as_entire_binding(),
                sorted_values.as_entire_binding(),
                wgpu::BindingResource::TextureView(scene_depth),
                wgpu::BindingResource::TextureView(splat_layer),
                tile_order.as_entire_binding(),
                wgpu::BindingResource::TextureView(median_depth),
            ],
        )
    }

    /// One workgroup per tile of the `tiles` grid.
    pub fn encode(
        &self,
        pass: &mut ComputePass<'_>,
        bind_group: &BindGroup,
        multisampled_depth: bool,
        tiles: (u32, u32),
    ) {
        pass.set_pipeline(&self.variant(multisampled_depth).pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(tiles.0, tiles.1, 1);
    }
}
