//! Each shadow view's draw, buffers and bind groups, kept as components on Bevy's
//! shadow view entities (which Bevy retains while their light and camera live).

use bevy::camera::primitives::Frustum;
use bevy::camera::visibility::RenderLayers;
use bevy::core_pipeline::core_3d::CORE_3D_DEPTH_FORMAT;
use bevy::ecs::prelude::*;
use bevy::math::UVec2;
use bevy::pbr::{LightEntity, ShadowView, ViewLightEntities};
use bevy::platform::collections::HashMap;
use bevy::platform::time::Instant;
use bevy::render::render_asset::RenderAssets;
use bevy::render::render_resource::PipelineCache;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::sync_world::MainEntity;
use bevy::render::view::ExtractedView;
use wgpu::{BindGroup, RenderPipeline, TextureView};

use super::casters::{casters, nearest_depth};
use super::cells::{CellLayout, fold};
use super::stats::SplatShadowStats;
use super::still::{StillDraw, StillInputs, StillShadow};
use crate::lighting::{RedrawSplatShadows, SplatShadowScale};
use crate::lod::SplatLod;
use crate::render::extract::{ExtractedCloud, SplatShaderTime};
use crate::render::gpu_cloud::GpuSplats;
use crate::render::limits::SplatGpuLimits;
use crate::render::lod_trees::GpuLodTrees;
use crate::render::memory::SplatMemory;
use crate::render::passes::preprocess::PROJECTED_SPLAT_BYTES;
use crate::render::passes::radix_sort::SortKey;
use crate::render::passes::tile_render::tiles_for;
use crate::render::passes::{FragmentPasses, SplatPipelines};
use crate::render::prepare::bind_groups::bind_bands;
use crate::render::prepare::draw_plan::{ViewDraw, plan_dispatches_in_cells};
use crate::render::view::ViewBuffers;
use crate::render::view::bands::BandLimits;
use crate::render::view::frame::BandFrame;
use crate::render::view::lod::ViewLod;
use crate::render::view::shared_work::{PlannedView, SharedWork, give_view_its_buffers};
use crate::render::view::sizing::ViewNeed;
use crate::render::view::splat_layer::{LayerOutputs, LayerParams};
use crate::render::view::uniform::{LayerCells, MAX_LAYER_CELLS, SplatCamera};

/// One frame of a shadow view: its bands' bind groups (none when it draws from its
/// kept surface), and the depth write that puts their surface into the light's shadow
/// map.
#[derive(Component)]
pub struct ShadowFrame {
    pub bands: Vec<BandFrame>,
    /// The light's map, in its texels (the splats' layer may be coarser:
    /// `SplatShadowScale`).
    pub size: UVec2,
    pub resolve: (RenderPipeline, BindGroup),
}

/// The layers and working buffers the shadow views share, by shape.
#[derive(Resource, Default)]
pub struct ShadowWork(SharedWork);

/// What a shadow view keeps while it draws splats, dropped together when it draws
/// none (giving its buffers back).
type ShadowViewState = (ViewDraw, ViewBuffers, ShadowFrame, ViewLod, StillShadow);

/// What only a run's first view keeps: the run's draw, buffers, cut and surface.
type RunState = (ViewDraw, ViewBuffers, ViewLod, StillShadow);

/// The scene depth a shadow view's tile render tests against: a 1×1 texture that
/// wgpu initialises to 0, the far plane, so that nothing stops a pixel early (the
/// meshes already in the shadow map win where they are nearer, in the depth write).
#[derive(Resource)]
pub struct NoSceneDepth(TextureView);

impl NoSceneDepth {
    /// Made at `RenderStartup`, once the device exists.
    pub fn init(mut commands: Commands, device: Res<RenderDevice>) {
        let texture = device
            .wgpu_device()
            .create_texture(&wgpu::TextureDescriptor {
                label: Some("splat shadow: no scene depth"),
                size: wgpu::Extent3d {
                    width: 1,
                    height: 1,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: CORE_3D_DEPTH_FORMAT,
                usage: wgpu::TextureUsages::TEXTURE_BINDING
                    | wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            });
        commands.insert_resource(Self(texture.create_view(&Default::default())));
    }
}

type ShadowViewItem<'a> = (
    Entity,
    (&'a ExtractedView, &'a ShadowView),
    &'a Frustum,
    (&'a LightEntity, Option<&'a RenderLayers>),
    Option<&'a mut ViewBuffers>,
    Option<&'a mut ViewLod>,
    Option<&'a mut StillShadow>,
    Option<&'a mut ShadowCell>,
);

/// What a shadow view's light asks of it.
type ShadowLight<'a> = (
    &'a MainEntity,
    Option<&'a SplatLod>,
    Has<RedrawSplatShadows>,
    Option<&'a SplatShadowScale>,
);

/// The light (render entity) a shadow view belongs to.
fn light_of(view: &LightEntity) -> Entity {
    match *view {
        LightEntity::Directional { light_entity, .. }
        | LightEntity::Point { light_entity, .. }
        | LightEntity::Spot { light_entity } => light_entity,
    }
}

/// Where a drawing shadow view's splats are: the cell of the layer its run draws
/// (`cells`), the run's first view (`leader`, which holds the run's draw, buffers and
/// kept surface; the view itself for a view drawn alone), and the uniform its depth
/// write reads.
#[derive(Component)]
pub struct ShadowCell {
    pub leader: Entity,
    /// The cell: its first pixel in the layer and its size.
    pub rect: [u32; 4],
    pub layer: UVec2,
    params: LayerParams,
}

/// One shadow view that casts this frame, before its run is planned.
struct Caster<'w> {
    entity: Entity,
    /// A directional light's cascades of one camera, drawn at one size, may share a
    /// run: (light, camera, cascade index).
    cascade: Option<(Entity, Entity, usize)>,
    light: Option<(Entity, String, Option<Entity>)>,
    lod: Option<&'w SplatLod>,
    redraw: bool,
    size: UVec2,
    camera: SplatCamera,
    drawn: Vec<(Entity, &'w ExtractedCloud, &'w GpuSplats)>,
}

/// Splits the casting views into runs: a light's cascades of one camera and size in
/// one layer of cells where they fold (`cells`), every other view alone.
fn runs(mut casters: Vec<Caster<'_>>, max_dimension: u32) -> Vec<(Vec<Caster<'_>>, CellLayout)> {
    let mut runs: Vec<Vec<Caster<'_>>> = Vec::new();
    casters.sort_by_key(|caster| caster.cascade.map(|(.., index)| index));
    for caster in casters {
        let together = |run: &Vec<Caster<'_>>| {
            let first = &run[0];
            caster.cascade.is_some()
                && first.cascade.map(|(l, c, _)| (l, c)) == caster.cascade.map(|(l, c, _)| (l, c))
                && first.size == caster.size
                && run.len() < MAX_LAYER_CELLS
        };
        match runs.iter_mut().find(|run| together(run)) {
            Some(run) => run.push(caster),
            None => runs.push(vec![caster]),
        }
    }
    let mut laid_out = Vec::new();
    for run in runs {
        let layout = CellLayout::grid(run.len(), run[0].size, max_dimension);
        let folds = layout.as_ref().is_some_and(|layout| {
            run.iter()
                .zip(&layout.cells)
                .all(|(view, rect)| fold(&view.camera, &run[0].camera, *rect).is_some())
        });
        match layout.filter(|_| folds && run.len() > 1) {
            Some(layout) => laid_out.push((run, layout)),
            None => laid_out.extend(run.into_iter().map(|view| {
                let layout = CellLayout::single(view.size);
                (vec![view], layout)
            })),
        }
    }
    laid_out
}

/// A cloud a run draws, in the cell of the view it casts into.
type CellCloud<'w> = (u32, Entity, &'w ExtractedCloud, &'w GpuSplats);

/// Each view's camera folded into the run's first (`cells::fold`), and the cells'
/// uniform for a run of several.
fn fold_run(run: &[Caster<'_>], layout: &CellLayout) -> (Vec<SplatCamera>, Option<LayerCells>) {
    let layer_camera = run[0].camera;
    let mut cells = Vec::with_capacity(run.len());
    let mut folded = Vec::with_capacity(run.len());
    for (view, rect) in run.iter().zip(&layout.cells) {
        match fold(&view.camera, &layer_camera, *rect) {
            Some((camera, cell)) => {
                folded.push(camera);
                cells.push(cell);
            }
            // A view alone is its layer: nothing to fold.
            None => folded.push(view.camera),
        }
    }
    let cells = (run.len() > 1).then_some(LayerCells {
        columns: layout.columns,
        stride: layout.stride,
        size: run[0].size,
        cells,
    });
    (folded, cells)
}

/// The clouds a run draws, each with its view's cell, and (every splat of them, what
/// the run keeps room for). A view holds every splat of its clouds from the first
/// frame; a run of cells holds what its largest view casts (as each cascade held
/// alone) and grows from its counts where its cells together see more, which an
/// unlimited cascaded light does: room for the sum would be four times the memory
/// while a cut draws a fraction of it.
fn run_clouds<'w>(run: &[Caster<'w>]) -> (Vec<CellCloud<'w>>, (u64, u64)) {
    let drawn: Vec<_> = run
        .iter()
        .enumerate()
        .flat_map(|(cell, view)| {
            let cell = cell as u32;
            view.drawn
                .iter()
                .map(move |&(entity, cloud, gpu)| (cell, entity, cloud, gpu))
        })
        .collect();
    let splats_of = |view: &Caster<'_>| -> u64 {
        view.drawn
            .iter()
            .map(|(.., gpu)| u64::from(gpu.len()))
            .sum()
    };
    let all = run.iter().map(splats_of).sum();
    let held = run.iter().map(splats_of).max().unwrap_or(0);
    (drawn, (all, held))
}

/// Plans every shadow view's draw ([`ViewDraw`]) from the clouds that cast into it,
/// and sizes its buffers from the GPU's latest counts, as for a camera, over the work
/// the views of one map size share ([`ShadowWork`]); the counts go to
/// [`SplatShadowStats`] too. A directional light's cascades of one camera are drawn
/// in one run, each in a cell of one layer (`cells`): its first cascade holds the
/// run's draw and buffers and every cascade its [`ShadowCell`]. Decides whether each
/// run draws anew or from the surface it kept while it stood still ([`StillShadow`]).
pub fn prepare_shadow_views(
    mut commands: Commands,
    device: Res<RenderDevice>,
    pipelines: Option<Res<SplatPipelines>>,
    memory: Res<SplatMemory>,
    gpu_limits: Res<SplatGpuLimits>,
    mut views: Query<ShadowViewItem, With<ShadowView>>,
    clouds: Query<(&MainEntity, &ExtractedCloud)>,
    lights: Query<ShadowLight>,
    gpu_splats: Res<RenderAssets<GpuSplats>>,
    lod_trees: Res<GpuLodTrees>,
    shader_time: Res<SplatShaderTime>,
    stats: Res<SplatShadowStats>,
    cameras: Query<(&MainEntity, &ViewLightEntities)>,
    mut work: ResMut<ShadowWork>,
) {
    let Some(pipelines) = pipelines else {
        return;
    };
    let started = Instant::now();
    let max_binding = gpu_limits.max_storage_binding(&device);
    let limits = BandLimits::new(max_binding, PROJECTED_SPLAT_BYTES, SortKey::U32.bytes());
    let max_dimension = device.limits().max_texture_dimension_2d;
    let device = device.wgpu_device();
    let default_layers = RenderLayers::default();
    // A directional light's cascades are views of a camera (main-world entity).
    let camera_of: HashMap<Entity, Entity> = cameras
        .iter()
        .flat_map(|(camera, cascades)| cascades.lights.iter().map(move |view| (*view, camera.id())))
        .collect();
    let mut casting = Vec::new();
    for (entity, (view, shadow_view), frustum, (light, layers), ..) in &views {
        // What the light asks of its views. A light with `SplatLod` draws each as a
        // cut, as a camera does; the run's LOD state is made when the light asks and
        // dropped when it stops.
        let (light_main, lod, redraw, scale) = match lights.get(light_of(light)) {
            Ok((main, lod, redraw, scale)) => (Some(main.id()), lod, redraw, scale.copied()),
            Err(_) => (None, None, true, None),
        };
        // The splats' surface is drawn at the light's `SplatShadowScale` of its map.
        let map_size = UVec2::new(view.viewport.z, view.viewport.w);
        let size = map_size / scale.unwrap_or_default().for_map(map_size.x, map_size.y);
        let drawn = casters(
            frustum,
            layers.unwrap_or(&default_layers),
            clouds.iter(),
            &gpu_splats,
        );
        let camera = (size.x > 0 && size.y > 0 && !drawn.is_empty())
            .then(|| {
                SplatCamera::from_view(view.world_from_view.to_matrix(), view.clip_from_view, size)
            })
            .flatten();
        let Some(mut camera) = camera else {
            commands
                .entity(entity)
                .remove::<ShadowViewState>()
                .remove::<ShadowCell>();
            continue;
        };
        if camera.orthographic
            && let Some(nearest) = nearest_depth(&camera, &drawn)
        {
            camera.near = camera.near.min(nearest - 1e-3 * nearest.abs().max(1.0));
        }
        let camera_main = camera_of.get(&entity).copied();
        let cascade = match (light, camera_main) {
            (
                &LightEntity::Directional {
                    light_entity,
                    cascade_index,
                },
                Some(camera_main),
            ) => Some((light_entity, camera_main, cascade_index)),
            _ => None,
        };
        casting.push(Caster {
            entity,
            cascade,
            light: light_main.map(|main| (main, shadow_view.pass_name.to_string(), camera_main)),
            lod,
            redraw,
            size,
            camera,
            drawn,
        });
    }

    let mut drawing = Vec::new();
    let mut planned = Vec::new();
    for (run, layout) in runs(casting, max_dimension) {
        let leader = &run[0];
        let layer_camera = leader.camera;
        let (folded, cells) = fold_run(&run, &layout);
        let (drawn, (splats, held)) = run_clouds(&run);
        let Ok((.., buffers, view_lod, still, _)) = views.get_mut(leader.entity) else {
            continue;
        };
        let counts = leader.lod.is_some_and(ViewLod::counts_for);
        let lod = ViewLod::follow(
            &mut commands,
            leader.entity,
            (leader.lod, counts),
            view_lod,
            device,
            &memory,
            layer_camera.focal[1],
            splats,
        )
        .map(|(frame, _)| frame);
        let (instances, _, dispatches) = plan_dispatches_in_cells(
            drawn.iter().copied(),
            &folded,
            shader_time.0,
            (lod.map(|_| &*lod_trees), lod),
            lod.map(|_| &*lod_trees),
        );
        let (splats, held) = match leader.lod {
            Some(settings) => {
                let budget = u64::from(settings.budget.max(1));
                (splats.min(budget), held.min(budget))
            }
            None => (splats, held),
        };
        let need = ViewNeed {
            splats: u32::try_from(splats).unwrap_or(u32::MAX),
            held_splats: u32::try_from(held).unwrap_or(u32::MAX),
            chunks: dispatches.len() as u32,
            instances: instances.len() as u32,
            tiles: tiles_for(layout.layer),
            sources: false,
            lit_points: false,
            // Seen from far, a cloud falls into a few tiles (`tile_render.wgsl`).
            tile_chunks: gpu_limits.max_tile_chunks.unwrap_or(u32::MAX),
        };
        // Sized from its own counts, as a camera is; the buffers come below.
        let (plan, counts) = PlannedView::from_counts(
            leader.entity,
            (layout.layer, LayerOutputs::SHADOW),
            buffers.as_deref(),
            (&need, &limits),
            device,
        );
        let draw = ViewDraw {
            receive: false,
            camera: layer_camera,
            origin: UVec2::ZERO,
            size: layout.layer,
            instances,
            dispatches,
            pick: None,
            lod,
            cells,
            planned_ns: 0,
        };
        // Whether it stands still: the verdict on a kept surface comes with the counts
        // of the frame it was copied from.
        let mut fresh = None;
        let still = match still {
            Some(still) => still.into_inner(),
            None => fresh.insert(StillShadow::default()),
        };
        if let Some((tag, counts)) = &counts {
            still.take_counts(*tag, counts);
        }
        let redraw = run.iter().any(|view| view.redraw);
        let inputs = (!redraw)
            .then(|| StillInputs::of(&draw, &gpu_splats, &lod_trees))
            .flatten();
        still.plan(inputs, (layout.layer, &plan.bands), device, &memory);
        let from_kept = still.draw == StillDraw::FromKept;
        planned.push(plan);
        // The run's counts are its first view's.
        if let Some(view) = &leader.light {
            if let Some((_, counts)) = &counts {
                stats.record(view, counts);
            }
            stats.set_from_kept(view, from_kept);
            drawing.push(view.clone());
        }
        let mut leader_commands = commands.entity(leader.entity);
        leader_commands.insert(ViewDraw {
            planned_ns: started.elapsed().as_nanos() as u64,
            ..draw
        });
        if let Some(fresh) = fresh {
            leader_commands.insert(fresh);
        }
        for (k, (view, rect)) in run.iter().zip(&layout.cells).enumerate() {
            if k > 0 {
                // Its splats are in the first view's run.
                commands.entity(view.entity).remove::<RunState>();
            }
            let Ok((.., cell)) = views.get_mut(view.entity) else {
                continue;
            };
            match cell {
                Some(mut cell) => {
                    cell.leader = leader.entity;
                    cell.rect = *rect;
                    cell.layer = layout.layer;
                }
                None => {
                    commands.entity(view.entity).insert(ShadowCell {
                        leader: leader.entity,
                        rect: *rect,
                        layer: layout.layer,
                        params: LayerParams::new(device, &memory),
                    });
                }
            }
        }
    }
    stats.retain(&drawing);
    let shared = work.0.share(&planned, device, &pipelines, &memory);
    for (plan, shared) in planned.iter().zip(shared) {
        if let Ok((.., buffers, _, _, _)) = views.get_mut(plan.entity) {
            let previous = buffers.map(Mut::into_inner);
            give_view_its_buffers(&mut commands, previous, plan, shared, (device, &memory));
        }
    }
}

/// Writes every drawing run's uniforms and makes its frame's bind groups, on its
/// first view, and every casting view's depth write from its cell of the run's layer
/// ([`ShadowFrame`]); a run drawn from its kept surface binds that alone.
pub fn prepare_shadow_bind_groups(
    mut commands: Commands,
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    pipelines: Option<Res<SplatPipelines>>,
    fragment_passes: Option<Res<FragmentPasses>>,
    cache: Res<PipelineCache>,
    gpu_splats: Res<RenderAssets<GpuSplats>>,
    lod_trees: Res<GpuLodTrees>,
    no_scene_depth: Option<Res<NoSceneDepth>>,
    views: Query<(Entity, &ExtractedView, &ShadowCell), With<ShadowView>>,
    runs: Query<
        (
            &ViewDraw,
            &ViewBuffers,
            Option<&ViewLod>,
            Option<&StillShadow>,
        ),
        With<ShadowView>,
    >,
) {
    let (Some(pipelines), Some(fragment_passes), Some(no_scene_depth)) =
        (pipelines, fragment_passes, no_scene_depth)
    else {
        return;
    };
    let device = device.wgpu_device();
    // Shadow maps are single-sampled whatever the cameras' MSAA.
    let resolve_pipeline = fragment_passes
        .depth_write
        .pipeline(&cache, CORE_3D_DEPTH_FORMAT, 1);
    for (entity, view, cell) in &views {
        let run = runs.get(cell.leader).ok();
        let (Some(pipeline), Some((draw, buffers, lod, still))) = (&resolve_pipeline, run) else {
            commands.entity(entity).remove::<ShadowFrame>();
            continue;
        };
        let kept = still
            .filter(|still| still.draw == StillDraw::FromKept)
            .and_then(StillShadow::kept);
        // A run drawn from its kept surface runs no pass but the depth writes; the
        // run's passes are bound on its first view.
        let (bands, surface) = match kept {
            Some(kept) => (Some(Vec::new()), &kept.median_depth),
            None if entity != cell.leader => (Some(Vec::new()), &buffers.layer.median_depth),
            None => {
                let dispatches: Option<Vec<_>> = draw
                    .dispatches
                    .iter()
                    .map(|plan| plan.resolve(&gpu_splats, &lod_trees))
                    .collect();
                let bands = dispatches.and_then(|dispatches| {
                    bind_bands(
                        device,
                        &queue,
                        &pipelines,
                        (draw, buffers),
                        &dispatches,
                        (&no_scene_depth.0, false),
                        None,
                        lod,
                    )
                });
                (bands, &buffers.layer.median_depth)
            }
        };
        let Some(bands) = bands else {
            commands.entity(entity).remove::<ShadowFrame>();
            continue;
        };
        // The map, whose texels the cell's each cover `scale` a side.
        let map_size = UVec2::new(view.viewport.z, view.viewport.w);
        let scale = map_size.x / cell.rect[2].max(1);
        cell.params.write_cell(
            &queue,
            (UVec2::ZERO, scale),
            (cell.rect, cell.layer),
            CORE_3D_DEPTH_FORMAT,
        );
        let group = fragment_passes
            .depth_write
            .bind_group(device, surface, &cell.params.buffer);
        commands.entity(entity).insert(ShadowFrame {
            bands,
            size: map_size,
            resolve: (pipeline.clone(), group),
        });
    }
}
