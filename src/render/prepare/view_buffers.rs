//! `RenderSystems::PrepareResources`: what every view draws this frame, the GPU's
//! answers from earlier frames read back, and the view's buffers sized for this one.

use bevy::ecs::prelude::*;
use bevy::math::UVec2;
use bevy::platform::time::Instant;
use bevy::render::render_asset::RenderAssets;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::sync_world::MainEntity;
use bevy::render::view::{ExtractedView, RenderVisibleEntities};

use super::draw_plan::{ViewDraw, plan_dispatches};
use crate::cloud::GaussianCloud;
use crate::lod::SplatLod;
use crate::render::extract::{ExtractedCloud, SplatShaderTime};
use crate::render::gpu_cloud::GpuSplats;
use crate::render::limits::SplatGpuLimits;
use crate::render::lod_trees::GpuLodTrees;
use crate::render::memory::SplatMemory;
use crate::render::passes::SplatPipelines;
use crate::render::passes::depth_write::SplatDepth;
use crate::render::passes::preprocess::PROJECTED_SPLAT_BYTES;
use crate::render::passes::radix_sort::SortKey;
use crate::render::passes::tile_render::tiles_for;
use crate::render::view::ViewBuffers;
use crate::render::view::bands::BandLimits;
use crate::render::view::frame::SplatFrame;
use crate::render::view::lod::ViewLod;
use crate::render::view::picks::{SplatPickAnswers, SplatPickRequest, ViewPicks};
use crate::render::view::shared_work::{PlannedView, SharedWork, give_view_its_buffers};
use crate::render::view::sizing::ViewNeed;
use crate::render::view::splat_layer::{LayerOutputs, SceneCopy};
use crate::render::view::stats::{STAGE_COUNT, SplatLodStats, SplatStats};
use crate::render::view::timestamps::{PassTimestamps, SplatPassTimes};
use crate::render::view::uniform::SplatCamera;

/// Everything the plugin keeps on a render-world view, dropped together when the
/// view draws no splats (giving its buffers back).
type SplatViewState = (
    ViewDraw,
    SplatFrame,
    ViewBuffers,
    PassTimestamps,
    ViewPicks,
    SceneCopy,
    ViewLod,
);

/// The layers and working buffers the cameras share, by shape (a split screen's
/// cameras of one size share one set).
#[derive(Resource, Default)]
pub struct CameraWork(SharedWork);

type ViewItem<'a> = (
    Entity,
    &'a MainEntity,
    &'a ExtractedView,
    &'a RenderVisibleEntities,
    Has<SplatDepth>,
    Option<&'a SplatPickRequest>,
    Has<SplatPassTimes>,
    Option<&'a mut ViewBuffers>,
    Option<&'a PassTimestamps>,
    Option<&'a mut ViewPicks>,
    (Option<&'a SplatLod>, Option<&'a mut ViewLod>),
);

/// Whether a view that draws `drawn` runs the light pass: some cloud receives light
/// and the pass and the preprocess's `RECEIVE` variants are built (`render::lighting`
/// builds them once a cloud asks) for the view's cut, if it draws one. Until then,
/// and on a device that cannot, its clouds are drawn unlit.
fn receives_light(
    drawn: &[(bevy::ecs::entity::Entity, &ExtractedCloud, &GpuSplats)],
    pipelines: &SplatPipelines,
    lod: bool,
) -> bool {
    let wanted = drawn
        .iter()
        .any(|(_, cloud, _)| cloud.lighting.receives_light());
    if wanted && cfg!(not(feature = "shadows")) {
        bevy::log::warn_once!(
            "a cloud has SplatLighting, which needs bevy_splat's `shadows` feature; it is \
             drawn unlit"
        );
    }
    wanted
        && pipelines
            .preprocess
            .receive()
            .is_some_and(|receive| !lod || receive.supports_lod())
}

/// Plans every view's draw ([`ViewDraw`]), reads back what earlier frames measured and
/// picked, and brings the view's buffers (over the work it shares with cameras of its
/// shape, [`CameraWork`]), timestamps and pick buffers (components on the view) to what
/// this frame needs.
pub fn prepare_splat_view_buffers(
    mut commands: Commands,
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    pipelines: Option<Res<SplatPipelines>>,
    memory: Res<SplatMemory>,
    stats: Res<SplatStats>,
    answers: Res<SplatPickAnswers>,
    gpu_limits: Res<SplatGpuLimits>,
    mut views: Query<ViewItem>,
    clouds: Query<&ExtractedCloud>,
    gpu_splats: Res<RenderAssets<GpuSplats>>,
    lod_trees: Res<GpuLodTrees>,
    shader_time: Res<SplatShaderTime>,
    mut work: ResMut<CameraWork>,
) {
    let Some(pipelines) = pipelines else {
        return;
    };
    let max_binding = gpu_limits.max_storage_binding(&device);
    // A band's pairs live in the tile sort's key and value buffers, 4 bytes each.
    let limits = BandLimits::new(max_binding, PROJECTED_SPLAT_BYTES, SortKey::U32.bytes());
    let device = device.wgpu_device();

    let mut live = Vec::new();
    let mut planned = Vec::new();
    for (
        entity,
        main_entity,
        view,
        visible,
        writes_depth,
        pick_request,
        timed,
        buffers,
        timestamps,
        picks,
        (lod_settings, view_lod),
    ) in &mut views
    {
        let started = Instant::now();
        let origin = UVec2::new(view.viewport.x, view.viewport.y);
        let size = UVec2::new(view.viewport.z, view.viewport.w);
        let camera = (size.x > 0 && size.y > 0)
            .then(|| {
                SplatCamera::from_view(view.world_from_view.to_matrix(), view.clip_from_view, size)
            })
            .flatten();
        let drawn: Vec<_> = visible
            .get::<GaussianCloud>()
            .into_iter()
            .flat_map(|class| class.iter_visible())
            .filter_map(|(render_entity, main)| Some((main.id(), clouds.get(*render_entity).ok()?)))
            .filter_map(|(main, cloud)| Some((main, cloud, gpu_splats.get(cloud.asset)?)))
            .filter(|(_, _, gpu)| !gpu.is_empty())
            .collect();
        let Some(camera) = camera.filter(|_| !drawn.is_empty()) else {
            commands.entity(entity).remove::<SplatViewState>();
            continue;
        };

        let splats: u64 = drawn
            .iter()
            .map(|(_, cloud, gpu)| match lod_trees.stream(cloud.asset) {
                Some(stream) => stream
                    .pages
                    .values()
                    .map(|page| u64::from(page.splats(gpu).len()))
                    .sum(),
                None => u64::from(gpu.len()),
            })
            .sum();

        // The level-of-detail cut: its state made when the camera asks for it, dropped
        // when it no longer does. A camera without `SplatLod` that sees a streamed
        // cloud cuts it at its finest resident level (a budget that never binds).
        let streamed = drawn
            .iter()
            .any(|(_, cloud, _)| lod_trees.stream(cloud.asset).is_some());
        let finest = SplatLod::with_budget(u32::MAX);
        let cut_settings = lod_settings.or(streamed.then_some(&finest));
        // A camera always counts: its stats report the leaves in view.
        let lod = ViewLod::follow(
            &mut commands,
            entity,
            (cut_settings, true),
            view_lod,
            device,
            &memory,
            camera.focal[1],
            splats,
        );
        let (instances, instance_clouds, dispatches) = plan_dispatches(
            &drawn,
            &camera,
            shader_time.0,
            (
                lod_settings.and(lod.map(|_| &*lod_trees)),
                lod.map(|(frame, _)| frame),
            ),
            lod.map(|_| &*lod_trees),
        );
        let lod = lod.map(|(frame, leaves_in_view)| {
            stats.update(main_entity.id(), |s| {
                s.lod = Some(SplatLodStats {
                    threshold: frame.threshold,
                    leaves_in_view,
                    nodes_weighed: dispatches.iter().map(|d| d.nodes_weighed()).sum(),
                });
            });
            frame
        });
        // A cut draws about its budget (the GPU's counts size the buffers after the
        // first frame).
        let splats = match lod_settings {
            Some(settings) => splats.min(u64::from(settings.budget.max(1))),
            None => splats,
        };
        let receive = receives_light(&drawn, &pipelines, lod.is_some());
        let splats = u32::try_from(splats).unwrap_or(u32::MAX);
        let need = ViewNeed {
            splats,
            held_splats: splats,
            chunks: dispatches.len() as u32,
            instances: instances.len() as u32,
            tiles: tiles_for(size),
            sources: pick_request.is_some(),
            lit_points: receive,
            tile_chunks: 0,
        };

        // Made when the camera asks to be timed, dropped when it no longer does.
        match (timed, timestamps) {
            (true, Some(timestamps)) => {
                if let Some(times) = timestamps.poll(device) {
                    stats.update(main_entity.id(), |s| s.record_times(&times));
                }
            }
            (true, None) => {
                if let Some(made) = PassTimestamps::new(device, &queue, &memory, STAGE_COUNT) {
                    commands.entity(entity).insert(made);
                }
            }
            (false, Some(_)) => {
                commands.entity(entity).remove::<PassTimestamps>();
            }
            (false, None) => {}
        }

        // The same for the pick buffers, which answer a frame late.
        let mut made_picks = None;
        let picks = match (pick_request, picks) {
            (Some(_), Some(picks)) => Some(picks.into_inner()),
            (Some(_), None) => Some(made_picks.insert(ViewPicks::new(device, &memory))),
            (None, Some(_)) => {
                commands.entity(entity).remove::<ViewPicks>();
                None
            }
            (None, None) => None,
        };
        if let Some(mut answer) = picks.as_ref().and_then(|p| p.poll(device)) {
            // A hit on a merged node of a level-of-detail cut names a splat under it.
            for hit in answer.hits.iter_mut().flatten() {
                if let Some((_, cloud, _)) = drawn.iter().find(|(main, ..)| *main == hit.cloud) {
                    hit.splat_index = lod_trees.leaf_under(cloud.asset, hit.splat_index);
                }
            }
            answers.put(main_entity.id(), answer);
        }
        let pick = pick_request
            .zip(picks)
            .and_then(|(request, picks)| picks.write(device, &queue, request, instance_clouds));
        if let Some(made) = made_picks {
            commands.entity(entity).insert(made);
        }

        // Sized from its own counts; its buffers come below, over the work it shares.
        let (plan, counts) = PlannedView::from_counts(
            entity,
            (size, LayerOutputs::camera(writes_depth)),
            buffers.as_deref(),
            (&need, &limits),
            device,
        );
        planned.push(plan);
        if let Some((_, counts)) = &counts {
            stats.update(main_entity.id(), |s| s.record(counts));
        }
        let mut entity_commands = commands.entity(entity);
        entity_commands.insert(ViewDraw {
            camera,
            origin,
            size,
            instances,
            dispatches,
            pick,
            lod,
            receive,
            cells: None,
            planned_ns: started.elapsed().as_nanos() as u64,
        });
        live.push(main_entity.id());
    }

    stats.retain(|camera| live.contains(camera));
    let shared = work.0.share(&planned, device, &pipelines, &memory);
    for (plan, shared) in planned.iter().zip(shared) {
        if let Ok((.., buffers, _, _, _)) = views.get_mut(plan.entity) {
            let previous = buffers.map(Mut::into_inner);
            give_view_its_buffers(&mut commands, previous, plan, shared, (device, &memory));
        }
    }
}
