//! The light pass's pipelines and the preprocess's `RECEIVE` variants, queued the
//! first frame some shown cloud receives light: an app without one compiles none.

use bevy::asset::{Assets, Handle};
use bevy::ecs::prelude::*;
use bevy::log::{info, warn};
use bevy::render::render_resource::{
    CachedComputePipelineId, CachedPipelineState, Pipeline, PipelineCache,
};
use bevy::render::renderer::RenderDevice;
use bevy::shader::Shader;

use super::light_pass::{self, FILTERS};
use crate::render::extract::ExtractedCloud;
use crate::render::passes::preprocess::{RECEIVE_STORAGE_BUFFERS, ReceiveVariants};
use crate::render::passes::{SplatPipelines, crate_defs};
use crate::render::pipelines::{CachedBuilder, QueuedKernels, SplatShaderAssets};

/// The light pass's shader asset.
#[derive(Resource, Clone)]
pub(crate) struct LightShader(pub Handle<Shader>);

impl LightShader {
    /// Adds the pass's WGSL to the app's shaders.
    pub fn add(shaders: &mut Assets<Shader>) -> Self {
        Self(shaders.add(Shader::from_wgsl(light_pass::WGSL, light_pass::WGSL_PATH)))
    }
}

/// The light pass, once it and the preprocess's `RECEIVE` variants are compiled.
#[derive(Resource)]
pub(crate) struct LightPipelines {
    pub view_layout: wgpu::BindGroupLayout,
    pub band_layout: wgpu::BindGroupLayout,
    /// One per `light_pass::FILTERS`.
    pub by_filter: [wgpu::ComputePipeline; 3],
}

/// Where the queueing stands.
#[derive(Default)]
pub(crate) enum LightQueue {
    /// No cloud has asked yet.
    #[default]
    Idle,
    /// The light pass's pipelines, compiling.
    Queued([CachedComputePipelineId; 3]),
    /// This device cannot, or a pipeline failed (logged): clouds stay unlit.
    Unavailable,
}

/// Each frame until they are built: once some cloud receives light, queues the light
/// pass and the `RECEIVE` variants and, when all are compiled, hands the variants to
/// the preprocess and makes the [`LightPipelines`].
#[expect(clippy::too_many_arguments, reason = "the builder's resources, named")]
pub(crate) fn queue_light_pipelines(
    mut commands: Commands,
    built: Option<Res<LightPipelines>>,
    pipelines: Option<ResMut<SplatPipelines>>,
    clouds: Query<&ExtractedCloud>,
    (device, cache): (Res<RenderDevice>, Res<PipelineCache>),
    (shaders, light_shader): (Option<Res<SplatShaderAssets>>, Option<Res<LightShader>>),
    mut queued: ResMut<QueuedKernels>,
    mut state: Local<LightQueue>,
) {
    if built.is_some() || matches!(*state, LightQueue::Unavailable) {
        return;
    }
    let (Some(mut pipelines), Some(shaders), Some(light_shader)) =
        (pipelines, shaders, light_shader)
    else {
        return;
    };
    if !clouds.iter().any(|cloud| cloud.lighting.receives_light()) {
        return;
    }
    let storage_buffers = device.limits().max_storage_buffers_per_shader_stage;
    let view_layout = light_pass::view_layout(&device);
    let Some(view_layout) = view_layout.filter(|_| storage_buffers >= RECEIVE_STORAGE_BUFFERS)
    else {
        warn!(
            "SplatLighting needs {RECEIVE_STORAGE_BUFFERS} storage buffers per shader stage \
             and storage-buffer lights; this device has {storage_buffers}: clouds are drawn \
             unlit"
        );
        *state = LightQueue::Unavailable;
        return;
    };
    let crate_defs = crate_defs();
    let ids = match *state {
        LightQueue::Queued(ids) => ids,
        _ => light_pass::queue_pipelines(&cache, &light_shader.0, &view_layout, &crate_defs),
    };
    *state = LightQueue::Queued(ids);

    let mut builder = CachedBuilder::new((&device, &cache), &shaders, &mut queued, &crate_defs);
    let receive = ReceiveVariants::new(&mut builder);
    let splat_shaders = builder.splat_shader_variants(true);
    let mut light = Vec::with_capacity(FILTERS.len());
    for id in ids {
        match cache.get_compute_pipeline_state(id) {
            CachedPipelineState::Ok(Pipeline::ComputePipeline(pipeline)) => {
                light.push((**pipeline).clone());
            }
            CachedPipelineState::Err(_) | CachedPipelineState::Ok(Pipeline::RenderPipeline(_)) => {
                // Bevy has logged why.
                warn!("the splat light pass did not compile: clouds are drawn unlit");
                *state = LightQueue::Unavailable;
                return;
            }
            CachedPipelineState::Queued | CachedPipelineState::Creating(_) => {}
        }
    }
    let (Some(receive), Some(splat_shaders), Ok(by_filter)) = (
        receive,
        splat_shaders,
        <[wgpu::ComputePipeline; 3]>::try_from(light),
    ) else {
        return;
    };
    pipelines
        .preprocess
        .set_receive(receive.with_splat_shaders(splat_shaders));
    commands.insert_resource(LightPipelines {
        view_layout: builder.layout_of(&view_layout),
        band_layout: builder.layout_of(&light_pass::band_layout()),
        by_filter,
    });
    info!("splat light pass ready");
}
