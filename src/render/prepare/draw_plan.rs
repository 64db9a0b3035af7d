//! What each view draws this frame: its clouds as instances, grouped into preprocess
//! dispatches, and the camera they are seen from ([`ViewDraw`], a component on the
//! view).

use bevy::asset::AssetId;
use bevy::ecs::prelude::*;
use bevy::log::warn_once;
use bevy::math::{Mat4, UVec2};

use crate::asset::GaussianSplats;
use crate::cloud::SplatRasterMode;
use crate::crop::{SplatCrop, SplatCropMode, SplatCropShape};
use crate::lighting::SplatLighting;
use crate::render::extract::ExtractedCloud;
use crate::render::gpu_cloud::GpuSplats;
use crate::render::lod_reach::{ParentBound, ReachCut};
use crate::render::lod_trees::GpuLodTrees;
use crate::render::passes::preprocess::{
    CROP_BOX, CROP_EMPTY, CROP_SPHERE, CloudInstance, CropGpu, LIGHTING_LIT,
    LIGHTING_RECEIVES_SHADOWS, LIGHTING_SHADOWED, LIGHTING_UNLIT, MAX_CROP_VOLUMES_GPU,
};
use crate::render::view::dispatch::{DispatchPlan, LodNodes};
use crate::render::view::lod::LodFrame;
use crate::render::view::picks::PickTicket;
use crate::render::view::uniform::{LayerCells, SplatCamera};
use crate::shader::SplatShaderId;

/// What a view draws this frame, planned in `RenderSystems::PrepareResources` and bound
/// in `RenderSystems::PrepareBindGroups`; removed from a view that draws no splats.
#[derive(Component)]
pub struct ViewDraw {
    pub camera: SplatCamera,
    pub origin: UVec2,
    pub size: UVec2,
    /// Every cloud the view draws, as the preprocess sees it.
    pub instances: Vec<CloudInstance>,
    /// The preprocess dispatches over them.
    pub dispatches: Vec<DispatchPlan>,
    /// What this frame's picks answer, for a view with pointers over it.
    pub pick: Option<PickTicket>,
    /// The level-of-detail cut, for a camera with `SplatLod`.
    pub lod: Option<LodFrame>,
    /// Its clouds receive light: the preprocess writes `LitPoint`s and the light pass
    /// runs (`render::lighting`).
    pub receive: bool,
    /// The cells of a layer that holds several views (a light's cascades drawn
    /// together, `render::shadows::cells`); `None` for a view of its own.
    pub cells: Option<LayerCells>,
    /// CPU time spent planning and sizing this frame, in nanoseconds.
    pub planned_ns: u64,
}

/// `CloudInstance::lighting` for `cloud`.
fn lighting_bits(cloud: &ExtractedCloud) -> u32 {
    let mode = match cloud.lighting {
        SplatLighting::Unlit => LIGHTING_UNLIT,
        SplatLighting::Shadowed { .. } => LIGHTING_SHADOWED,
        SplatLighting::Lit => LIGHTING_LIT,
    };
    let receives = if cloud.receives_shadows {
        LIGHTING_RECEIVES_SHADOWS
    } else {
        0
    };
    mode | receives
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
        let cut = volume.mode == SplatCropMode::Cut;
        *slot = match volume.unit_from_cloud() {
            Some(unit_from_cloud) => CropGpu {
                unit_from_cloud: unit_from_cloud.to_cols_array_2d(),
                shape: match volume.shape {
                    SplatCropShape::Box { .. } => CROP_BOX,
                    SplatCropShape::Sphere { .. } => CROP_SPHERE,
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
///
/// With `lod_trees` (a camera with `SplatLod`), an asset whose tree is on the GPU is
/// drawn as a cut of it: its leaf chunks and its interior chunks, through the LOD
/// variant (clouds with a `SplatShader` are drawn whole), each over the runs of nodes
/// the view's `cut` can reach (`lod_reach.rs`). With `streams` (a view with a cut to
/// draw them by), a streamed asset is drawn as a cut of its resident pages.
pub fn plan_dispatches(
    drawn: &[(Entity, &ExtractedCloud, &GpuSplats)],
    camera: &SplatCamera,
    time: f32,
    lod: (Option<&GpuLodTrees>, Option<LodFrame>),
    streams: Option<&GpuLodTrees>,
) -> (Vec<CloudInstance>, Vec<Entity>, Vec<DispatchPlan>) {
    let in_one_cell = drawn
        .iter()
        .map(|&(entity, cloud, gpu)| (0, entity, cloud, gpu));
    plan_dispatches_in_cells(in_one_cell, &[*camera], time, lod, streams)
}

/// [`plan_dispatches`] for a layer of several cells (`render::shadows::cells`): each
/// cloud is seen from its cell's camera (`cameras[cell]`, folded into the layer's
/// camera space), and an asset's instances in every cell are still preprocessed in
/// one dispatch per chunk.
pub fn plan_dispatches_in_cells<'a>(
    drawn: impl IntoIterator<Item = (u32, Entity, &'a ExtractedCloud, &'a GpuSplats)>,
    cameras: &[SplatCamera],
    time: f32,
    (lod_trees, cut): (Option<&GpuLodTrees>, Option<LodFrame>),
    streams: Option<&GpuLodTrees>,
) -> (Vec<CloudInstance>, Vec<Entity>, Vec<DispatchPlan>) {
    let Some(camera) = cameras.first() else {
        return Default::default();
    };
    let reach = cut.map(|frame| ReachCut {
        threshold: frame.threshold,
        floor: frame.floor,
        half_octaves: frame.half_octaves,
        orthographic: camera.orthographic,
    });
    type Group<'g> = (
        (AssetId<GaussianSplats>, Option<SplatShaderId>),
        &'g GpuSplats,
        Vec<(CloudInstance, Entity)>,
    );
    let mut by_asset: Vec<Group<'a>> = Vec::new();
    for (cell, entity, cloud, gpu) in drawn {
        let Some(camera) = cameras.get(cell as usize) else {
            continue;
        };
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
            lighting: lighting_bits(cloud),
            lighting_strength: cloud.lighting.strength(),
            tint: cloud.tint.sanitized(),
            crop_count: 0,
            crop_keeps: 0,
            cell,
            _pad_crop: 0,
            crops: [CropGpu::default(); MAX_CROP_VOLUMES_GPU],
            world_from_cloud: world_from_cloud.to_cols_array_2d(),
            shader_params: cloud
                .shader
                .map_or([[0.0; 4]; 2], |shader| shader.params.map(|v| v.to_array())),
        };
        let instance = with_crop(instance, cloud.crop.as_ref());
        let instance = (instance, entity);
        let key = (cloud.asset, cloud.shader.map(|shader| shader.id));
        match by_asset.iter_mut().find(|(k, ..)| *k == key) {
            Some((.., instances)) => instances.push(instance),
            None => by_asset.push((key, gpu, vec![instance])),
        }
    }
    let mut instances = Vec::new();
    let mut clouds = Vec::new();
    let mut dispatches = Vec::new();
    for ((asset, shader), gpu, group) in by_asset {
        let first = instances.len() as u32;
        instances.extend(group.iter().map(|(instance, _)| *instance));
        clouds.extend(group.iter().map(|(_, entity)| *entity));
        let tree = lod_trees
            .filter(|_| shader.is_none())
            .and_then(|trees| trees.get(asset));
        let stream = streams
            .filter(|_| shader.is_none())
            .and_then(|trees| trees.stream(asset));
        // (nodes, which nodes, the chunk's index among those of its kind or page,
        // its blocks' parent bounds for a tree's chunk).
        type Chunk<'c> = (u32, Option<LodNodes>, usize, Option<&'c [ParentBound]>);
        let mut chunks: Vec<Chunk<'_>> = Vec::new();
        if let Some(stream) = stream {
            // A streamed asset is drawn from its resident pages alone.
            for (&page_chunk, page) in &stream.pages {
                for (part, chunk) in page.splats(gpu).chunks.iter().enumerate() {
                    let nodes = Some(LodNodes::Page(page_chunk as u32));
                    chunks.push((chunk.count, nodes, part, None));
                }
            }
        } else if let Some(tree) = tree {
            let leaves = gpu.chunks.iter().zip(&tree.leaf_reach).enumerate();
            chunks.extend(leaves.map(|(index, (chunk, reach))| {
                (chunk.count, Some(LodNodes::Leaves), index, Some(&reach[..]))
            }));
            let interior = tree.interior.chunks.iter().zip(&tree.interior_reach);
            chunks.extend(interior.enumerate().map(|(index, (chunk, reach))| {
                (
                    chunk.count,
                    Some(LodNodes::Interior),
                    index,
                    Some(&reach[..]),
                )
            }));
        } else {
            let leaves = gpu.chunks.iter().enumerate();
            chunks.extend(leaves.map(|(index, chunk)| (chunk.count, None, index, None)));
        }
        let group_instances: Vec<_> = group.iter().map(|(instance, _)| *instance).collect();
        // The instances of each cell (consecutive: `drawn` lists the cells in order).
        // A cut's runs are the nodes some instance reaches: found for each cell apart,
        // a far cascade's instances skip the runs only the near cascade's fine cut
        // reaches.
        let mut cells: Vec<std::ops::Range<usize>> = Vec::new();
        for (index, instance) in group_instances.iter().enumerate() {
            match cells.last_mut() {
                Some(cell) if group_instances[cell.start].cell == instance.cell => {
                    cell.end = index + 1;
                }
                _ => cells.push(index..index + 1),
            }
        }
        for (count, lod, chunk_index, bounds) in chunks {
            let spans: Vec<(std::ops::Range<u32>, std::ops::Range<usize>)> = match (reach, bounds) {
                (Some(reach), Some(bounds)) => cells
                    .iter()
                    .flat_map(|cell| {
                        let runs = reach.runs(bounds, count, &group_instances[cell.clone()]);
                        runs.into_iter().map(move |run| (run, cell.clone()))
                    })
                    .collect(),
                _ => vec![(0..count, 0..group.len())],
            };
            for (run, cell) in spans {
                // Keep splats × instances within a u32 thread index.
                let per_dispatch = (u32::MAX / run.len().max(1) as u32).max(1);
                let mut start = cell.start as u32;
                while start < cell.end as u32 {
                    let instance_count = per_dispatch.min(cell.end as u32 - start);
                    dispatches.push(DispatchPlan {
                        asset,
                        chunk: chunk_index,
                        first_instance: first + start,
                        instance_count,
                        shader,
                        lod,
                        run: (run.start, run.end),
                    });
                    start += instance_count;
                }
            }
        }
    }
    (instances, clouds, dispatches)
}
