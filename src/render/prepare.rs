//! Each frame, before the camera schedules run: sizes every splat view's bands and
//! buffers, writes their uniforms and builds the bind groups their passes use.

use std::collections::HashMap;

use bevy::asset::AssetId;
use bevy::camera::Camera3d;
use bevy::camera::CompositingSpace;
use bevy::ecs::prelude::*;
use bevy::log::{debug, warn};
use bevy::math::{Mat4, UVec2};
use bevy::render::render_asset::RenderAssets;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::sync_world::MainEntity;
use bevy::render::view::{
    ExtractedView, Msaa, RenderVisibleEntities, ViewDepthTexture, ViewTarget,
};
use wgpu::TextureUsages;

use super::band_buffers::{BandBuffers, BandCapacity, tiles_for};
use super::bands::{Band, BandLimits, BandNeed, first_bands, next_bands};
use super::composite::CompositeUniform;
use super::extract::ExtractedCloud;
use super::frame::{Dispatch, SplatFrame, band_frame};
use super::gpu_cloud::GpuSplats;
use super::memory::SplatMemory;
use super::preprocess::{
    CHUNK_PARAMS_STRIDE, ChunkParams, CloudInstance, PROJECTED_SPLAT_BYTES, PreprocessPass,
};
use super::radix_sort::SORT_KEY_BYTES;
use super::readback::{CounterReadback, GpuCounts};
use super::stats::SplatStats;
use super::view_buffers::{SplatLayer, ViewBuffers};
use super::view_uniform::{BandUniform, SplatCamera};
use super::{SplatComposite, SplatPipelines};
use crate::asset::GaussianSplats;
use crate::cloud::GaussianCloud;

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
    /// Set when the view has splats to draw this frame.
    pub frame: Option<SplatFrame>,
}

/// Splat cameras read the opaque depth, so their depth textures must be bindable.
pub fn request_readable_depth(mut cameras: Query<&mut Camera3d>) {
    let readable = TextureUsages::TEXTURE_BINDING.bits();
    for mut camera in &mut cameras {
        if camera.depth_texture_usages.0 & readable == 0 {
            camera.depth_texture_usages.0 |= readable;
        }
    }
}

/// Groups the clouds a view draws by asset, so that every chunk of an asset is
/// preprocessed for all of its clouds in one dispatch: separate dispatches would each
/// wait for the one before (they write the same outputs).
fn plan_dispatches<'a>(
    drawn: &[(&ExtractedCloud, &'a GpuSplats)],
    camera: &SplatCamera,
) -> (Vec<CloudInstance>, Vec<Dispatch<'a>>) {
    let mut by_asset: Vec<(AssetId<GaussianSplats>, &GpuSplats, Vec<CloudInstance>)> = Vec::new();
    for (cloud, gpu) in drawn {
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
        };
        match by_asset.iter_mut().find(|(id, ..)| *id == cloud.asset) {
            Some((.., instances)) => instances.push(instance),
            None => by_asset.push((cloud.asset, gpu, vec![instance])),
        }
    }
    let mut instances = Vec::new();
    let mut dispatches = Vec::new();
    for (_, gpu, group) in by_asset {
        let first = instances.len() as u32;
        instances.extend_from_slice(&group);
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
                });
                start += count;
            }
        }
    }
    (instances, dispatches)
}

/// What a view draws this frame, the input to sizing its bands.
struct ViewNeed {
    /// Splats of every cloud the view draws: the most that can be visible.
    splats: u32,
    chunks: u32,
    instances: u32,
    tiles: UVec2,
}

/// The capacities of every band for this frame. Uses the GPU's latest report on the
/// previous buffers, if one came back (see `bands::next_bands`).
fn plan_bands(
    previous: Option<&ViewBuffers>,
    counts: Option<&[GpuCounts]>,
    need: &ViewNeed,
    limits: &BandLimits,
) -> Vec<BandCapacity> {
    let previous = previous.filter(|old| {
        old.bands
            .first()
            .is_some_and(|b| b.capacity.tiles == need.tiles)
    });
    let bands: Vec<Band> = match previous {
        None => first_bands(need.splats, need.tiles.y, limits),
        Some(old) => {
            let now: Vec<Band> = old
                .bands
                .iter()
                .map(|b| Band {
                    rows: b.capacity.rows.clone(),
                    splats: b.capacity.splats,
                    pairs: b.capacity.pairs,
                })
                .collect();
            match counts.filter(|c| c.len() == now.len()) {
                Some(counts) => {
                    let needs: Vec<BandNeed> = counts
                        .iter()
                        .map(|c| BandNeed {
                            splats: c.visible_splats,
                            pairs: c.pairs_needed,
                        })
                        .collect();
                    warn_about_overflow(&now, &needs, limits);
                    let next = next_bands(&now, &needs, need.splats, limits);
                    if next.len() != now.len() {
                        debug!(
                            "splat view redrawn in {} bands (was {})",
                            next.len(),
                            now.len()
                        );
                    }
                    next
                }
                None => {
                    let mut now = now;
                    // A view in one band holds every splat of its clouds, new ones too.
                    if let [only] = now.as_mut_slice() {
                        only.splats = only.splats.max(need.splats.min(limits.max_splats));
                    }
                    now
                }
            }
        }
    };
    bands
        .into_iter()
        .map(|band| BandCapacity {
            splats: band.splats,
            pairs: band.pairs,
            chunks: need.chunks,
            instances: need.instances,
            tiles: need.tiles,
            rows: band.rows,
        })
        .collect()
}

/// Frames are incomplete while bands grow; only a band of one tile row that still
/// needs more than a binding holds cannot be helped.
fn warn_about_overflow(bands: &[Band], needs: &[BandNeed], limits: &BandLimits) {
    for (band, need) in bands.iter().zip(needs) {
        let over = need.splats > limits.max_splats || need.pairs > limits.max_pairs;
        if over && band.rows.len() <= 1 {
            warn!(
                "tile row {} of a camera needs {} splats and {} tile pairs, but one storage \
                 binding holds {} and {}: splats are missing from its image",
                band.rows.start, need.splats, need.pairs, limits.max_splats, limits.max_pairs
            );
        } else if need.splats > band.splats || need.pairs > band.pairs {
            debug!(
                "splat band {:?} needed {} splats / {} tile pairs but held {} / {}: that frame \
                 was incomplete",
                band.rows, need.splats, need.pairs, band.splats, band.pairs
            );
        }
    }
}

/// Keeps the previous buffers where they still serve; builds what changed.
fn reuse_or_build(
    previous: Option<ViewBuffers>,
    capacities: Vec<BandCapacity>,
    viewport: UVec2,
    device: &wgpu::Device,
    pipelines: &SplatPipelines,
    memory: &SplatMemory,
) -> ViewBuffers {
    let (layer, mut old_bands, readback) = match previous {
        Some(old) if old.layer.viewport == viewport => (old.layer, old.bands, Some(old.readback)),
        _ => (SplatLayer::new(device, memory, viewport), Vec::new(), None),
    };
    let readback = readback
        .filter(|r| r.bands() == capacities.len())
        .unwrap_or_else(|| CounterReadback::new(device, memory, capacities.len()));
    let bands = capacities
        .into_iter()
        .map(|need| {
            let same_rows = old_bands.iter().position(|b| b.capacity.rows == need.rows);
            match same_rows.map(|i| old_bands.swap_remove(i)) {
                Some(band)
                    if band.capacity.holds(&need)
                        && band.capacity.pairs == need.pairs
                        && band.capacity.splats == need.splats =>
                {
                    band
                }
                old => {
                    // Keep headroom for clouds and chunks, so one appearing doesn't
                    // rebuild every frame.
                    let (chunks, instances) =
                        old.map_or((0, 0), |b| (b.capacity.chunks, b.capacity.instances));
                    let capacity = BandCapacity {
                        chunks: need.chunks.max(chunks),
                        instances: need.instances.max(instances),
                        ..need
                    };
                    debug!("splat band buffers for {capacity:?}");
                    BandBuffers::new(device, pipelines, memory, capacity)
                }
            }
        })
        .collect();
    ViewBuffers {
        layer,
        bands,
        readback,
    }
}

pub fn prepare_splat_views(
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    pipelines: Option<Res<SplatPipelines>>,
    memory: Res<SplatMemory>,
    stats: Res<SplatStats>,
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
    )>,
    clouds: Query<&ExtractedCloud>,
    gpu_splats: Res<RenderAssets<GpuSplats>>,
) {
    let Some(pipelines) = pipelines else {
        return;
    };
    let device_limits = device.limits();
    let max_binding = device_limits
        .max_storage_buffer_binding_size
        .min(device_limits.max_buffer_size);
    let limits = BandLimits::new(max_binding, PROJECTED_SPLAT_BYTES, SORT_KEY_BYTES);
    let device = device.wgpu_device();

    // Views that draw no splats this frame are left in here and dropped at the end,
    // giving their buffers back.
    let mut previous = std::mem::take(&mut splat_views.views);
    let mut live = Vec::new();
    for (entity, main_entity, view, target, depth, visible, msaa, composite) in &views {
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
            .filter_map(|(render_entity, _)| clouds.get(*render_entity).ok())
            .filter_map(|cloud| Some((cloud, gpu_splats.get(cloud.asset)?)))
            .filter(|(_, gpu)| !gpu.is_empty())
            .collect();
        if drawn.is_empty() {
            continue;
        }

        let splats: u64 = drawn.iter().map(|(_, gpu)| u64::from(gpu.len())).sum();
        let (instances, dispatches) = plan_dispatches(&drawn, &camera);
        let need = ViewNeed {
            splats: u32::try_from(splats).unwrap_or(u32::MAX),
            chunks: dispatches.len() as u32,
            instances: instances.len() as u32,
            tiles: tiles_for(size),
        };
        let old = previous.remove(&entity).map(|state| state.buffers);
        let counts = old.as_ref().and_then(|old| old.readback.poll(device));
        if let Some(counts) = &counts {
            stats.update(main_entity.id(), |s| s.record(counts));
        }
        let capacities = plan_bands(old.as_ref(), counts.as_deref(), &need, &limits);
        let buffers = reuse_or_build(old, capacities, size, device, &pipelines, &memory);

        let multisampled_depth = msaa.samples() > 1;
        let mut bands = Vec::with_capacity(buffers.bands.len());
        for band in &buffers.bands {
            let capacity = &band.capacity;
            let band_uniform = BandUniform {
                pair_capacity: capacity.pairs,
                splat_capacity: capacity.splats,
                first_row: capacity.rows.start,
                end_row: capacity.rows.end,
            };
            queue.write_buffer(
                &band.view_uniform,
                0,
                bytemuck::bytes_of(&camera.uniform(origin, size, band_uniform)),
            );
            queue.write_buffer(
                &band.capacities,
                0,
                bytemuck::bytes_of(&[capacity.pairs, capacity.splats, 0, 0]),
            );
            queue.write_buffer(&band.instances, 0, bytemuck::cast_slice(&instances));
            for (slot, dispatch) in dispatches.iter().enumerate() {
                let params = ChunkParams {
                    splat_count: dispatch.chunk.count,
                    sh_degree: dispatch.splats.sh_degree,
                    sh_stride: dispatch.splats.sh_stride,
                    grid_width: PreprocessPass::grid_width(dispatch.threads()),
                    first_instance: dispatch.first_instance,
                    instance_count: dispatch.instance_count,
                    sh_words: dispatch.splats.sh_words,
                    sh_half: u32::from(dispatch.splats.sh_half),
                };
                let offset = slot as u64 * CHUNK_PARAMS_STRIDE;
                queue.write_buffer(&band.chunk_params, offset, bytemuck::bytes_of(&params));
            }
            bands.push(band_frame(
                device,
                &pipelines,
                band,
                &dispatches,
                depth.view(),
                multisampled_depth,
                &buffers.layer.view,
            ));
        }

        let linearize = match composite.copied().unwrap_or_default() {
            SplatComposite::Passthrough => false,
            // A main texture that stores sRGB-encoded values takes them as they are.
            SplatComposite::Linearize => target.compositing_space != Some(CompositingSpace::Srgb),
        };
        queue.write_buffer(
            &buffers.layer.composite_params,
            0,
            bytemuck::bytes_of(&CompositeUniform {
                viewport_origin: origin.to_array(),
                linearize: u32::from(linearize),
                _pad: 0,
            }),
        );
        let frame = SplatFrame {
            bands,
            multisampled_depth,
            viewport_origin: origin,
            viewport_size: size,
            composite_pipeline: pipelines.composite.pipeline(
                device,
                target.main_texture_format(),
                msaa.samples(),
            ),
            composite: pipelines.composite.bind_group(
                device,
                &buffers.layer.view,
                &buffers.layer.composite_params,
            ),
        };
        stats.update(main_entity.id(), |s| s.frames += 1);
        splat_views.views.insert(
            entity,
            SplatView {
                buffers,
                frame: Some(frame),
            },
        );
        live.push(main_entity.id());
    }

    stats.retain(|camera| live.contains(camera));
}
