//! preprocess: projects each cloud's splats into the view, culls them, evaluates
//! their colour and counts the tiles each touches (compacted output).

use bevy::render::render_resource::BindGroupLayoutDescriptor;
use bytemuck::{Pod, Zeroable};
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::common::{ShaderChecks, grid_for, slice, storage, uniform};
use super::indirect::COUNTERS_SIZE;
use super::library::{ShaderDef, wgsl_file};
use crate::lod::cut::{LOD_BINS, LOD_BINS_PER_OCTAVE, LOD_FEEDBACK_WORDS, LOD_LOWEST_OCTAVE};
use crate::render::compact::{COMPACT_GEOMETRY_WORDS, POSITION_BLOCK, POSITION_BOX_WORDS};
use crate::shader::SplatShaderId;

/// Bits of a depth key the sort orders by. A key is a positive float's bit pattern
/// (view distance, 31 bits); the preprocess records the smallest and largest it
/// wrote, and the sort orders by the top 24 bits of (key − smallest): three passes
/// instead of four. Exact while the frame's distances span less than 2^24 float steps
/// (two octaves, e.g. 5 to 20 m); beyond, splats whose distances agree to the span's
/// top 24 bits (about 1e-6 relative for a 1 : 1000 range) keep their input order.
pub const DEPTH_KEY_BITS: u32 = 24;

/// Where one cloud stands relative to the view (`CloudInstance` in WGSL).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct CloudInstance {
    /// Camera space (x right, y down, z forward) from the cloud's own frame.
    pub cam_from_cloud: [[f32; 4]; 4],
    /// Camera centre in the cloud's frame (w unused).
    pub camera_in_cloud: [f32; 4],
    /// 1: scale opacities by the 2-D filter's compensation (`SplatRasterMode`).
    pub antialiased: u32,
    /// For a cloud with a `SplatShader`: the time it is given, in seconds.
    pub shader_time: f32,
    /// `SplatLighting`: [`LIGHTING_UNLIT`], [`LIGHTING_SHADOWED`] or [`LIGHTING_LIT`],
    /// with [`LIGHTING_RECEIVES_SHADOWS`] unless the cloud has `NotShadowReceiver`.
    pub lighting: u32,
    /// `SplatLighting::Shadowed`'s strength (1 for `Lit`).
    pub lighting_strength: f32,
    /// Colour (rgb) and opacity (a) multipliers (`SplatTint`).
    pub tint: [f32; 4],
    /// How many of `crops` act, and how many of those keep (the rest cut).
    pub crop_count: u32,
    pub crop_keeps: u32,
    /// The layer cell its splats are drawn in: 0 but for a light's cascades drawn
    /// together (`render::shadows::cells`).
    pub cell: u32,
    pub _pad_crop: u32,
    pub crops: [CropGpu; MAX_CROP_VOLUMES_GPU],
    /// For a cloud with a `SplatShader`: world space from the cloud's frame, and the
    /// shader's parameters.
    pub world_from_cloud: [[f32; 4]; 4],
    pub shader_params: [[f32; 4]; 2],
}

/// A cloud whose trained colours are drawn as they are.
pub const LIGHTING_UNLIT: u32 = 0;
/// Trained colours, darkened where casters block the lights.
pub const LIGHTING_SHADOWED: u32 = 1;
/// Trained colours as albedo under the scene's lights.
pub const LIGHTING_LIT: u32 = 2;
/// The bits of `CloudInstance::lighting` that hold the mode.
pub const LIGHTING_MODE_MASK: u32 = 0xff;
/// Set where the cloud samples the shadow maps (it has no `NotShadowReceiver`).
pub const LIGHTING_RECEIVES_SHADOWS: u32 = 0x100;

/// Bytes of one `LitPoint` (`preprocess_types.wgsl`), what the `RECEIVE` variant
/// writes per projected splat for the light pass.
pub const LIT_POINT_BYTES: u64 = 32;

/// Crop volumes per cloud on the GPU (`SplatCrop` volumes past it are ignored).
pub const MAX_CROP_VOLUMES_GPU: usize = 4;

/// One crop volume as the preprocess tests it (`CropVolume` in WGSL).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct CropGpu {
    /// Into the unit cube `[-1, 1]³` (a box) or the unit ball (a sphere).
    pub unit_from_cloud: [[f32; 4]; 4],
    /// [`CROP_EMPTY`], [`CROP_BOX`] or [`CROP_SPHERE`].
    pub shape: u32,
    /// 1: cut what is inside; 0: keep it.
    pub cut: u32,
    pub _pad: [u32; 2],
}

/// A volume that contains nothing (zero or negative size).
pub const CROP_EMPTY: u32 = 0;
pub const CROP_BOX: u32 = 1;
pub const CROP_SPHERE: u32 = 2;

/// One preprocess dispatch: a chunk of an asset, drawn for a run of instances
/// (`ChunkParams` in WGSL).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct ChunkParams {
    pub splat_count: u32,
    pub sh_degree: u32,
    pub sh_stride: u32,
    pub grid_width: u32,
    pub first_instance: u32,
    pub instance_count: u32,
    /// Words of SH data per splat.
    pub sh_words: u32,
    /// 1 when the words hold pairs of f16, 0 when each is one f32.
    pub sh_half: u32,
    /// The chunk's first splat in its asset (for an interior chunk of a level-of-detail
    /// tree, the first node's id).
    pub first_splat: u32,
    /// With level of detail: [`LOD_LEAF_RECORDS`], [`LOD_INTERIOR_RECORDS`] or
    /// [`LOD_PAGE_RECORDS`].
    pub lod_records: u32,
    /// 1 where this dispatch counts for the view's LOD feedback (band 0).
    pub lod_feedback: u32,
    /// The cut's threshold (a node size; 0 draws the leaves alone).
    pub lod_threshold: f32,
    /// Half the blend's width, in octaves of node size.
    pub lod_half_octaves: f32,
    /// The run of the chunk's splats this dispatch draws: its first and how many (the
    /// whole chunk, except where a cut can reach only part of it, `lod_reach.rs`).
    pub run_first: u32,
    pub run_count: u32,
    pub _pad: u32,
}

/// A chunk of leaves: one record (the parent's sphere) per node.
pub const LOD_LEAF_RECORDS: u32 = 1;
/// A chunk of interior nodes: two records (its sphere, its parent's) per node.
pub const LOD_INTERIOR_RECORDS: u32 = 2;
/// A streamed page's records (`streaming/table.rs`): as interior nodes', then a third
/// vec4 per node, its fade (`x` scales its children's share, `y` its own weight).
pub const LOD_PAGE_RECORDS: u32 = 3;
/// GPU bytes of one streamed node's records (`LOD_PAGE_RECORDS` vec4s).
pub const LOD_PAGE_RECORD_BYTES: u64 = LOD_PAGE_RECORDS as u64 * 16;

/// Bytes of one projected splat (`ProjectedSplat` in `common.wgsl`).
pub const PROJECTED_SPLAT_BYTES: u64 = 32;

/// Uniform offsets must be multiples of this on every adapter.
pub const CHUNK_PARAMS_STRIDE: u64 = 256;

/// The sizes the preprocess's modules share with the host's layouts, from their one
/// definition here and in `compact.rs`, as shader defs (every module gets them).
pub(crate) fn shared_defs() -> [ShaderDef; 12] {
    [
        ShaderDef::UInt("LIGHTING_UNLIT", LIGHTING_UNLIT),
        ShaderDef::UInt("LIGHTING_SHADOWED", LIGHTING_SHADOWED),
        ShaderDef::UInt("LIGHTING_LIT", LIGHTING_LIT),
        ShaderDef::UInt("LIGHTING_MODE_MASK", LIGHTING_MODE_MASK),
        ShaderDef::UInt("LIGHTING_RECEIVES_SHADOWS", LIGHTING_RECEIVES_SHADOWS),
        ShaderDef::UInt("MAX_CROP_VOLUMES", MAX_CROP_VOLUMES_GPU as u32),
        ShaderDef::UInt("POSITION_BLOCK", POSITION_BLOCK as u32),
        ShaderDef::UInt("POSITION_BOX_WORDS", POSITION_BOX_WORDS as u32),
        ShaderDef::UInt("COMPACT_GEOMETRY_WORDS", COMPACT_GEOMETRY_WORDS as u32),
        ShaderDef::UInt("LOD_BINS", LOD_BINS as u32),
        ShaderDef::UInt("LOD_BINS_PER_OCTAVE", LOD_BINS_PER_OCTAVE.unsigned_abs()),
        ShaderDef::UInt("LOD_OCTAVE_OFFSET", LOD_LOWEST_OCTAVE.unsigned_abs()),
    ]
}

pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("preprocess.wgsl"),
    checks: ShaderChecks::All,
};

/// The shader defs of the preprocess for an asset in the compact layout.
pub(crate) const COMPACT_LAYOUT: ShaderDef = ShaderDef::Flag("COMPACT_LAYOUT");
/// The shader def of a preprocess that runs a cloud's `SplatShader`.
pub(crate) const WITH_SPLAT_SHADER: ShaderDef = ShaderDef::Flag("SPLAT_SHADER");
/// The shader def of a preprocess that draws a cut of a level-of-detail tree.
pub(crate) const LOD: ShaderDef = ShaderDef::Flag("LOD");

/// The shader def of a preprocess that also writes each projected splat's `LitPoint`,
/// for a view whose clouds receive light.
pub(crate) const RECEIVE: ShaderDef = ShaderDef::Flag("RECEIVE");
/// The binding of the `LitPoint`s in the `RECEIVE` variants.
const LIT_POINTS_BINDING: u32 = 12;

/// Storage buffers the `RECEIVE` variant binds in one stage: one more than the plain
/// one, beyond WebGPU's default of 8 (with LOD, one more than [`LOD_STORAGE_BUFFERS`]).
pub const RECEIVE_STORAGE_BUFFERS: u32 = 9;

/// Storage buffers the LOD variant binds in one stage: two more than the others,
/// beyond WebGPU's default of 8 (most adapters offer 10 or more).
pub const LOD_STORAGE_BUFFERS: u32 = 10;

/// Bytes of a view's LOD feedback (`LodFeedback` in `preprocess_lod.wgsl`).
pub const LOD_FEEDBACK_BYTES: u64 = (LOD_FEEDBACK_WORDS * 4) as u64;

pub struct PreprocessPass {
    pub layout: BindGroupLayout,
    /// For assets in the full layouts (f32, or f16 SH) and in the compact one.
    plain: LayoutPipelines,
    /// The LOD variants and their layout; `None` on a device with fewer than
    /// [`LOD_STORAGE_BUFFERS`] storage buffers per stage.
    lod: Option<(BindGroupLayout, LayoutPipelines)>,
    /// Per registered `SplatShader`, in id order: its variants, or `None` where its
    /// WGSL did not compile (its clouds are drawn without it).
    shaders: Vec<Option<LayoutPipelines>>,
    /// The `RECEIVE` variants, built once some view first draws a cloud that receives
    /// light (`render::lighting`); `None` until then.
    receive: Option<ReceiveVariants>,
}

/// The preprocess variants that also write `LitPoint`s, with their layouts.
pub(crate) struct ReceiveVariants {
    layout: BindGroupLayout,
    plain: LayoutPipelines,
    /// `None` on a device without the storage buffers LOD and `RECEIVE` need together.
    lod: Option<(BindGroupLayout, LayoutPipelines)>,
    /// Per registered `SplatShader`, as [`PreprocessPass`]'s own.
    shaders: Vec<Option<LayoutPipelines>>,
}

// Built by `render::lighting`, which the `shadows` feature brings.
#[cfg_attr(not(feature = "shadows"), allow(dead_code))]
impl ReceiveVariants {
    /// The `RECEIVE` variants of the built-in preprocess (the splat shaders' are set
    /// with [`Self::with_splat_shaders`]), or `None` while they compile or on a
    /// device with fewer than [`RECEIVE_STORAGE_BUFFERS`] storage buffers per stage.
    pub fn new(builder: &mut dyn PipelineBuilder) -> Option<Self> {
        let storage_buffers = builder
            .device()
            .limits()
            .max_storage_buffers_per_shader_stage;
        if storage_buffers < RECEIVE_STORAGE_BUFFERS {
            return None;
        }
        let layout = receive_layout(layout_descriptor());
        let plain = layout_pipelines(builder, &layout, "splat preprocess (receive)", &[RECEIVE]);
        let lod = if storage_buffers > LOD_STORAGE_BUFFERS {
            let lod_layout = receive_layout(lod_layout_descriptor());
            let pipelines = layout_pipelines(
                builder,
                &lod_layout,
                "splat preprocess (LOD, receive)",
                &[LOD, RECEIVE],
            );
            Some((builder.layout(&lod_layout), pipelines?))
        } else {
            None
        };
        Some(Self {
            layout: builder.layout(&layout),
            plain: plain?,
            lod,
            shaders: Vec::new(),
        })
    }

    /// With the app's splat shaders' `RECEIVE` variants, in id order.
    pub fn with_splat_shaders(mut self, shaders: Vec<Option<LayoutPipelines>>) -> Self {
        self.shaders = shaders;
        self
    }

    /// Whether a view drawing LOD cuts can receive light on this device.
    pub fn supports_lod(&self) -> bool {
        self.lod.is_some()
    }
}

/// The full and compact pipelines of one variant of the preprocess.
fn layout_pipelines(
    builder: &mut dyn PipelineBuilder,
    layout: &BindGroupLayoutDescriptor,
    label: &'static str,
    defs: &[ShaderDef],
) -> Option<LayoutPipelines> {
    let compact_defs: Vec<ShaderDef> = defs.iter().copied().chain([COMPACT_LAYOUT]).collect();
    let full = builder.kernel(&Kernel {
        label,
        layout,
        shader: SHADER,
        entry_point: "preprocess",
        defs,
    });
    let compact = builder.kernel(&Kernel {
        label,
        layout,
        shader: SHADER,
        entry_point: "preprocess",
        defs: &compact_defs,
    });
    Some(LayoutPipelines {
        full: full?,
        compact: compact?,
    })
}

/// `base` with the `LitPoint`s bound.
pub(crate) fn receive_layout(mut base: BindGroupLayoutDescriptor) -> BindGroupLayoutDescriptor {
    base.label = format!("{} (receive)", base.label).into();
    base.entries.push(storage(LIT_POINTS_BINDING, false));
    base
}

/// Which preprocess a dispatch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreprocessVariant {
    /// Every splat of the chunk.
    Plain,
    /// Every splat, through an app's `SplatShader`.
    Shader(SplatShaderId),
    /// The nodes of a level-of-detail tree's cut.
    Lod,
}

/// One preprocess variant for each storage layout.
pub(crate) struct LayoutPipelines {
    pub full: ComputePipeline,
    pub compact: ComputePipeline,
}

/// The preprocess's bind group layout.
pub(crate) fn layout_descriptor() -> BindGroupLayoutDescriptor {
    BindGroupLayoutDescriptor::new(
        "splat preprocess",
        &[
            uniform(0, false),
            uniform(1, true),
            storage(2, true),
            storage(3, true),
            storage(4, false),
            storage(5, false),
            storage(6, true),
            storage(7, false),
            storage(8, false),
            storage(9, false),
        ],
    )
}

/// The LOD variant's layout: the plain one, the nodes' records and the view's feedback.
pub(crate) fn lod_layout_descriptor() -> BindGroupLayoutDescriptor {
    let mut descriptor = layout_descriptor();
    descriptor.label = "splat preprocess (LOD)".into();
    descriptor
        .entries
        .extend([storage(10, true), storage(11, false)]);
    descriptor
}

impl PreprocessPass {
    /// The preprocess without splat shaders, or `None` while it is being compiled.
    pub fn new(builder: &mut dyn PipelineBuilder) -> Option<Self> {
        let layout = layout_descriptor();
        let plain = layout_pipelines(builder, &layout, "splat preprocess", &[]);
        let lod_capable = builder
            .device()
            .limits()
            .max_storage_buffers_per_shader_stage
            >= LOD_STORAGE_BUFFERS;
        let lod = if lod_capable {
            let lod_layout = lod_layout_descriptor();
            let pipelines =
                layout_pipelines(builder, &lod_layout, "splat preprocess (LOD)", &[LOD]);
            Some((builder.layout(&lod_layout), pipelines?))
        } else {
            None
        };
        Some(Self {
            layout: builder.layout(&layout),
            plain: plain?,
            lod,
            shaders: Vec::new(),
            receive: None,
        })
    }

    /// Sets the `RECEIVE` variants, once built.
    #[cfg_attr(not(feature = "shadows"), allow(dead_code))]
    pub fn set_receive(&mut self, receive: ReceiveVariants) {
        self.receive = Some(receive);
    }

    /// The `RECEIVE` variants, once built.
    pub fn receive(&self) -> Option<&ReceiveVariants> {
        self.receive.as_ref()
    }

    /// Whether this device draws level-of-detail cuts (`SplatLod`).
    pub fn supports_lod(&self) -> bool {
        self.lod.is_some()
    }

    /// The variants of an app's splat shaders, in id order (`None` for one that did
    /// not compile).
    pub fn set_splat_shaders(&mut self, shaders: Vec<Option<LayoutPipelines>>) {
        self.shaders = shaders;
    }

    /// The bind group of a chunk drawn as a cut of its level-of-detail tree: the plain
    /// one's buffers (`plain`, in [`Self::bind_group`]'s order) with the chunk's node
    /// records and the view's feedback. `None` where the device has no LOD variant.
    /// With `lit_points`, the `RECEIVE` variant's (`None` where it is not built).
    pub fn lod_bind_group(
        &self,
        device: &Device,
        plain: [&Buffer; 10],
        (records, feedback): (&Buffer, &Buffer),
        lit_points: Option<&Buffer>,
    ) -> Option<BindGroup> {
        let layout = match lit_points {
            None => &self.lod.as_ref()?.0,
            Some(_) => &self.receive.as_ref()?.lod.as_ref()?.0,
        };
        let lod = [
            (10, records.as_entire_binding()),
            (11, slice(feedback, 0, LOD_FEEDBACK_BYTES)),
        ];
        Some(Self::bind(
            device,
            "splat preprocess (LOD)",
            layout,
            (0..).zip(Self::entries(plain)).chain(lod),
            lit_points,
        ))
    }

    /// A bind group of `numbered` (binding, resource) entries, and the `LitPoint`s.
    fn bind<'a>(
        device: &Device,
        label: &str,
        layout: &BindGroupLayout,
        numbered: impl Iterator<Item = (u32, wgpu::BindingResource<'a>)>,
        lit_points: Option<&'a Buffer>,
    ) -> BindGroup {
        let lit_points = lit_points.map(|buffer| (LIT_POINTS_BINDING, buffer.as_entire_binding()));
        let entries: Vec<_> = numbered
            .chain(lit_points)
            .map(|(binding, resource)| wgpu::BindGroupEntry { binding, resource })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout,
            entries: &entries,
        })
    }

    /// The plain layout's bindings of `buffers`, in [`Self::bind_group`]'s order.
    fn entries(buffers: [&Buffer; 10]) -> [wgpu::BindingResource<'_>; 10] {
        let [
            view_uniform,
            chunk_params,
            geometry,
            sh,
            projected,
            counters,
            instances,
            depth_keys,
            depth_values,
            sources,
        ] = buffers;
        [
            view_uniform.as_entire_binding(),
            slice(chunk_params, 0, size_of::<ChunkParams>() as u64),
            geometry.as_entire_binding(),
            sh.as_entire_binding(),
            projected.as_entire_binding(),
            slice(counters, 0, COUNTERS_SIZE),
            instances.as_entire_binding(),
            depth_keys.as_entire_binding(),
            depth_values.as_entire_binding(),
            sources.as_entire_binding(),
        ]
    }

    /// Binds one chunk of an asset's splats, and the view's instances, to its outputs:
    /// the view uniform, the chunk parameters, the chunk's geometry and SH, the
    /// projected splats, the counters, the instances, the depth keys (with room for
    /// the spilled pair counts after the splat capacity), the depth values and the
    /// pick sources; with `lit_points`, for the `RECEIVE` variant (`None`
    /// where it is not built).
    pub fn bind_group(
        &self,
        device: &Device,
        buffers: [&Buffer; 10],
        lit_points: Option<&Buffer>,
    ) -> Option<BindGroup> {
        let layout = match lit_points {
            None => &self.layout,
            Some(_) => &self.receive.as_ref()?.layout,
        };
        Some(Self::bind(
            device,
            "splat preprocess",
            layout,
            (0..).zip(Self::entries(buffers)),
            lit_points,
        ))
    }

    /// The x width (in threads) of the grid that `threads` threads need.
    pub fn grid_width(threads: u32) -> u32 {
        grid_for(threads).0 * super::common::WORKGROUP_SIZE
    }

    /// Records one dispatch of `threads` threads (splats × instances); `params_offset`
    /// selects its `ChunkParams`, `compact` the asset's layout and `variant` the
    /// instances' `SplatShader` (one it could not build, or does not know, runs as
    /// none) or the LOD cut (whose bind group is a [`Self::lod_bind_group`]);
    /// `receive`, the `RECEIVE` variant (its bind group made with `LitPoint`s).
    pub fn encode(
        &self,
        pass: &mut ComputePass<'_>,
        bind_group: &BindGroup,
        params_offset: u32,
        threads: u32,
        (compact, variant, receive): (bool, PreprocessVariant, bool),
    ) {
        let (x, y) = grid_for(threads);
        if x == 0 {
            return;
        }
        let (plain, lod, shaders) = match (receive, &self.receive) {
            (true, Some(receive)) => (&receive.plain, receive.lod.as_ref(), &receive.shaders),
            _ => (&self.plain, self.lod.as_ref(), &self.shaders),
        };
        let pipelines = match variant {
            PreprocessVariant::Plain => plain,
            PreprocessVariant::Shader(id) => shaders
                .get(id.0 as usize)
                .and_then(Option::as_ref)
                .unwrap_or(plain),
            PreprocessVariant::Lod => match lod {
                Some((_, pipelines)) => pipelines,
                None => return,
            },
        };
        pass.set_pipeline(if compact {
            &pipelines.compact
        } else {
            &pipelines.full
        });
        pass.set_bind_group(0, bind_group, &[params_offset]);
        pass.dispatch_workgroups(x, y, 1);
    }
}
