//! The splat pipelines, through Bevy's `PipelineCache`.
//!
//! Every WGSL file of the passes is a shader asset embedded in the crate: the modules
//! passes `#import` are shader libraries (`library::load_library_modules`), each entry
//! file an asset made from its embedded text with its runtime checks (Bevy's shader
//! loader has no setting for those), and each of the app's splat shaders a variant
//! of the preprocess. Once the render world starts, [`queue_splat_pipelines`] asks the
//! passes for their pipelines every frame until all are ready: the first ask queues
//! them on the `PipelineCache`, which composes and compiles them on its tasks (or
//! before the frame ends, with `RenderPlugin { synchronous_pipeline_compilation: true,
//! .. }`), and until then the cameras draw their frames without splats, as Bevy's own
//! passes do.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bevy::app::App;
use bevy::asset::{Assets, Handle};
use bevy::ecs::prelude::*;
use bevy::ecs::reflect::ReflectResource;
use bevy::log::{error, info};
use bevy::platform::time::Instant;
use bevy::reflect::Reflect;
use bevy::reflect::prelude::ReflectDefault;
use bevy::render::render_resource::{
    BindGroupLayoutDescriptor, CachedComputePipelineId, CachedPipelineState,
    ComputePipelineDescriptor, Pipeline, PipelineCache,
};
use bevy::render::renderer::{RenderAdapterInfo, RenderDevice};
use bevy::shader::{Shader, ShaderDefVal, ValidateShader};

use super::passes::builder::{EntryShader, Kernel, PipelineBuilder};
use super::passes::library::{ShaderChecks, ShaderDef};
use super::passes::preprocess::{
    self, COMPACT_LAYOUT, LayoutPipelines, RECEIVE, WITH_SPLAT_SHADER, receive_layout,
};
use super::passes::radix_sort::SortAlgorithm;
use super::passes::{ENTRY_SHADERS, FragmentPasses, SplatPipelines, crate_defs, shader_library};
use crate::shader::{SplatShaderSource, SplatShaders};

/// Whether the splat pipelines are compiled: until they are, cameras draw no splats
/// (shared by the main and the render world; a resource of both).
#[derive(Resource, Clone, Default, Debug, Reflect)]
#[reflect(opaque)]
#[reflect(Resource, Default, Debug, Clone)]
pub struct SplatPipelinesStatus(Arc<AtomicBool>);

impl SplatPipelinesStatus {
    /// True once every splat pipeline is compiled.
    pub fn ready(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    fn set_ready(&self) {
        self.0.store(true, Ordering::Release);
    }
}

/// The passes' entry shaders and the app's splat shader variants, as shader assets.
#[derive(Resource, Clone, Debug)]
pub(crate) struct SplatShaderAssets {
    /// By file path.
    entries: HashMap<&'static str, Handle<Shader>>,
    /// Per registered `SplatShader`, in id order: the preprocess running it, for the
    /// full and the compact layout, then the same two with `RECEIVE`; `None` where it
    /// did not compose.
    splat_shaders: Vec<Option<[Handle<Shader>; 4]>>,
}

/// Adds the entry shaders and the splat shader variants to the app's shaders (at
/// `Plugin::finish`, once every splat shader is registered).
pub(crate) fn add_shader_assets(app: &mut App) -> SplatShaderAssets {
    let sources = app
        .world()
        .get_resource::<SplatShaders>()
        .cloned()
        .unwrap_or_default();
    let variants: Vec<_> = sources.sources().iter().map(compose_splat_shader).collect();
    let mut shaders = app.world_mut().resource_mut::<Assets<Shader>>();
    let entries = ENTRY_SHADERS
        .iter()
        .map(|&EntryShader { file, checks }| {
            let shader = Shader {
                validate_shader: match checks {
                    ShaderChecks::All => ValidateShader::Enabled,
                    ShaderChecks::None => ValidateShader::Disabled,
                },
                ..Shader::from_wgsl(file.text, file.path)
            };
            (file.path, shaders.add(shader))
        })
        .collect();
    let splat_shaders = variants
        .into_iter()
        .map(|variant| {
            variant.map(|texts| {
                texts.map(|(path, wgsl)| {
                    // An app's own code keeps wgpu's checks, as Bevy advises for
                    // shaders it did not write.
                    shaders.add(Shader {
                        validate_shader: ValidateShader::Enabled,
                        ..Shader::from_wgsl(wgsl, path)
                    })
                })
            })
        })
        .collect();
    SplatShaderAssets {
        entries,
        splat_shaders,
    }
}

/// The preprocess with `source`'s `modify_splat`, for the full and the compact
/// layout, without and with `RECEIVE`, as (asset path, WGSL); `None`, with the reason
/// in the log, where it does not compose.
fn compose_splat_shader(source: &SplatShaderSource) -> Option<[(String, String); 4]> {
    let composed = shader_library()
        .with_user_shader(&source.name, &source.wgsl)
        .and_then(|mut library| {
            let mut variant = |defs: &[ShaderDef], suffix: &str| {
                let wgsl = library.compose_wgsl(preprocess::SHADER.file, defs)?;
                let path = format!("bevy_splat/splat_shader/{}{suffix}.wgsl", source.name);
                Ok::<_, String>((path, wgsl))
            };
            Ok([
                variant(&[WITH_SPLAT_SHADER], "")?,
                variant(&[WITH_SPLAT_SHADER, COMPACT_LAYOUT], "_compact")?,
                variant(&[WITH_SPLAT_SHADER, RECEIVE], "_receive")?,
                variant(
                    &[WITH_SPLAT_SHADER, COMPACT_LAYOUT, RECEIVE],
                    "_compact_receive",
                )?,
            ])
        });
    composed
        .inspect_err(|message| {
            error!(
                "splat shader \"{}\" does not compile; its clouds are drawn without it: \
                 {message}",
                source.name
            );
        })
        .ok()
}

/// The kernels queued so far, by what they were built from, so each is queued once.
#[derive(Resource, Default)]
pub(crate) struct QueuedKernels(HashMap<KernelKey, CachedComputePipelineId>);

type KernelKey = (String, &'static str, Vec<ShaderDef>);

/// Builds the passes' pipelines through Bevy's `PipelineCache`.
pub(crate) struct CachedBuilder<'a> {
    device: &'a RenderDevice,
    cache: &'a PipelineCache,
    shaders: &'a SplatShaderAssets,
    queued: &'a mut QueuedKernels,
    crate_defs: &'a [ShaderDef],
}

impl<'a> CachedBuilder<'a> {
    /// A builder that queues on `cache`, with `crate_defs` on every kernel.
    #[cfg_attr(not(feature = "shadows"), allow(dead_code))]
    pub(crate) fn new(
        (device, cache): (&'a RenderDevice, &'a PipelineCache),
        shaders: &'a SplatShaderAssets,
        queued: &'a mut QueuedKernels,
        crate_defs: &'a [ShaderDef],
    ) -> Self {
        Self {
            device,
            cache,
            shaders,
            queued,
            crate_defs,
        }
    }

    /// `own` defs with the crate's, as Bevy's.
    pub fn shader_defs(&self, own: &[ShaderDef]) -> Vec<ShaderDefVal> {
        bevy_defs(self.crate_defs, own)
    }

    /// The asset of one of `passes::ENTRY_SHADERS`.
    pub fn entry_shader(&self, shader: EntryShader) -> Handle<Shader> {
        match self.shaders.entries.get(shader.file.path) {
            Some(handle) => handle.clone(),
            None => panic!(
                "{} is missing from bevy_splat's ENTRY_SHADERS",
                shader.file.path
            ),
        }
    }

    /// The layout `descriptor` describes, from the cache's own.
    pub fn layout_of(&self, descriptor: &BindGroupLayoutDescriptor) -> wgpu::BindGroupLayout {
        (*self.cache.get_bind_group_layout(descriptor)).clone()
    }

    /// Queues (once) the compute pipeline of `shader`'s `entry_point` with `defs`, and
    /// returns its state.
    fn queue(
        &mut self,
        (label, layout): (&str, &BindGroupLayoutDescriptor),
        (key, shader): (String, Handle<Shader>),
        entry_point: &'static str,
        defs: &[ShaderDef],
    ) -> &CachedPipelineState {
        let cache = self.cache;
        let crate_defs = self.crate_defs;
        let id = *self
            .queued
            .0
            .entry((key, entry_point, defs.to_vec()))
            .or_insert_with(|| {
                cache.queue_compute_pipeline(ComputePipelineDescriptor {
                    label: Some(label.to_owned().into()),
                    layout: vec![layout.clone()],
                    shader,
                    shader_defs: bevy_defs(crate_defs, defs),
                    entry_point: Some(entry_point.into()),
                    // Every kernel writes its workgroup memory before reading it.
                    zero_initialize_workgroup_memory: false,
                    ..Default::default()
                })
            });
        cache.get_compute_pipeline_state(id)
    }

    /// The variants of the app's splat shaders (with `receive`, their `RECEIVE`
    /// ones), in id order, or `None` while any is still compiling; one that failed
    /// (reported in the log by Bevy) is `None` in the list, and its clouds are drawn
    /// without it.
    pub(crate) fn splat_shader_variants(
        &mut self,
        receive: bool,
    ) -> Option<Vec<Option<LayoutPipelines>>> {
        let layout = match receive {
            false => preprocess::layout_descriptor(),
            true => receive_layout(preprocess::layout_descriptor()),
        };
        let variants = self.shaders.splat_shaders.clone();
        let mut all_settled = true;
        let mut built = Vec::with_capacity(variants.len());
        for handles in variants {
            let Some([full, compact, full_receive, compact_receive]) = handles else {
                built.push(None);
                continue;
            };
            let (full, compact) = match receive {
                false => (full, compact),
                true => (full_receive, compact_receive),
            };
            let mut compile = |handle: Handle<Shader>| {
                let key = format!("{:?}", handle.id());
                let state = self.queue(
                    ("splat preprocess (splat shader)", &layout),
                    (key, handle),
                    "preprocess",
                    &[],
                );
                Compiled::of(state)
            };
            match (compile(full), compile(compact)) {
                (Compiled::Ready(full), Compiled::Ready(compact)) => {
                    built.push(Some(LayoutPipelines { full, compact }));
                }
                (Compiled::Pending, _) | (_, Compiled::Pending) => all_settled = false,
                _ => built.push(None),
            }
        }
        all_settled.then_some(built)
    }
}

/// `crate_defs` and `own`, as Bevy's shader defs.
pub(crate) fn bevy_defs(crate_defs: &[ShaderDef], own: &[ShaderDef]) -> Vec<ShaderDefVal> {
    crate_defs
        .iter()
        .chain(own)
        .map(|def| match *def {
            ShaderDef::Flag(name) => ShaderDefVal::Bool(name.into(), true),
            ShaderDef::UInt(name, value) => ShaderDefVal::UInt(name.into(), value),
        })
        .collect()
}

/// Where a queued compute pipeline stands.
enum Compiled {
    Ready(wgpu::ComputePipeline),
    Pending,
    /// Bevy has logged why.
    Failed,
}

impl Compiled {
    fn of(state: &CachedPipelineState) -> Self {
        match state {
            CachedPipelineState::Ok(Pipeline::ComputePipeline(pipeline)) => {
                Self::Ready((**pipeline).clone())
            }
            CachedPipelineState::Ok(Pipeline::RenderPipeline(_)) | CachedPipelineState::Err(_) => {
                Self::Failed
            }
            CachedPipelineState::Queued | CachedPipelineState::Creating(_) => Self::Pending,
        }
    }
}

impl PipelineBuilder for CachedBuilder<'_> {
    fn device(&self) -> &wgpu::Device {
        self.device.wgpu_device()
    }

    fn layout(&mut self, descriptor: &BindGroupLayoutDescriptor) -> wgpu::BindGroupLayout {
        self.layout_of(descriptor)
    }

    fn kernel(&mut self, kernel: &Kernel<'_>) -> Option<wgpu::ComputePipeline> {
        let shader = self.entry_shader(kernel.shader);
        let key = kernel.shader.file.path.to_owned();
        let state = self.queue(
            (kernel.label, kernel.layout),
            (key, shader),
            kernel.entry_point,
            kernel.defs,
        );
        match Compiled::of(state) {
            Compiled::Ready(pipeline) => Some(pipeline),
            // A kernel of the crate that fails is a bug Bevy has logged; the cameras
            // keep drawing without splats.
            Compiled::Pending | Compiled::Failed => None,
        }
    }
}

/// When the render world started, to log how long the pipelines took.
#[derive(Resource)]
pub(crate) struct PipelinesQueuedAt(Instant);

/// At `RenderStartup`: notes the time and makes the layer's fragment passes, whose
/// per-target pipelines views queue from their first frame.
pub(crate) fn start_pipelines(
    mut commands: Commands,
    device: Res<RenderDevice>,
    cache: Res<PipelineCache>,
    shaders: Option<Res<SplatShaderAssets>>,
    mut queued: ResMut<QueuedKernels>,
) {
    commands.insert_resource(PipelinesQueuedAt(Instant::now()));
    let Some(shaders) = shaders else {
        return;
    };
    let crate_defs = crate_defs();
    let builder = CachedBuilder {
        device: &device,
        cache: &cache,
        shaders: &shaders,
        queued: &mut queued,
        crate_defs: &crate_defs,
    };
    commands.insert_resource(FragmentPasses::new(&builder));
}

/// Each frame until they are ready: asks the passes for their pipelines (the first
/// time, queueing them) and, once all are ready, makes them the `SplatPipelines`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn queue_splat_pipelines(
    mut commands: Commands,
    ready: Option<Res<SplatPipelines>>,
    device: Res<RenderDevice>,
    adapter: Res<RenderAdapterInfo>,
    cache: Res<PipelineCache>,
    shaders: Option<Res<SplatShaderAssets>>,
    mut queued: ResMut<QueuedKernels>,
    started: Option<Res<PipelinesQueuedAt>>,
    status: Res<SplatPipelinesStatus>,
) {
    let Some(shaders) = shaders.filter(|_| ready.is_none()) else {
        return;
    };
    let crate_defs = crate_defs();
    let mut builder = CachedBuilder {
        device: &device,
        cache: &cache,
        shaders: &shaders,
        queued: &mut queued,
        crate_defs: &crate_defs,
    };
    let sort = SortAlgorithm::for_adapter(&adapter);
    let pipelines = SplatPipelines::build(&mut builder, sort);
    let variants = builder.splat_shader_variants(false);
    let (Some(mut pipelines), Some(variants)) = (pipelines, variants) else {
        return;
    };
    pipelines.preprocess.set_splat_shaders(variants);
    if let Some(started) = started {
        info!(
            "splat pipelines ready {:.0} ms after the renderer started (radix sort: \
             {sort:?}, {:?}, on {})",
            started.0.elapsed().as_secs_f64() * 1e3,
            pipelines.sort.ranking(),
            adapter.name
        );
    }
    commands.insert_resource(pipelines);
    status.set_ready();
}
