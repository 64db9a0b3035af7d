//! Small helpers for building the compute passes on plain wgpu.

use std::num::NonZeroU64;

use wgpu::{
    BindGroup, BindGroupLayout, BindGroupLayoutEntry, BindingType, Buffer, BufferBindingType,
    BufferUsages, ComputePipeline, Device, ShaderStages,
};

use bevy::render::render_resource::BindGroupLayoutDescriptor;

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::library::ShaderDef;

/// Pixels on a side of a tile, for every pass (the shader def `TILE_SIZE`).
/// Measured on the H200 (BENCHMARKS.md): 8×8 tiles make 1.6× the tile pairs of 16×16
/// but blend 2.6× fewer splat-pixels, and the tile render takes 1.15 instead of 2.75 ms
/// at K = 9; the image is the same (every splat reaching a pixel is in its tile's list
/// either way).
pub const TILE_SIZE: u32 = 8;

/// Pixels on a side of a bin, 2×2 tiles: the pairs are made and sorted per bin, then
/// split into the tiles' lists (`tile_split`). Measured on the H200 (BENCHMARKS.md):
/// 0.64× the pairs of one per tile, and the tile render reads the same lists.
pub const BIN_SIZE: u32 = 2 * TILE_SIZE;

/// Classes of tiles by their pair count (the shader def `WORK_CLASSES`, see
/// `work_class` in `common.wgsl`): the tile split files each tile in
/// one, the tile order launches the busiest classes first.
pub const WORK_CLASSES: u32 = 64;

/// Pairs of one chunk of a tile's list (the shader def `TILE_CHUNK_PAIRS`): in a
/// shadow view, a tile with at least this many is drawn by one workgroup per chunk
/// instead of one for the whole list (`tile_render.wgsl`). Seen from a light far away,
/// a cloud of 71 K splats falls into a few tiles, and one workgroup walking such a
/// list held up the whole shadow view (BENCHMARKS.md, the far cascade).
pub const TILE_CHUNK_PAIRS: u32 = 2048;

/// Threads per workgroup of the one-dimensional passes (the shader def
/// `WORKGROUP_SIZE`).
pub const WORKGROUP_SIZE: u32 = 256;

/// The most workgroups a dispatch may have in one dimension.
pub const MAX_GROUPS_PER_DIMENSION: u32 = 65_535;

pub use super::library::ShaderChecks;

/// A storage buffer visible to compute shaders.
pub fn storage(binding: u32, read_only: bool) -> BindGroupLayoutEntry {
    BindGroupLayoutEntry {
        binding,
        visibility: ShaderStages::COMPUTE,
        ty: BindingType::Buffer {
            ty: BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A uniform buffer visible to compute shaders.
pub fn uniform(binding: u32, dynamic: bool) -> BindGroupLayoutEntry {
    BindGroupLayoutEntry {
        binding,
        visibility: ShaderStages::COMPUTE,
        ty: BindingType::Buffer {
            ty: BufferBindingType::Uniform,
            has_dynamic_offset: dynamic,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A compute binding of a 2-D storage texture of `format` that the pass only writes.
pub fn write_only_texture(binding: u32, format: wgpu::TextureFormat) -> BindGroupLayoutEntry {
    BindGroupLayoutEntry {
        binding,
        visibility: ShaderStages::COMPUTE,
        ty: BindingType::StorageTexture {
            access: wgpu::StorageTextureAccess::WriteOnly,
            format,
            view_dimension: wgpu::TextureViewDimension::D2,
        },
        count: None,
    }
}

/// A bind group whose entries are `resources` at bindings 0, 1, 2, ...
pub fn bind_group(
    device: &Device,
    label: &str,
    layout: &BindGroupLayout,
    resources: &[wgpu::BindingResource<'_>],
) -> BindGroup {
    let entries: Vec<_> = resources
        .iter()
        .enumerate()
        .map(|(binding, resource)| wgpu::BindGroupEntry {
            binding: binding as u32,
            resource: resource.clone(),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}

/// `size` bytes of `buffer` from `offset`, as a binding.
pub fn slice(buffer: &Buffer, offset: u64, size: u64) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer,
        offset,
        size: wgpu::BufferSize::new(size),
    })
}

/// Workgroups for `threads` threads of `WORKGROUP_SIZE`, as a grid that respects the
/// per-dimension limit: (x, y) with x ≤ 65,535. Kernels rebuild the linear index as
/// `gid.x + gid.y · x · WORKGROUP_SIZE`.
pub fn grid_for(threads: u32) -> (u32, u32) {
    let groups = threads.div_ceil(WORKGROUP_SIZE);
    if groups <= MAX_GROUPS_PER_DIMENSION {
        (groups, 1)
    } else {
        (
            MAX_GROUPS_PER_DIMENSION,
            groups.div_ceil(MAX_GROUPS_PER_DIMENSION),
        )
    }
}

/// A buffer of `size` bytes (at least 16).
pub fn buffer(device: &Device, label: &str, size: u64, usage: BufferUsages) -> Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        // Bindings of zero bytes are invalid; keep every buffer at least one word.
        size: size.max(16),
        usage,
        mapped_at_creation: false,
    })
}

/// Storage offsets rounded down to this many bytes are aligned on every device.
const STORAGE_OFFSET_ALIGNMENT: u64 = 256;

/// A binding that holds the u32 at `byte_offset` of `buffer`, and that u32's index in
/// it: the binding starts at the offset rounded down to 256 bytes, which satisfies
/// every device's storage offset alignment.
pub fn word_binding(buffer: &wgpu::Buffer, byte_offset: u64) -> (wgpu::BufferBinding<'_>, u32) {
    assert!(
        byte_offset.is_multiple_of(4) && byte_offset + 4 <= buffer.size(),
        "a u32 slot must be 4-byte aligned and inside its buffer (offset {byte_offset}, size {})",
        buffer.size()
    );
    let start = byte_offset - byte_offset % STORAGE_OFFSET_ALIGNMENT;
    let index = (byte_offset - start) / 4;
    (
        wgpu::BufferBinding {
            buffer,
            offset: start,
            size: NonZeroU64::new(byte_offset + 4 - start),
        },
        index as u32,
    )
}

/// A bind group entry for `buffer` at `binding`.
pub fn buffer_entry(binding: u32, buffer: wgpu::BufferBinding<'_>) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: wgpu::BindingResource::Buffer(buffer),
    }
}

/// A compute pass that reads the view's opaque depth (`scene_depth` in its WGSL),
/// compiled twice: for a single-sampled and for a multisampled depth buffer; and
/// optionally more variants, each under one more flag def, which bind the same bind
/// groups as the plain variant of their sample count.
pub struct SceneDepthVariants {
    single: (BindGroupLayout, ComputePipeline),
    multisampled: (BindGroupLayout, ComputePipeline),
    flagged: Vec<(FlagVariant, ComputePipeline)>,
}

/// One more variant of a [`SceneDepthVariants`]: the pass compiled with the flag defs
/// `defs`, for a multisampled depth buffer or a single-sampled one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlagVariant {
    pub defs: &'static [&'static str],
    pub multisampled: bool,
}

impl SceneDepthVariants {
    /// `entries` are the layout's other bindings; the depth texture is `depth_binding`,
    /// declared in `shader` under the shader def `MULTISAMPLED_DEPTH`; `defs` are the
    /// module's others; `flags`, the further variants.
    pub fn new(
        builder: &mut dyn PipelineBuilder,
        label: &str,
        (entries, depth_binding): (&[BindGroupLayoutEntry], u32),
        (shader, entry_point): (EntryShader, &'static str),
        defs: &[ShaderDef],
        flags: &[FlagVariant],
    ) -> Option<Self> {
        let mut variant = |multisampled: bool, flags: &[&'static str]| {
            let mut defs = defs.to_vec();
            let label = if multisampled {
                defs.push(ShaderDef::Flag("MULTISAMPLED_DEPTH"));
                format!("{label} (msaa depth)")
            } else {
                label.to_owned()
            };
            defs.extend(flags.iter().map(|&flag| ShaderDef::Flag(flag)));
            let kernel_label = match flags {
                [] => label.clone(),
                flags => format!("{label} ({})", flags.join(", ")),
            };
            let mut entries = entries.to_vec();
            entries.push(BindGroupLayoutEntry {
                binding: depth_binding,
                visibility: ShaderStages::COMPUTE,
                ty: BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Depth,
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled,
                },
                count: None,
            });
            // One descriptor per sample count: the builder makes one layout of it, which
            // the flagged variants share with the single-sampled one.
            let layout = BindGroupLayoutDescriptor::new(label, &entries);
            let pipeline = builder.kernel(&Kernel {
                label: &kernel_label,
                layout: &layout,
                shader,
                entry_point,
                defs: &defs,
            });
            Some((builder.layout(&layout), pipeline?))
        };
        let single = variant(false, &[]);
        let multisampled = variant(true, &[]);
        let flagged: Vec<_> = flags
            .iter()
            .map(|&flag| Some((flag, variant(flag.multisampled, flag.defs)?.1)))
            .collect();
        Some(Self {
            single: single?,
            multisampled: multisampled?,
            flagged: flagged.into_iter().collect::<Option<_>>()?,
        })
    }

    /// The variant compiled with `flag`, if it was asked for.
    pub fn flagged(&self, flag: FlagVariant) -> Option<&ComputePipeline> {
        self.flagged
            .iter()
            .find(|(f, _)| *f == flag)
            .map(|(_, pipeline)| pipeline)
    }

    fn variant(&self, multisampled: bool) -> &(BindGroupLayout, ComputePipeline) {
        if multisampled {
            &self.multisampled
        } else {
            &self.single
        }
    }

    pub fn layout(&self, multisampled: bool) -> &BindGroupLayout {
        &self.variant(multisampled).0
    }

    pub fn pipeline(&self, multisampled: bool) -> &ComputePipeline {
        &self.variant(multisampled).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_stay_within_the_dimension_limit() {
        assert_eq!(grid_for(0), (0, 1));
        assert_eq!(grid_for(1), (1, 1));
        assert_eq!(grid_for(256 * 65_535), (65_535, 1));
        assert_eq!(grid_for(256 * 65_535 + 1), (65_535, 2));
        let (x, y) = grid_for(u32::MAX);
        assert!(x <= MAX_GROUPS_PER_DIMENSION && y <= MAX_GROUPS_PER_DIMENSION);
        assert!(u64::from(x) * u64::from(y) * 256 >= u64::from(u32::MAX));
    }
}
