//! Building the splat pipelines without holding up a frame.
//!
//! The passes' shader modules and pipelines (about thirty) are composed and compiled
//! on a task of Bevy's `AsyncComputeTaskPool`: on native a worker thread, on the web
//! the page's event loop between frames, one pass at a time. Until they are ready
//! the cameras draw their frames without splats, as Bevy's own passes do while
//! `PipelineCache` compiles theirs. An app made with
//! `RenderPlugin { synchronous_pipeline_compilation: true, .. }` (tests, screenshot
//! tools) builds them before its first frame instead.

use bevy::ecs::prelude::*;
use bevy::log::info;
use bevy::platform::time::Instant;
use bevy::render::renderer::{RenderAdapterInfo, RenderDevice};
use bevy::tasks::{AsyncComputeTaskPool, Task, block_on, poll_once};

use super::passes::SplatPipelines;
use super::passes::radix_sort::SortAlgorithm;
use crate::shader::SplatShaders;

/// Whether the app compiles its pipelines before its first frame (the setting of
/// Bevy's `RenderPlugin`, which `PipelineCache` follows for Bevy's own).
#[derive(Resource, Clone, Copy, Debug)]
pub(crate) struct SynchronousCompilation(pub bool);

/// The pipelines while their task runs.
#[derive(Resource)]
pub(crate) struct PendingSplatPipelines(Task<SplatPipelines>);

/// At `RenderStartup`: starts building the pipelines (or builds them, with synchronous
/// compilation).
pub(crate) fn start_building(
    mut commands: Commands,
    device: Res<RenderDevice>,
    adapter: Res<RenderAdapterInfo>,
    synchronous: Res<SynchronousCompilation>,
    shaders: Res<SplatShaders>,
) {
    let sort = SortAlgorithm::for_adapter(&adapter);
    info!("splat radix sort: {sort:?} on {}", adapter.name);
    let device = device.wgpu_device().clone();
    let shaders = shaders.clone();
    let build = async move {
        let started = Instant::now();
        let pipelines = SplatPipelines::build(&device, sort, shaders.sources()).await;
        info!(
            "splat pipelines built in {:.0} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
        pipelines
    };
    if synchronous.0 {
        commands.insert_resource(block_on(build));
    } else {
        let task = AsyncComputeTaskPool::get().spawn(build);
        commands.insert_resource(PendingSplatPipelines(task));
    }
}

/// Each frame until they are ready: takes the pipelines once their task has finished.
pub(crate) fn finish_building(
    mut commands: Commands,
    pending: Option<ResMut<PendingSplatPipelines>>,
) {
    let Some(mut pending) = pending else {
        return;
    };
    if let Some(pipelines) = block_on(poll_once(&mut pending.0)) {
        commands.insert_resource(pipelines);
        commands.remove_resource::<PendingSplatPipelines>();
    }
}
