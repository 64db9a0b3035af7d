//! The splat layer of a view: the premultiplied colour and coverage its bands draw
//! and the composite blends over the camera's image.

use bevy::math::UVec2;
use wgpu::{Buffer, BufferUsages, Device, TextureView};

use crate::render::memory::{GpuBytes, SplatMemory};
use crate::render::passes::common::buffer;
use crate::render::passes::composite::CompositeUniform;
use crate::render::passes::tile_render::{MEDIAN_DEPTH_FORMAT, SPLAT_LAYER_FORMAT};

/// Bytes per pixel of the splat layer.
const LAYER_PIXEL_BYTES: u64 = 16;

/// The premultiplied colour and coverage the tile render writes and the composite
/// blends over the main texture, one texel per viewport pixel.
pub struct SplatLayer {
    pub viewport: UVec2,
    pub view: TextureView,
    /// Each pixel's median depth in the depth buffer's terms (0: the ray never reached
    /// the median), for `SplatDepth`; a 1×1 stand-in otherwise.
    pub median_depth: TextureView,
    pub has_median_depth: bool,
    pub composite_params: Buffer,
    _bytes: GpuBytes,
}

impl SplatLayer {
    pub fn new(device: &Device, memory: &SplatMemory, viewport: UVec2, median_depth: bool) -> Self {
        let (width, height) = (viewport.x.max(1), viewport.y.max(1));
        let (depth_width, depth_height) = if median_depth {
            (width, height)
        } else {
            (1, 1)
        };
        let depth_texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("splat median depth"),
            size: wgpu::Extent3d {
                width: depth_width,
                height: depth_height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: MEDIAN_DEPTH_FORMAT,
            usage: wgpu::TextureUsages::STORAGE_BINDING | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("splat layer"),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: SPLAT_LAYER_FORMAT,
            usage: wgpu::TextureUsages::STORAGE_BINDING | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let composite_params = buffer(
            device,
            "splat composite",
            16,
            BufferUsages::UNIFORM | BufferUsages::COPY_DST,
        );
        let bytes = u64::from(width) * u64::from(height) * LAYER_PIXEL_BYTES
            + u64::from(depth_width) * u64::from(depth_height) * 4
            + composite_params.size();
        Self {
            viewport,
            view: texture.create_view(&Default::default()),
            median_depth: depth_texture.create_view(&Default::default()),
            has_median_depth: median_depth,
            composite_params,
            _bytes: memory.track(bytes),
        }
    }
}

impl SplatLayer {
    /// Where the viewport sits in the target, and whether to take the layer's sRGB
    /// values to linear light.
    pub fn write_params(&self, queue: &wgpu::Queue, origin: UVec2, linearize: bool) {
        let params = CompositeUniform {
            viewport_origin: origin.to_array(),
            linearize: u32::from(linearize),
            _pad: 0,
        };
        queue.write_buffer(&self.composite_params, 0, bytemuck::bytes_of(&params));
    }
}
