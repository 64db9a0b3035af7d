//! tile render: one workgroup per tile (8×8 pixels) blends its list of splats (from the
//! tile split) front to back into the view's splat layer, stopping at the opaque
//! scene's depth. Only the tiles some splat reaches are drawn (the tile order's
//! grid); the composite and the depth write read the layer at those tiles alone.

use bevy::math::UVec2;
use wgpu::{BindGroup, Buffer, ComputePass, Device, TextureFormat, TextureView};

use super::builder::{EntryShader, PipelineBuilder};
use super::common::{
    FlagVariant, SceneDepthVariants, ShaderChecks, TILE_SIZE, bind_group, storage, uniform,
    write_only_texture,
};
use super::indirect::{CHUNK_DISPATCH_OFFSET, TILE_DISPATCH_OFFSET};
use super::library::wgsl_file;
use super::tile_split::TileLists;

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

/// The tile render, compiled for a single-sampled and for a multisampled depth buffer.
/// Its loops run over a tile's range of pairs, in batches, and over constant counts;
/// it indexes workgroup arrays by thread or by a count below the batch, buffers by
/// tile and by the slots duplicate wrote, textures inside the viewport only.
pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("tile_render.wgsl"),
    checks: ShaderChecks::None,
};

/// The variant that writes the median depth alone (shadow views, single-sampled).
const SURFACE_ONLY: FlagVariant = FlagVariant {
    defs: &["SURFACE_ONLY"],
    multisampled: false,
};

/// The surface over the chunks of long tile lists, after [`CHUNK_TRANSMITTANCE`].
const TILE_CHUNKS: FlagVariant = FlagVariant {
    defs: &["SURFACE_ONLY", "TILE_CHUNKS"],
    multisampled: false,
};

/// Each chunk's transmittance, which the tile's later chunks start from.
const CHUNK_TRANSMITTANCE: FlagVariant = FlagVariant {
    defs: &["SURFACE_ONLY", "TILE_CHUNKS", "CHUNK_TRANSMITTANCE"],
    multisampled: false,
};

/// The variants that track the median depth beside the colour (`SplatDepth`); the
/// plain ones leave it out of the blend loop, where it costs a few instructions for
/// every splat at every pixel.
const MEDIAN_DEPTH: [FlagVariant; 2] = [
    FlagVariant {
        defs: &["MEDIAN_DEPTH"],
        multisampled: false,
    },
    FlagVariant {
        defs: &["MEDIAN_DEPTH"],
        multisampled: true,
    },
];

/// What a view's tile render writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileOutputs {
    /// The layer's colour and coverage.
    Colour,
    /// The colour and the median depth (`SplatDepth`).
    ColourAndMedian,
    /// The median depth alone, each pixel stopping there (shadow views).
    Surface,
}

impl TileOutputs {
    /// For a layer that keeps its colour, its median depth, or both.
    pub fn of(colour: bool, median_depth: bool) -> Self {
        match (colour, median_depth) {
            (false, _) => Self::Surface,
            (true, true) => Self::ColourAndMedian,
            (true, false) => Self::Colour,
        }
    }
}

pub struct TileRenderPass {
    variants: SceneDepthVariants,
}

impl TileRenderPass {
    pub fn new(builder: &mut dyn PipelineBuilder) -> Option<Self> {
        let entries = [
            uniform(0, false),
            storage(1, true),
            storage(2, true),
            storage(3, true),
            storage(6, true),
            write_only_texture(5, SPLAT_LAYER_FORMAT),
            write_only_texture(7, MEDIAN_DEPTH_FORMAT),
            storage(8, true),
            storage(9, true),
            storage(10, true),
            storage(11, false),
            uniform(12, false),
        ];
        Some(Self {
            variants: SceneDepthVariants::new(
                builder,
                "splat tile render",
                (&entries, 4),
                (SHADER, "tile_render"),
                &[],
                &[
                    SURFACE_ONLY,
                    TILE_CHUNKS,
                    CHUNK_TRANSMITTANCE,
                    MEDIAN_DEPTH[0],
                    MEDIAN_DEPTH[1],
                ],
            )?,
        })
    }

    pub fn bind_group(
        &self,
        device: &Device,
        view_uniform: &Buffer,
        projected: &Buffer,
        ranges: &Buffer,
        lists: &TileLists<'_>,
        scene_depth: &TextureView,
        multisampled_depth: bool,
        splat_layer: &TextureView,
        tile_order: &Buffer,
        median_depth: &TextureView,
        (tile_chunks, capacities): (&Buffer, &Buffer),
    ) -> BindGroup {
        bind_group(
            device,
            "splat tile render",
            self.variants.layout(multisampled_depth),
            &[
                view_uniform.as_entire_binding(),
                projected.as_entire_binding(),
                ranges.as_entire_binding(),
                lists.0[0].as_entire_binding(),
                wgpu::BindingResource::TextureView(scene_depth),
                wgpu::BindingResource::TextureView(splat_layer),
                tile_order.as_entire_binding(),
                wgpu::BindingResource::TextureView(median_depth),
                lists.0[1].as_entire_binding(),
                lists.0[2].as_entire_binding(),
                lists.0[3].as_entire_binding(),
                tile_chunks.as_entire_binding(),
                capacities.as_entire_binding(),
            ],
        )
    }

    /// One workgroup per tile some splat reaches, on the grid the tile order wrote
    /// into the band's `counters`, drawing `outputs` (the surface alone only over a
    /// single-sampled scene depth, as shadow views have); for the surface of a band
    /// with room for chunks (`chunked`), then the chunks of long tiles the tile order
    /// filed, in two dispatches.
    pub fn encode(
        &self,
        pass: &mut ComputePass<'_>,
        bind_group: &BindGroup,
        (multisampled_depth, outputs): (bool, TileOutputs),
        (counters, chunked): (&Buffer, bool),
    ) {
        let pipeline = match outputs {
            TileOutputs::Surface => self.variants.flagged(SURFACE_ONLY),
            TileOutputs::ColourAndMedian => self
                .variants
                .flagged(MEDIAN_DEPTH[usize::from(multisampled_depth)]),
            TileOutputs::Colour => None,
        };
        pass.set_pipeline(pipeline.unwrap_or(self.variants.pipeline(multisampled_depth)));
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups_indirect(counters, TILE_DISPATCH_OFFSET);
        if chunked && outputs == TileOutputs::Surface {
            for step in [CHUNK_TRANSMITTANCE, TILE_CHUNKS] {
                if let Some(pipeline) = self.variants.flagged(step) {
                    pass.set_pipeline(pipeline);
                    pass.dispatch_workgroups_indirect(counters, CHUNK_DISPATCH_OFFSET);
                }
            }
        }
    }
}
