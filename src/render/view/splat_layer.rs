//! The splat layer of a view: the premultiplied colour and coverage its bands draw
//! and the composite blends over the camera's image, and the median depth that
//! `SplatDepth` and the shadow maps take.

use bevy::math::UVec2;
use wgpu::{Buffer, BufferUsages, Device, TextureView};

use crate::render::memory::{GpuBytes, SplatMemory};
use crate::render::passes::common::buffer;
use crate::render::passes::composite::CompositeUniform;
use crate::render::passes::tile_render::{MEDIAN_DEPTH_FORMAT, SPLAT_LAYER_FORMAT, tiles_for};

/// Bytes per pixel of the splat layer.
const LAYER_PIXEL_BYTES: u64 = 16;

/// Which of the layer's images a view reads; the others are 1×1 stand-ins that the
/// tile render's writes land on unread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LayerOutputs {
    /// The colour and coverage the composite blends (camera views).
    pub colour: bool,
    /// The median depth (`SplatDepth`, shadow views).
    pub median_depth: bool,
}

impl LayerOutputs {
    /// A camera's: colour, and median depth if it has `SplatDepth`.
    pub const fn camera(median_depth: bool) -> Self {
        Self {
            colour: true,
            median_depth,
        }
    }

    /// A shadow map's: the surface's depth alone.
    #[cfg_attr(not(feature = "shadows"), allow(dead_code))]
    pub const SHADOW: Self = Self {
        colour: false,
        median_depth: true,
    };
}

/// The premultiplied colour and coverage the tile render writes and the composite
/// blends over the main texture, one texel per viewport pixel.
pub struct SplatLayer {
    pub viewport: UVec2,
    pub view: TextureView,
    /// Each pixel's median depth in the depth buffer's terms (0: the ray never reached
    /// the median), for `SplatDepth`; a 1×1 stand-in otherwise.
    pub median_depth: TextureView,
    pub outputs: LayerOutputs,
    _bytes: GpuBytes,
}

impl SplatLayer {
    pub fn new(
        device: &Device,
        memory: &SplatMemory,
        viewport: UVec2,
        outputs: LayerOutputs,
    ) -> Self {
        let full = (viewport.x.max(1), viewport.y.max(1));
        let (width, height) = if outputs.colour { full } else { (1, 1) };
        let (depth_width, depth_height) = if outputs.median_depth { full } else { (1, 1) };
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
            // Copied out by a shadow view that keeps its surface (`shadows::still`).
            usage: wgpu::TextureUsages::STORAGE_BINDING
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
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
        let bytes = u64::from(width) * u64::from(height) * LAYER_PIXEL_BYTES
            + u64::from(depth_width) * u64::from(depth_height) * 4;
        Self {
            viewport,
            view: texture.create_view(&Default::default()),
            median_depth: depth_texture.create_view(&Default::default()),
            outputs,
            _bytes: memory.track(bytes),
        }
    }
}

/// How a view's passes that read its layer place it: a uniform of the view's own,
/// since views of one size share a layer but not their place in their targets.
pub struct LayerParams {
    pub buffer: Buffer,
    _bytes: GpuBytes,
}

impl LayerParams {
    pub fn new(device: &Device, memory: &SplatMemory) -> Self {
        let buffer = buffer(
            device,
            "splat composite",
            size_of::<CompositeUniform>() as u64,
            BufferUsages::UNIFORM | BufferUsages::COPY_DST,
        );
        let bytes = buffer.size();
        Self {
            buffer,
            _bytes: memory.track(bytes),
        }
    }

    /// Where the view's `viewport` (the layer's, in its texels) sits in the target,
    /// how many target texels a side each layer texel covers (`texel_scale`), whether
    /// to take the layer's sRGB values to linear light, and the target's format.
    pub fn write(
        &self,
        queue: &wgpu::Queue,
        (origin, viewport, texel_scale): (UVec2, UVec2, u32),
        linearize: bool,
        format: wgpu::TextureFormat,
    ) {
        let whole = [0, 0, viewport.x, viewport.y];
        self.write_placed(
            queue,
            (origin, texel_scale),
            (whole, viewport),
            linearize,
            format,
        );
    }

    /// The same for a view drawn in one cell of a layer that holds several
    /// (`render::shadows::cells`): its `cell` (first pixel, size) of a layer
    /// `layer_size` in its texels, read into a depth target.
    pub fn write_cell(
        &self,
        queue: &wgpu::Queue,
        (origin, texel_scale): (UVec2, u32),
        (cell, layer_size): ([u32; 4], UVec2),
        format: wgpu::TextureFormat,
    ) {
        self.write_placed(
            queue,
            (origin, texel_scale),
            (cell, layer_size),
            false,
            format,
        );
    }

    /// A view's `cell` of a layer `layer_size` (the whole layer for a view of its
    /// own), placed at `origin` in the target.
    fn write_placed(
        &self,
        queue: &wgpu::Queue,
        (origin, texel_scale): (UVec2, u32),
        (cell, layer_size): ([u32; 4], UVec2),
        linearize: bool,
        format: wgpu::TextureFormat,
    ) {
        let params = CompositeUniform {
            viewport_origin: origin.to_array(),
            linearize: u32::from(linearize),
            srgb_levels: CompositeUniform::srgb_levels(format),
            tiles_across: tiles_for(layer_size).x,
            viewport_size: [cell[2], cell[3]],
            texel_scale: texel_scale.max(1),
            cell_origin: [cell[0], cell[1]],
            _pad_cell: [0; 2],
        };
        queue.write_buffer(&self.buffer, 0, bytemuck::bytes_of(&params));
    }
}

/// A copy of the view's colour under its viewport, which the composite reads to blend
/// the layer over the scene in sRGB values (`CompositeMode::OverScene`); kept while the
/// target's format and the viewport's size stay the same.
///
/// A target that stores sRGB-encoded bytes is copied into a texture of the same bytes
/// without the sRGB view (a copy between the two is allowed), so the composite reads
/// the stored sRGB values themselves rather than decoding them to linear light and
/// encoding them back, which is exact only to a fraction of a level.
#[derive(bevy::ecs::component::Component)]
pub struct SceneCopy {
    pub texture: wgpu::Texture,
    pub view: TextureView,
    _bytes: GpuBytes,
}

impl SceneCopy {
    /// Whether this copy serves a view of `format` and `viewport`.
    pub fn fits(&self, format: wgpu::TextureFormat, viewport: UVec2) -> bool {
        self.texture.format() == format.remove_srgb_suffix()
            && self.texture.size() == Self::extent(viewport)
    }

    fn extent(viewport: UVec2) -> wgpu::Extent3d {
        wgpu::Extent3d {
            width: viewport.x.max(1),
            height: viewport.y.max(1),
            depth_or_array_layers: 1,
        }
    }

    /// A copy for a view of `format` and `viewport`.
    pub fn new(
        device: &Device,
        memory: &SplatMemory,
        format: wgpu::TextureFormat,
        viewport: UVec2,
    ) -> Self {
        let size = Self::extent(viewport);
        let format = format.remove_srgb_suffix();
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("splat composite scene copy"),
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let pixel_bytes = u64::from(format.block_copy_size(None).unwrap_or(16));
        let bytes = u64::from(size.width) * u64::from(size.height) * pixel_bytes;
        Self {
            view: texture.create_view(&Default::default()),
            texture,
            _bytes: memory.track(bytes),
        }
    }

    /// Records the copy of `main` (the view's main texture, single-sampled: with MSAA
    /// the resolved one, which the opaque pass left current) under the viewport.
    pub fn copy_from(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        main: &wgpu::Texture,
        origin: UVec2,
    ) {
        encoder.copy_texture_to_texture(
            wgpu::TexelCopyTextureInfo {
                texture: main,
                mip_level: 0,
                origin: wgpu::Origin3d {
                    x: origin.x,
                    y: origin.y,
                    z: 0,
                },
                aspect: wgpu::TextureAspect::All,
            },
            self.texture.as_image_copy(),
            self.texture.size(),
        );
    }
}
