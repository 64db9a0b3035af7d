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
use super::bands::{
    BandLimits, BandNeed, MIN_PAIRS, PairResize, band_rows, initial_bands, next_band_count,
    resize_pairs,
};
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
/// previous buffers, if one came back: the band count doubles when a band outgrew a
/// binding and halves when all are small, and each band's pair buffers follow its need.
fn plan_bands(
    previous: Option<&ViewBuffers>,
    counts: Option<&[GpuCounts]>,
    need: &ViewNeed,
    limits: &BandLimits,
) -> Vec<BandCapacity> {
    let band_splats = limits.band_splats(need.splats);
    let tile_rows = need.tiles.y;
    let previous = previous.filter(|old| {
        old.bands
            .first()
            .is_some_and(|b| b.capacity.tiles == need.tiles)
    });
    let old_pairs: Vec<u32> = previous.map_or_else(Vec::new, |old| {
        old.bands.iter().map(|b| b.capacity.pairs).collect()
    });
    let counts = counts.filter(|c| c.len() == old_pairs.len());

    let (bands, pairs): (u32, Vec<u32>) = match (previous, counts) {
        (None, _) => {
            let bands = initial_bands(need.splats, tile_rows, limits);
            (
                bands,
                vec![limits.initial_pairs(band_splats); bands as usize],
            )
        }
        (Some(_), None) => (old_pairs.len() as u32, old_pairs),
        (Some(_), Some(counts)) => {
            let needs: Vec<BandNeed> = counts
                .iter()
                .map(|c| BandNeed {
                    splats: c.visible_splats,
                    pairs: c.pairs_needed,
                })
                .collect();
            let now = old_pairs.len() as u32;
            let next = next_band_count(now, &needs, tile_rows, limits);
            warn_about_overflow(now, next, &needs, tile_rows, limits);
            if next == now {
                let pairs = old_pairs
                    .iter()
                    .zip(&needs)
                    .map(
                        |(&held, need)| match resize_pairs(held, need.pairs, limits.max_pairs) {
                            PairResize::Keep => held,
                            PairResize::Grow(to) => {
                                debug!(
                                    "a splat band needed {} tile pairs but held {held}: that \
                                 frame was incomplete; growing to {to}",
                                    need.pairs
                                );
                                to
                            }
                            PairResize::Shrink(to) => to,
                        },
                    )
                    .collect();
                (now, pairs)
            } else {
                // New rows for every band: spread the reported pairs evenly.
                let total: u64 = needs.iter().map(|n| u64::from(n.pairs)).sum();
                let each = total * 5 / 4 / u64::from(next);
                let each = u32::try_from(each)
                    .unwrap_or(u32::MAX)
                    .clamp(MIN_PAIRS.min(limits.max_pairs), limits.max_pairs);
                (next, vec![each; next as usize])
            }
        }
    };
    pairs
        .into_iter()
        .enumerate()
        .map(|(band, pairs)| BandCapacity {
            splats: band_splats,
            pairs,
            chunks: need.chunks,
            instances: need.instances,
            tiles: need.tiles,
            rows: band_rows(tile_rows, bands, band as u32),
        })
        .collect()
}

fn warn_about_overflow(
    now: u32,
    next: u32,
    needs: &[BandNeed],
    tile_rows: u32,
    limits: &BandLimits,
) {
    let most_splats = needs.iter().map(|n| n.splats).max().unwrap_or(0);
    let most_pairs = needs.iter().map(|n| n.pairs).max().unwrap_or(0);
    let overflowed = most_splats > limits.max_splats || most_pairs > limits.max_pairs;
    if !overflowed {
        if next != now {
            debug!("splat view merged from {now} into {next} bands");
        }
        return;
    }
    if next > now {
        debug!(
            "a splat band needed {most_splats} splats / {most_pairs} tile pairs, one storage \
             binding holds {} / {}: splitting the view into {next} bands",
            limits.max_splats, limits.max_pairs
        );
    } else {
        warn!(
            "a single row of tiles ({tile_rows} rows, {now} bands) needs {most_splats} splats \
             and {most_pairs} tile pairs, but one storage binding holds {} and {}: splats \
             are missing from this camera's image",
            limits.max_splats, limits.max_pairs
        );
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
    let build = |capacity: BandCapacity| {
        debug!("splat band buffers for {capacity:?}");
        BandBuffers::new(device, pipelines, memory, capacity)
    };
    let new_view = |layer: SplatLayer, capacities: Vec<BandCapacity>| ViewBuffers {
        layer,
        readback: CounterReadback::new(device, memory, capacities.len()),
        bands: capacities.into_iter().map(build).collect(),
    };
    let Some(old) = previous.filter(|old| old.layer.viewport == viewport) else {
        return new_view(SplatLayer::new(device, memory, viewport), capacities);
    };
    if old.bands.len() != capacities.len() {
        return new_view(old.layer, capacities);
    }
    let ViewBuffers {
        layer,
        bands: old_bands,
        readback,
    } = old;
    let bands = old_bands
        .into_iter()
        .zip(capacities)
        .map(|(band, need)| {
            if band.capacity.holds(&need) && band.capacity.pairs == need.pairs {
                band
            } else {
                // Grow with headroom kept, so a cloud appearing doesn't rebuild every frame.
                let held = &band.capacity;
                build(BandCapacity {
                    splats: need.splats.max(held.splats),
                    chunks: need.chunks.max(held.chunks),
                    instances: need.instances.max(held.instances),
                    ..need
                })
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
