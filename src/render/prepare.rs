//! Each frame, before the camera schedules run: sizes every splat view's bands and
//! buffers, writes their uniforms and builds the bind groups their passes use.

use std::collections::HashMap;

use bevy::asset::AssetId;
use bevy::camera::Camera3d;
use bevy::camera::CompositingSpace;
use bevy::core_pipeline::core_3d::CORE_3D_DEPTH_FORMAT;
use bevy::ecs::prelude::*;
use bevy::log::warn_once;
use bevy::math::{Mat4, UVec2};
use bevy::platform::time::Instant;
use bevy::render::render_asset::RenderAssets;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::sync_world::MainEntity;
use bevy::render::view::{
    ExtractedView, Msaa, RenderVisibleEntities, ViewDepthTexture, ViewTarget,
};
use wgpu::TextureUsages;

use super::extract::{ExtractedCloud, SplatShaderTime};
use super::gpu_cloud::GpuSplats;
use super::limits::SplatGpuLimits;
use super::memory::SplatMemory;
use super::passes::SplatPipelines;
use super::passes::composite::{CompositeMode, SplatComposite};
use super::passes::depth_write::SplatDepth;
use super::passes::preprocess::{
    CROP_BOX, CROP_EMPTY, CROP_SPHERE, CloudInstance, CropGpu, MAX_CROP_VOLUMES_GPU,
    PROJECTED_SPLAT_BYTES,
};
use super::passes::radix_sort::SortKey;
use super::passes::tile_render::tiles_for;
use super::view::ViewBuffers;
use super::view::bands::BandLimits;
use super::view::dispatch::Dispatch;
use super::view::frame::{SplatFrame, band_frame};
use super::view::picks::{SplatPickAnswers, SplatPickRequest, ViewPicks};
use super::view::sizing::{ViewNeed, plan_bands, reuse_or_build};
use super::view::splat_layer::SceneCopy;
use super::view::stats::{STAGE_COUNT, SplatStats};
use super::view::timestamps::{PassTimestamps, SplatPassTimes};
use super::view::uniform::SplatCamera;
use crate::asset::GaussianSplats;
use crate::cloud::{GaussianCloud, SplatRasterMode};
use crate::crop::{CropMode, CropShape, SplatCrop};
use crate::shader::SplatShaderId;

/// The splat work of every camera view, kept across frames.
#[derive(Resource, Default)]
pub struct SplatViews {
    views: HashMap<Entity, SplatView>,
}

impl SplatViews {
    pub(super) fn get(&self, view: Entity) -> Option<&SplatView> {
        self.views.get(&view)
    }
}

pub struct SplatView {
    pub buffers: ViewBuffers,
    /// The camera has `SplatPassTimes`: each stage is timed.
    pub timed: bool,
    /// Where the device writes a timed view's timestamps: each stage's GPU time.
    pub timestamps: Option<PassTimestamps>,
    /// Set when the view has splats to draw this frame.
    pub frame: Option<SplatFrame>,
    /// The camera in the main world: what `SplatStats` is keyed by.
    pub main_entity: Entity,
    /// For a camera that picks: its pick buffers and read-back.
    pub picks: Option<ViewPicks>,
    /// For a camera whose composite blends over the scene: the copy of its colour.
    pub scene_copy: Option<SceneCopy>,
}

/// Makes the depth texture of every camera that draws splats bindable: the tile render
/// reads the opaque scene's depth to stop each pixel's splats there.
///
/// Any 3D camera draws the clouds it sees, so a camera qualifies once a cloud is in its
/// view (visible after culling and `RenderLayers`, loaded or not). Cameras that never
/// see one (a UI or overlay camera, one whose layers leave the clouds out) keep the
/// depth usage they asked for, as they would without the plugin (a sampled depth
/// texture may lose a driver's depth compression).
///
/// A camera that has seen a cloud keeps readable depth for as long as it lives: the
/// usage is part of what Bevy's texture cache matches on, so switching back and forth
/// as clouds leave and enter its view would allocate a new full-screen depth texture
/// each time. The flag is set on the render world's copy of `Camera3d` (extracted
/// afresh every frame) before the depth textures are made, so the user's component is
/// not changed.
pub fn request_readable_depth(
    mut cameras: Query<(Entity, &mut Camera3d, &RenderVisibleEntities)>,
    mut seen_clouds: Local<std::collections::HashSet<Entity>>,
) {
    // Render-world camera entities live as long as their main-world cameras.
    seen_clouds.retain(|&camera| cameras.contains(camera));
    let readable = TextureUsages::TEXTURE_BINDING.bits();
    for (entity, mut camera, visible) in &mut cameras {
        let sees_clouds = visible
            .get::<GaussianCloud>()
            .is_some_and(|clouds| clouds.iter_visible().next().is_some());
        if sees_clouds {
            seen_clouds.insert(entity);
        }
        if seen_clouds.contains(&entity) && camera.depth_texture_usages.0 & readable == 0 {
            camera.depth_texture_usages.0 |= readable;
        }
    }
}

/// `crop`'s first volumes as the preprocess tests them.
fn with_crop(mut instance: CloudInstance, crop: Option<&SplatCrop>) -> CloudInstance {
    let Some(crop) = crop else {
        return instance;
    };
    if crop.volumes.len() > MAX_CROP_VOLUMES_GPU {
        warn_once!(
            "a SplatCrop has {} volumes; only the first {MAX_CROP_VOLUMES_GPU} act",
            crop.volumes.len()
        );
    }
    for (slot, volume) in instance.crops.iter_mut().zip(&crop.volumes) {
        let cut = volume.mode == CropMode::Cut;
        *slot = match volume.unit_from_cloud() {
            Some(unit_from_cloud) => CropGpu {
                unit_from_cloud: unit_from_cloud.to_cols_array_2d(),
                shape: match volume.shape {
                    CropShape::Box { .. } => CROP_BOX,
                    CropShape::Sphere { .. } => CROP_SPHERE,
                },
                cut: u32::from(cut),
                _pad: [0; 2],
            },
            None => CropGpu {
                shape: CROP_EMPTY,
                cut: u32::from(cut),
                ..CropGpu::default()
            },
        };
        instance.crop_count += 1;
        instance.crop_keeps += u32::from(!cut);
    }
    instance
}

/// Groups the clouds a view draws by asset (and `SplatShader`, which picks the
/// preprocess variant), so that every chunk of an asset is preprocessed for all of its
/// clouds in one dispatch: separate dispatches would each wait for the one before (they
/// write the same outputs).
/// Also returns each instance's cloud (main-world entity), in instance order.
fn plan_dispatches<'a>(
    drawn: &[(Entity, &ExtractedCloud, &'a GpuSplats)],
    camera: &SplatCamera,
    time: f32,
) -> (Vec<CloudInstance>, Vec<Entity>, Vec<Dispatch<'a>>) {
    type Group<'g> = (
        (AssetId<GaussianSplats>, Option<SplatShaderId>),
        &'g GpuSplats,
        Vec<(CloudInstance, Entity)>,
    );
    let mut by_asset: Vec<Group<'a>> = Vec::new();
    for (entity, cloud, gpu) in drawn {
        let world_from_cloud = Mat4::from(cloud.world_from_cloud);
        let cam_from_cloud = camera.cam_from_world * world_from_cloud;
        let camera_in_cloud = world_from_cloud
            .inverse()
            .transform_point3(camera.world_position);
        if !cam_from_cloud.is_finite() || !camera_in_cloud.is_finite() {
            continue;
        }
        let instance = CloudInstance {
            cam_from_cloud: cam_from_cloud.to_cols_array_2d(),
            camera_in_cloud: camera_in_cloud.extend(1.0).to_array(),
            antialiased: u32::from(
                cloud
                    .raster_mode
                    .map_or(gpu.antialiased, |mode| mode == SplatRasterMode::Antialiased),
            ),
            shader_time: time,
            _pad: [0; 2],
            tint: cloud.tint.sanitized(),
            crop_count: 0,
            crop_keeps: 0,
            _pad_crop: [0; 2],
            crops: [CropGpu::default(); MAX_CROP_VOLUMES_GPU],
            world_from_cloud: world_from_cloud.to_cols_array_2d(),
            shader_params: cloud
                .shader
                .map_or([[0.0; 4]; 2], |shader| shader.params.map(|v| v.to_array())),
        };
        let instance = with_crop(instance, cloud.crop.as_ref());
        let instance = (instance, *entity);
        let key = (cloud.asset, cloud.shader.map(|shader| shader.id));
        match by_asset.iter_mut().find(|(k, ..)| *k == key) {
            Some((.., instances)) => instances.push(instance),
            None => by_asset.push((key, gpu, vec![instance])),
        }
    }
    let mut instances = Vec::new();
    let mut clouds = Vec::new();
    let mut dispatches = Vec::new();
    for ((_, shader), gpu, group) in by_asset {
        let first = instances.len() as u32;
        instances.extend(group.iter().map(|(instance, _)| *instance));
        clouds.extend(group.iter().map(|(_, entity)| *entity));
        for chunk in &gpu.chunks {
            // Keep splats × instances within a u32 thread index.
            let per_dispatch = (u32::MAX / chunk.count.max(1)).max(1);
            let mut start = 0;
            while start < group.len() as u32 {
                let count = per_dispatch.min(group.len() as u32 - start);
                dispatches.push(Dispatch {
                    chunk,
                    splats: gpu,
                    first_instance: first + start,
                    instance_count: count,
                    shader,
                });
                start += count;
            }
        }
    }
    (instances, clouds, dispatches)
}

pub fn prepare_splat_views(
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    pipelines: Option<Res<SplatPipelines>>,
    memory: Res<SplatMemory>,
    stats: Res<SplatStats>,
    answers: Res<SplatPickAnswers>,
    gpu_limits: Res<SplatGpuLimits>,
    mut splat_views: ResMut<SplatViews>,
    views: Query<(
        Entity,
        &MainEntity,
        &ExtractedView,
        &ViewTarget,
        &ViewDepthTexture,
        &RenderVisibleEntities,
        &Msaa,
        Option<&SplatComposite>,
        Has<SplatDepth>,
        Option<&SplatPickRequest>,
        Has<SplatPassTimes>,
    )>,
    clouds: Query<&ExtractedCloud>,
    gpu_splats: Res<RenderAssets<GpuSplats>>,
    shader_time: Res<SplatShaderTime>,
) {
    let Some(pipelines) = pipelines else {
        return;
    };
    let max_binding = gpu_limits.max_storage_binding(&device);
    // A band's pairs live in the tile sort's key and value buffers, 4 bytes each.
    let limits = BandLimits::new(max_binding, PROJECTED_SPLAT_BYTES, SortKey::U32.bytes());
    let device = device.wgpu_device();

    // Views that draw no splats this frame are left in here and dropped at the end,
    // giving their buffers back.
    let mut previous = std::mem::take(&mut splat_views.views);
    let mut live = Vec::new();
    for (
        entity,
        main_entity,
        view,
        target,
        depth,
        visible,
        msaa,
        composite,
        writes_depth,
        pick_request,
        timed,
    ) in &views
    {
        let started = Instant::now();
        let origin = UVec2::new(view.viewport.x, view.viewport.y);
        let size = UVec2::new(view.viewport.z, view.viewport.w);
        if size.x == 0 || size.y == 0 {
            continue;
        }
        let Some(camera) =
            SplatCamera::from_view(view.world_from_view.to_matrix(), view.clip_from_view, size)
        else {
            continue;
        };
        let Some(class) = visible.get::<GaussianCloud>() else {
            continue;
        };
        let drawn: Vec<_> = class
            .iter_visible()
            .filter_map(|(render_entity, main)| Some((main.id(), clouds.get(*render_entity).ok()?)))
            .filter_map(|(main, cloud)| Some((main, cloud, gpu_splats.get(cloud.asset)?)))
            .filter(|(_, _, gpu)| !gpu.is_empty())
            .collect();
        if drawn.is_empty() {
            continue;
        }

        let splats: u64 = drawn.iter().map(|(.., gpu)| u64::from(gpu.len())).sum();
        let (instances, instance_clouds, dispatches) =
            plan_dispatches(&drawn, &camera, shader_time.0);
        let need = ViewNeed {
            splats: u32::try_from(splats).unwrap_or(u32::MAX),
            chunks: dispatches.len() as u32,
            instances: instances.len() as u32,
            tiles: tiles_for(size),
            sources: pick_request.is_some(),
        };
        let (old, timestamps, picks, scene_copy) = match previous.remove(&entity) {
            Some(state) => (
                Some(state.buffers),
                state.timestamps,
                state.picks,
                state.scene_copy,
            ),
            None => (None, None, None, None),
        };
        // Made when the camera asks to be timed, dropped when it no longer does.
        let timestamps = if timed {
            timestamps.or_else(|| PassTimestamps::new(device, &queue, &memory, STAGE_COUNT))
        } else {
            None
        };
        let mut picks =
            pick_request.map(|_| picks.unwrap_or_else(|| ViewPicks::new(device, &memory)));
        if let Some(answer) = picks.as_ref().and_then(|p| p.poll(device)) {
            answers.put(main_entity.id(), answer);
        }
        let pick = pick_request
            .zip(picks.as_mut())
            .and_then(|(request, picks)| picks.write(device, &queue, request, instance_clouds));
        let counts = old.as_ref().and_then(|old| old.readback.poll(device));
        if let Some(counts) = &counts {
            stats.update(main_entity.id(), |s| s.record(counts));
        }
        if let Some(times) = timestamps.as_ref().and_then(|t| t.poll(device)) {
            stats.update(main_entity.id(), |s| s.record_times(&times));
        }
        let capacities = plan_bands(old.as_ref(), counts.as_deref(), &need, &limits);
        let buffers = reuse_or_build(
            old,
            capacities,
            size,
            device,
            &pipelines,
            &memory,
            writes_depth,
        );

        let multisampled_depth = msaa.samples() > 1;
        let mut bands = Vec::with_capacity(buffers.bands.len());
        for band in &buffers.bands {
            band.write_uniforms(&queue, &camera, origin, size, &instances, &dispatches);
            bands.push(band_frame(
                device,
                &pipelines,
                band,
                &dispatches,
                depth.view(),
                multisampled_depth,
                &buffers.layer,
                picks.as_ref().filter(|_| pick.is_some()),
            ));
        }

        let linear_target = target.compositing_space != Some(CompositingSpace::Srgb);
        let copyable = target
            .main_texture()
            .usage()
            .contains(TextureUsages::COPY_SRC);
        let mode = CompositeMode::choose(
            composite.copied().unwrap_or_default(),
            linear_target,
            copyable,
        );
        if mode == CompositeMode::LinearOverBlack {
            warn_once!(
                "a splat camera's main texture lacks COPY_SRC (CameraMainTextureUsages): \
                 its splats are blended exactly over black only"
            );
        }
        let scene_copy = mode.reads_scene().then(|| {
            let format = target.main_texture_format();
            SceneCopy::reuse_or_new(scene_copy, device, &memory, format, size)
        });
        buffers.layer.write_params(
            &queue,
            origin,
            mode == CompositeMode::LinearOverBlack,
            target.main_texture_format(),
        );
        let frame = SplatFrame {
            bands,
            multisampled_depth,
            viewport_origin: origin,
            viewport_size: size,
            composite_pipeline: pipelines.composite.pipeline(
                device,
                mode,
                target.main_texture_format(),
                msaa.samples(),
            ),
            composite: pipelines.composite.bind_group(
                device,
                &buffers.layer.view,
                &buffers.layer.composite_params,
                scene_copy.as_ref().map(|copy| &copy.view),
            ),
            depth_write: writes_depth.then(|| {
                (
                    pipelines
                        .depth_write
                        .pipeline(device, CORE_3D_DEPTH_FORMAT, msaa.samples()),
                    pipelines.depth_write.bind_group(
                        device,
                        &buffers.layer.median_depth,
                        &buffers.layer.composite_params,
                    ),
                )
            }),
            pick,
        };
        let prepare_ns = started.elapsed().as_nanos() as u64;
        stats.update(main_entity.id(), |s| {
            s.frames += 1;
            s.cpu_prepare_ns = prepare_ns;
            // A camera that stopped timing its passes reports no stale times.
            if !timed {
                s.gpu_pass_ns = None;
            }
        });
        splat_views.views.insert(
            entity,
            SplatView {
                buffers,
                timed,
                timestamps,
                frame: Some(frame),
                main_entity: main_entity.id(),
                picks,
                scene_copy,
            },
        );
        live.push(main_entity.id());
    }

    stats.retain(|camera| live.contains(camera));
}
