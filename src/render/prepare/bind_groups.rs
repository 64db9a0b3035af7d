//! `RenderSystems::PrepareBindGroups`: every view's uniforms written and the bind
//! groups of its frame made ([`SplatFrame`], a component on the view).

use bevy::camera::CompositingSpace;
use bevy::core_pipeline::core_3d::CORE_3D_DEPTH_FORMAT;
use bevy::ecs::prelude::*;
use bevy::log::warn_once;
use bevy::platform::time::Instant;
use bevy::render::render_asset::RenderAssets;
use bevy::render::render_resource::PipelineCache;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::sync_world::MainEntity;
use bevy::render::view::{Msaa, ViewDepthTexture, ViewTarget};
use wgpu::TextureUsages;

use super::draw_plan::ViewDraw;
use crate::render::gpu_cloud::GpuSplats;
use crate::render::lod_trees::GpuLodTrees;
use crate::render::memory::SplatMemory;
use crate::render::passes::composite::{
    CompositeMode, CompositePipeline, ComputeComposite, SplatComposite,
};
use crate::render::passes::depth_write::SplatDepth;
use crate::render::passes::{FragmentPasses, SplatPipelines};
use crate::render::view::ViewBuffers;
use crate::render::view::dispatch::Dispatch;
use crate::render::view::frame::{BandFrame, CompositeDraw, SplatFrame, band_frame};
use crate::render::view::lod::ViewLod;
use crate::render::view::picks::ViewPicks;
use crate::render::view::splat_layer::SceneCopy;
use crate::render::view::stats::SplatStats;
use crate::render::view::timestamps::SplatPassTimes;

type ViewItem<'a> = (
    Entity,
    &'a MainEntity,
    &'a ViewTarget,
    &'a ViewDepthTexture,
    &'a Msaa,
    Option<&'a SplatComposite>,
    Has<SplatDepth>,
    Has<SplatPassTimes>,
    (&'a ViewDraw, &'a ViewBuffers),
    (
        Option<&'a ViewPicks>,
        Option<&'a SceneCopy>,
        Option<&'a ViewLod>,
    ),
);

/// Writes the uniforms of every view that draws splats and makes its frame's bind
/// groups, with the copy of the scene its composite reads where it needs one.
pub fn prepare_splat_bind_groups(
    mut commands: Commands,
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    pipelines: Option<Res<SplatPipelines>>,
    fragment_passes: Option<Res<FragmentPasses>>,
    cache: Res<PipelineCache>,
    memory: Res<SplatMemory>,
    stats: Res<SplatStats>,
    gpu_splats: Res<RenderAssets<GpuSplats>>,
    lod_trees: Res<GpuLodTrees>,
    views: Query<ViewItem>,
) {
    let (Some(pipelines), Some(fragment_passes)) = (pipelines, fragment_passes) else {
        return;
    };
    let device = device.wgpu_device();
    for (
        entity,
        main_entity,
        target,
        depth,
        msaa,
        composite,
        writes_depth,
        timed,
        (draw, buffers),
        (picks, scene_copy, lod),
    ) in &views
    {
        let started = Instant::now();
        let Some(dispatches) = draw
            .dispatches
            .iter()
            .map(|plan| plan.resolve(&gpu_splats, &lod_trees))
            .collect::<Option<Vec<_>>>()
        else {
            commands.entity(entity).remove::<SplatFrame>();
            continue;
        };
        let (origin, size) = (draw.origin, draw.size);
        let mode = composite_mode(target, composite);
        if mode == CompositeMode::LinearOverBlack {
            warn_once!(
                "a splat camera's main texture lacks COPY_SRC (CameraMainTextureUsages): \
                 its splats are blended exactly over black only"
            );
        }
        let format = target.main_texture_format();
        let usage = target.main_texture().usage();
        let compute = ComputeComposite::serves(format, usage, msaa.samples());
        // A view draws its splats once its composite (and depth write) pipelines for
        // this target are compiled; until then it draws none.
        let composite_pipeline = fragment_passes.composite.pipeline_for_view(
            &cache,
            mode,
            (format, usage, msaa.samples()),
        );
        let depth_write_pipeline = writes_depth.then(|| {
            fragment_passes
                .depth_write
                .pipeline(&cache, CORE_3D_DEPTH_FORMAT, msaa.samples())
        });
        let (Some(composite_pipeline), None | Some(Some(_))) =
            (composite_pipeline, &depth_write_pipeline)
        else {
            commands.entity(entity).remove::<SplatFrame>();
            continue;
        };
        let multisampled_depth = msaa.samples() > 1;
        let bands = bind_bands(
            device,
            &queue,
            &pipelines,
            (draw, buffers),
            &dispatches,
            (depth.view(), multisampled_depth),
            picks.filter(|_| draw.pick.is_some()),
            lod,
        );
        let Some(bands) = bands else {
            commands.entity(entity).remove::<SplatFrame>();
            continue;
        };

        // The copy of the scene is kept while it fits, made when it does not, and
        // dropped when the composite no longer reads one.
        let reads_scene = mode.reads_scene() || compute;
        let made_copy = match (reads_scene, scene_copy) {
            (true, Some(copy)) if copy.fits(format, size) => None,
            (true, _) => Some(SceneCopy::new(device, &memory, format, size)),
            (false, Some(_)) => {
                commands.entity(entity).remove::<SceneCopy>();
                None
            }
            (false, None) => None,
        };
        let copy_view = match &made_copy {
            Some(made) => Some(&made.view),
            None => scene_copy.filter(|_| reads_scene).map(|copy| &copy.view),
        };
        buffers.layer_params.write(
            &queue,
            (origin, buffers.layer.viewport, 1),
            mode == CompositeMode::LinearOverBlack,
            format,
        );
        let frame = SplatFrame {
            bands,
            multisampled_depth,
            viewport_origin: origin,
            viewport_size: size,
            composite: match composite_pipeline {
                CompositePipeline::Fragment(pipeline) => CompositeDraw::Fragment {
                    pipeline,
                    bind_group: fragment_passes.composite.bind_group(
                        device,
                        &buffers.layer.view,
                        &buffers.layer_params.buffer,
                        copy_view,
                    ),
                },
                CompositePipeline::Compute(pipeline) => CompositeDraw::Compute {
                    pipeline,
                    layout: ComputeComposite::layout_for(&cache, format),
                },
            },
            depth_write: depth_write_pipeline.flatten().map(|pipeline| {
                (
                    pipeline,
                    fragment_passes.depth_write.bind_group(
                        device,
                        &buffers.layer.median_depth,
                        &buffers.layer_params.buffer,
                    ),
                )
            }),
            pick: draw.pick.clone(),
        };
        let mut entity_commands = commands.entity(entity);
        if let Some(made) = made_copy {
            entity_commands.insert(made);
        }
        entity_commands.insert(frame);
        let prepare_ns = draw.planned_ns + started.elapsed().as_nanos() as u64;
        stats.update(main_entity.id(), |s| {
            s.frames += 1;
            s.cpu_prepare_ns = prepare_ns;
            s.compute_composite = compute;
            // A camera that stopped timing its passes reports no stale times.
            if !timed {
                s.gpu_pass_ns = None;
            }
        });
    }
}

/// Writes every band's uniforms for the view's `draw` and binds its passes, top to
/// bottom; `None` if a band cannot be bound (`band_frame`). Camera and shadow views
/// both bind through it.
#[expect(clippy::too_many_arguments, reason = "one view's bindings, named")]
pub fn bind_bands(
    device: &wgpu::Device,
    queue: &RenderQueue,
    pipelines: &SplatPipelines,
    (draw, buffers): (&ViewDraw, &ViewBuffers),
    dispatches: &[Dispatch<'_>],
    (scene_depth, multisampled_depth): (&wgpu::TextureView, bool),
    picks: Option<&ViewPicks>,
    lod: Option<&ViewLod>,
) -> Option<Vec<BandFrame>> {
    buffers
        .bands
        .iter()
        .enumerate()
        .map(|(index, band)| {
            // Band 0 alone counts the cut's nodes: every band sees them all.
            let lod_frame = draw.lod.map(|frame| (frame, index == 0 && frame.counted));
            band.write_uniforms(
                queue,
                (&draw.camera, draw.cells.as_ref()),
                (draw.origin, draw.size),
                &draw.instances,
                dispatches,
                lod_frame,
            );
            band_frame(
                device,
                pipelines,
                band,
                dispatches,
                scene_depth,
                multisampled_depth,
                &buffers.layer,
                picks,
                lod.map(|lod| &lod.feedback),
                (draw.receive, draw.cells.is_some()),
            )
        })
        .collect()
}

/// How `target`'s composite blends (a camera's `SplatComposite`, what its target
/// stores and whether it can be copied).
fn composite_mode(target: &ViewTarget, composite: Option<&SplatComposite>) -> CompositeMode {
    let linear_target = target.compositing_space != Some(CompositingSpace::Srgb);
    let copyable = target
        .main_texture()
        .usage()
        .contains(TextureUsages::COPY_SRC);
    CompositeMode::choose(
        composite.copied().unwrap_or_default(),
        linear_target,
        copyable,
    )
}

/// Queues every 3D view's composite (and, with `SplatDepth`, depth write) pipeline
/// for its target as soon as the fragment passes exist: they compile beside the
/// compute pipelines instead of after them.
pub fn queue_fragment_pipelines(
    fragment_passes: Option<Res<FragmentPasses>>,
    cache: Res<PipelineCache>,
    views: Query<
        (&ViewTarget, &Msaa, Option<&SplatComposite>, Has<SplatDepth>),
        With<ViewDepthTexture>,
    >,
) {
    let Some(fragment_passes) = fragment_passes else {
        return;
    };
    for (target, msaa, composite, writes_depth) in &views {
        let mode = composite_mode(target, composite);
        let format = target.main_texture_format();
        let usage = target.main_texture().usage();
        let _ = fragment_passes.composite.pipeline_for_view(
            &cache,
            mode,
            (format, usage, msaa.samples()),
        );
        if writes_depth {
            let _ =
                fragment_passes
                    .depth_write
                    .pipeline(&cache, CORE_3D_DEPTH_FORMAT, msaa.samples());
        }
    }
}
