//! Each frame, before the camera schedules run: sizes every splat view's buffers,
//! writes its uniforms and builds the bind groups its passes use.

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
use wgpu::{BindGroup, RenderPipeline, TextureUsages};

use super::composite::CompositeUniform;
use super::extract::ExtractedCloud;
use super::gpu_cloud::{GpuChunk, GpuSplats};
use super::memory::SplatMemory;
use super::preprocess::{
    CHUNK_PARAMS_STRIDE, ChunkParams, CloudInstance, PROJECTED_SPLAT_BYTES, PreprocessPass,
};
use super::radix_sort::SORT_KEY_BYTES;
use super::stats::SplatStats;
use super::view_buffers::{ViewBuffers, ViewCapacity};
use super::view_uniform::SplatCamera;
use super::{SplatComposite, SplatPipelines};
use crate::asset::GaussianSplats;
use crate::cloud::GaussianCloud;

/// Pairs reserved per splat before the GPU has reported what a view needs.
const INITIAL_PAIRS_PER_SPLAT: u32 = 4;
/// Pair buffers are never smaller than this.
const MIN_PAIRS: u32 = 1 << 16;
/// Pair buffers more than this many times larger than a frame needs are shrunk.
const SHRINK_BELOW: u32 = 2;

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

/// Everything one frame of one view binds, built in prepare and recorded by the node.
pub struct SplatFrame {
    /// One preprocess dispatch per cloud chunk: bind group, uniform offset, splats.
    pub preprocess: Vec<(BindGroup, u32, u32)>,
    pub indirect: BindGroup,
    pub duplicate: BindGroup,
    pub key_bits: u32,
    /// Indexed by which of the sort's ping-pong buffers holds the result.
    pub tile_range: [BindGroup; 2],
    pub tile_render: [BindGroup; 2],
    pub multisampled_depth: bool,
    pub tiles: UVec2,
    pub viewport_origin: UVec2,
    pub viewport_size: UVec2,
    pub composite_pipeline: RenderPipeline,
    pub composite: BindGroup,
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

/// One preprocess dispatch: a chunk of an asset for a run of instances of it.
struct Dispatch<'a> {
    chunk: &'a GpuChunk,
    splats: &'a GpuSplats,
    first_instance: u32,
    instance_count: u32,
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

/// What a view's pair buffers should become, once the GPU reported a frame's need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PairResize {
    Keep,
    /// The frame needed more than the buffers held (it was incomplete).
    Grow(u32),
    /// The buffers hold more than `SHRINK_BELOW` times what the frame needed.
    Shrink(u32),
}

/// Grows to 1.25× the need (at most `max_pairs`), or shrinks to 1.25× the need when
/// the buffers are far too large; the gap between the two keeps a view whose need
/// wobbles from rebuilding every frame.
fn resize_pairs(capacity: u32, needed: u32, max_pairs: u32) -> PairResize {
    let with_headroom = needed.saturating_add(needed / 4);
    if needed > capacity {
        PairResize::Grow(with_headroom.min(max_pairs))
    } else if needed.saturating_mul(SHRINK_BELOW) < capacity && capacity > MIN_PAIRS {
        PairResize::Shrink(with_headroom.max(MIN_PAIRS))
    } else {
        PairResize::Keep
    }
}

/// Bits of the sort key in use: the tile id above 32 bits of depth.
fn key_bits(tiles: UVec2) -> u32 {
    let count = (tiles.x * tiles.y).max(2);
    32 + (u32::BITS - (count - 1).leading_zeros())
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
    let limits = device.limits();
    let max_binding = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    // One binding holds every projected splat of a view, and every sort key.
    let max_splats = u32::try_from(max_binding / PROJECTED_SPLAT_BYTES).unwrap_or(u32::MAX);
    let max_pairs = u32::try_from(max_binding / SORT_KEY_BYTES).unwrap_or(u32::MAX);
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
        if splats > u64::from(max_splats) {
            warn!(
                "a camera sees {splats} splats but one storage binding holds {max_splats}; \
                 skipping its splats this frame"
            );
            continue;
        }
        let splats = splats as u32;
        let (instances, dispatches) = plan_dispatches(&drawn, &camera);
        let chunks = dispatches.len() as u32;
        let state = previous.remove(&entity);
        let mut pairs = state.as_ref().map_or_else(
            || {
                splats
                    .saturating_mul(INITIAL_PAIRS_PER_SPLAT)
                    .max(MIN_PAIRS)
                    .min(max_pairs)
            },
            |state| state.buffers.capacity.pairs,
        );
        let mut resize = PairResize::Keep;
        if let Some(counts) = state.as_ref().and_then(|s| s.buffers.readback.poll(device)) {
            stats.update(main_entity.id(), |s| {
                s.visible_splats = counts.visible_splats;
                s.tile_pairs = counts.pairs_needed;
                s.tile_pairs_kept = counts.pairs_kept;
                s.gpu_reports += 1;
            });
            resize = resize_pairs(pairs, counts.pairs_needed, max_pairs);
            match resize {
                PairResize::Grow(to) if counts.pairs_needed > max_pairs => {
                    warn!(
                        "a frame needs {} tile pairs but one storage binding holds {max_pairs}; \
                         splats are missing from that camera's image",
                        counts.pairs_needed
                    );
                    pairs = to;
                }
                PairResize::Grow(to) => {
                    warn!(
                        "a frame needed {} tile pairs but the buffers held {pairs}: that frame \
                         was incomplete; growing them",
                        counts.pairs_needed
                    );
                    pairs = to;
                }
                PairResize::Shrink(to) => pairs = to,
                PairResize::Keep => {}
            }
        }
        let need = ViewCapacity {
            splats,
            pairs,
            chunks,
            instances: instances.len() as u32,
            viewport: size,
        };
        let mut state = match state {
            Some(state)
                if state.buffers.capacity.holds(&need)
                    && !matches!(resize, PairResize::Shrink(_)) =>
            {
                state
            }
            previous => {
                let capacity = match previous {
                    // Grow with headroom so a cloud appearing doesn't rebuild every frame.
                    Some(old) if old.buffers.capacity.viewport == size => ViewCapacity {
                        splats: need.splats.max(old.buffers.capacity.splats),
                        pairs: need.pairs,
                        chunks: need.chunks.max(old.buffers.capacity.chunks),
                        instances: need.instances.max(old.buffers.capacity.instances),
                        viewport: size,
                    },
                    _ => need,
                };
                debug!("splat view buffers for {capacity:?}");
                SplatView {
                    buffers: ViewBuffers::new(device, &pipelines, &memory, capacity),
                    frame: None,
                }
            }
        };
        let buffers = &state.buffers;
        let capacity = buffers.capacity;

        queue.write_buffer(
            &buffers.view_uniform,
            0,
            bytemuck::bytes_of(&camera.uniform(origin, size, capacity.pairs)),
        );
        queue.write_buffer(
            &buffers.pair_capacity,
            0,
            bytemuck::bytes_of(&[capacity.pairs, 0, 0, 0]),
        );

        queue.write_buffer(&buffers.instances, 0, bytemuck::cast_slice(&instances));
        let mut preprocess = Vec::new();
        for (slot, dispatch) in dispatches.iter().enumerate() {
            let offset = slot as u64 * CHUNK_PARAMS_STRIDE;
            let threads = dispatch.chunk.count * dispatch.instance_count;
            let params = ChunkParams {
                splat_count: dispatch.chunk.count,
                sh_degree: dispatch.splats.sh_degree,
                sh_stride: dispatch.splats.sh_stride,
                grid_width: PreprocessPass::grid_width(threads),
                first_instance: dispatch.first_instance,
                instance_count: dispatch.instance_count,
                sh_words: dispatch.splats.sh_words,
                sh_half: u32::from(dispatch.splats.sh_half),
            };
            queue.write_buffer(&buffers.chunk_params, offset, bytemuck::bytes_of(&params));
            let bind_group = pipelines.preprocess.bind_group(
                device,
                &buffers.view_uniform,
                &buffers.chunk_params,
                &dispatch.chunk.geometry,
                &dispatch.chunk.sh,
                &buffers.projected,
                &buffers.tile_counts,
                &buffers.counters,
                &buffers.instances,
            );
            preprocess.push((bind_group, offset as u32, threads));
        }

        let linearize = match composite.copied().unwrap_or_default() {
            SplatComposite::Passthrough => false,
            // A main texture that stores sRGB-encoded values takes them as they are.
            SplatComposite::Linearize => target.compositing_space != Some(CompositingSpace::Srgb),
        };
        queue.write_buffer(
            &buffers.composite_params,
            0,
            bytemuck::bytes_of(&CompositeUniform {
                viewport_origin: origin.to_array(),
                linearize: u32::from(linearize),
                _pad: 0,
            }),
        );

        let multisampled_depth = msaa.samples() > 1;
        let sort = &buffers.sort;
        let tile_range = [0, 1].map(|i| {
            pipelines.tile_range.bind_group(
                device,
                &sort.keys[i],
                &buffers.counters,
                &buffers.ranges,
            )
        });
        let tile_render = [0, 1].map(|i| {
            pipelines.tile_render.bind_group(
                device,
                &buffers.view_uniform,
                &buffers.projected,
                &buffers.ranges,
                &sort.values[i],
                depth.view(),
                multisampled_depth,
                &buffers.splat_layer,
            )
        });
        let frame = SplatFrame {
            preprocess,
            indirect: pipelines.indirect.bind_group(
                device,
                &buffers.counters,
                &buffers.pair_capacity,
            ),
            duplicate: pipelines.duplicate.bind_group(
                device,
                &buffers.view_uniform,
                &buffers.projected,
                &buffers.tile_counts,
                &buffers.counters,
                &sort.keys[0],
                &sort.values[0],
            ),
            key_bits: key_bits(capacity.tiles()),
            tile_range,
            tile_render,
            multisampled_depth,
            tiles: capacity.tiles(),
            viewport_origin: origin,
            viewport_size: size,
            composite_pipeline: pipelines.composite.pipeline(
                device,
                target.main_texture_format(),
                msaa.samples(),
            ),
            composite: pipelines.composite.bind_group(
                device,
                &buffers.splat_layer,
                &buffers.composite_params,
            ),
        };
        state.frame = Some(frame);
        stats.update(main_entity.id(), |s| s.frames += 1);
        splat_views.views.insert(entity, state);
        live.push(main_entity.id());
    }

    stats.retain(|camera| live.contains(camera));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_buffers_grow_shrink_or_stay() {
        let max = 1 << 28;
        assert_eq!(
            resize_pairs(100_000, 120_000, max),
            PairResize::Grow(150_000)
        );
        assert_eq!(
            resize_pairs(100_000, 120_000, 110_000),
            PairResize::Grow(110_000)
        );
        assert_eq!(
            resize_pairs(1_000_000, 400_000, max),
            PairResize::Shrink(500_000)
        );
        assert_eq!(resize_pairs(1_000_000, 600_000, max), PairResize::Keep);
        assert_eq!(resize_pairs(1_000_000, 1_000_000, max), PairResize::Keep);
        // Never below the floor.
        assert_eq!(
            resize_pairs(MIN_PAIRS * 4, 10, max),
            PairResize::Shrink(MIN_PAIRS)
        );
        assert_eq!(resize_pairs(MIN_PAIRS, 10, max), PairResize::Keep);
    }

    #[test]
    fn key_bits_cover_every_tile_above_the_depth() {
        assert_eq!(key_bits(UVec2::new(1, 1)), 33);
        assert_eq!(key_bits(UVec2::new(40, 30)), 32 + 11);
        assert_eq!(key_bits(UVec2::new(120, 68)), 32 + 13);
        assert_eq!(key_bits(UVec2::new(128, 64)), 32 + 13);
    }
}
