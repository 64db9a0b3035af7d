//! The main world's side of streaming: a page table per streamed asset, fed by the
//! cameras each frame, fetching chunks on worker tasks and keeping the pages the
//! render world uploads ([`SplatStreams`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bevy::asset::{AssetId, AssetServer, Assets};
use bevy::camera::{Camera, Projection};
use bevy::ecs::prelude::*;
use bevy::log::warn;
use bevy::math::Vec3;
use bevy::tasks::{AsyncComputeTaskPool, Task, block_on, futures_lite::future};
use bevy::transform::components::GlobalTransform;

use super::read::fetch_chunk;
use super::settings::{SplatStreaming, SplatStreamingStats};
use super::table::{ChunkNodes, StreamCamera, StreamTable};
use crate::asset::formats::rad::RadChunk;
use crate::asset::{GaussianSplats, SplatGeometry, SplatStorage, SplatStreamSource};
use crate::cloud::GaussianCloud;
use crate::lod::SplatLod;
use crate::render::gpu_cloud::chunk_bytes;
use crate::render::passes::preprocess::LOD_PAGE_RECORD_BYTES;
use crate::render::view::stats::SplatStats;

/// A resident chunk, as the render world uploads it.
#[derive(Clone, Debug)]
pub struct StreamedPage {
    /// The chunk's index in its file.
    pub chunk: usize,
    /// The file's index of its first node.
    pub base: u32,
    /// Its nodes as splats; `None` for the first chunk, whose nodes are the asset's
    /// own splats (uploaded with it).
    pub splats: Option<Arc<GaussianSplats>>,
    /// Its nodes' records for the cut (`table.rs`): three vec4 per node.
    pub records: Arc<Vec<[f32; 4]>>,
    /// Changes whenever `records` does.
    pub version: u64,
}

type Fetch = Task<Result<(RadChunk, u64), String>>;

struct Stream {
    source: Arc<SplatStreamSource>,
    table: StreamTable,
    pages: BTreeMap<usize, StreamedPage>,
    fetches: Vec<(usize, Fetch)>,
    storage: SplatStorage,
    sh_stride: usize,
}

impl Stream {
    fn chunk_bytes(&self, chunk: usize) -> u64 {
        let nodes = self.table.chunk_len(chunk) as usize;
        let (geometry, sh) = chunk_bytes(nodes, self.sh_stride, self.storage);
        (geometry + sh) as u64 + nodes as u64 * LOD_PAGE_RECORD_BYTES
    }

    fn resident_bytes(&self) -> u64 {
        self.table
            .resident()
            .map(|chunk| self.chunk_bytes(chunk))
            .sum()
    }

    /// Bytes its resident chunks take and its chunks in flight will: what the budget
    /// counts.
    fn held_bytes(&self) -> u64 {
        self.resident_bytes()
            + self
                .fetches
                .iter()
                .map(|&(chunk, _)| self.chunk_bytes(chunk))
                .sum::<u64>()
    }
}

/// Every streamed asset's page table and resident pages.
#[derive(Resource, Default)]
pub struct SplatStreams {
    streams: HashMap<AssetId<GaussianSplats>, Stream>,
    generation: u64,
    bytes_read: u64,
    evicted: u64,
}

impl SplatStreams {
    /// Changes whenever any page or its records change.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Each streamed asset's resident pages.
    pub fn pages(
        &self,
    ) -> impl Iterator<Item = (AssetId<GaussianSplats>, impl Iterator<Item = &StreamedPage>)> {
        self.streams
            .iter()
            .map(|(id, stream)| (*id, stream.pages.values()))
    }

    /// Whether `asset` is streamed.
    pub fn contains(&self, asset: AssetId<GaussianSplats>) -> bool {
        self.streams.contains_key(&asset)
    }
}

/// A chunk's nodes as the page table needs them: centres, largest scales, children.
fn chunk_nodes(base: u32, geometry: &[SplatGeometry], children: Vec<[u32; 2]>) -> ChunkNodes {
    ChunkNodes {
        base,
        shapes: geometry
            .iter()
            .map(|splat| {
                let largest = splat.log_scale.into_iter().fold(f32::MIN, f32::max);
                (splat.position, largest.exp())
            })
            .collect(),
        children,
    }
}

/// The focal length of `camera` in pixels (the cut's sizes are radii over
/// distances): from the vertical field of view, or the viewport for other
/// projections.
fn focal_pixels(camera: &Camera, projection: &Projection) -> Option<f32> {
    let height = camera.physical_viewport_size()?.y as f32;
    match projection {
        Projection::Perspective(p) => Some(height / (2.0 * (p.fov * 0.5).tan())),
        _ => Some(height * 0.5),
    }
}

/// Starts a stream for each streamed asset a cloud shows, takes in the chunks that
/// arrived, plans fetches and evictions from every active camera, and keeps the
/// pages' records current.
pub fn update_streams(
    mut streams: ResMut<SplatStreams>,
    settings: Res<SplatStreaming>,
    mut stats: ResMut<SplatStreamingStats>,
    assets: Res<Assets<GaussianSplats>>,
    server: Res<AssetServer>,
    clouds: Query<(&GaussianCloud, &GlobalTransform)>,
    cameras: Query<(
        &Camera,
        &GlobalTransform,
        &Projection,
        Option<&SplatLod>,
        Entity,
    )>,
    splat_stats: Res<SplatStats>,
) {
    let streams = &mut *streams;
    let mut changed = false;

    // New streams; streams whose asset is gone end (their fetches are dropped).
    for (cloud, _) in &clouds {
        let id = cloud.0.id();
        if streams.streams.contains_key(&id) {
            continue;
        }
        let Some(splats) = assets.get(id) else {
            continue;
        };
        let Some(source) = splats.stream() else {
            continue;
        };
        let mut table = StreamTable::new(source.index.nodes(), source.index.chunk_size());
        let head = chunk_nodes(0, splats.geometry(), source.head_children.clone());
        if !table.insert(0, head) {
            warn!("{}: its first chunk does not match its header", source.path);
            continue;
        }
        streams.streams.insert(
            id,
            Stream {
                source: source.clone(),
                table,
                pages: BTreeMap::new(),
                fetches: Vec::new(),
                storage: splats.storage(),
                sh_stride: splats.sh_stride(),
            },
        );
        changed = true;
    }
    let before = streams.streams.len();
    streams.streams.retain(|id, _| {
        assets
            .get(*id)
            .is_some_and(|splats| splats.stream().is_some())
    });
    changed |= streams.streams.len() != before;

    // Chunks that arrived.
    for stream in streams.streams.values_mut() {
        stream.table.set_fade_frames(settings.fade_frames);
        let mut finished = Vec::new();
        stream
            .fetches
            .retain_mut(|(chunk, task)| match block_on(future::poll_once(task)) {
                Some(result) => {
                    finished.push((*chunk, result));
                    false
                }
                None => true,
            });
        for (chunk, result) in finished {
            match result {
                Ok((decoded, bytes)) => {
                    streams.bytes_read += bytes;
                    let nodes =
                        chunk_nodes(decoded.base, &decoded.nodes.geometry, decoded.children);
                    if stream.table.insert(chunk, nodes) {
                        let splats =
                            GaussianSplats::from(decoded.nodes).with_storage(stream.storage);
                        stream.pages.insert(
                            chunk,
                            StreamedPage {
                                chunk,
                                base: decoded.base,
                                splats: Some(Arc::new(splats)),
                                records: Arc::default(),
                                version: 0,
                            },
                        );
                    } else {
                        warn!(
                            "{}: chunk {chunk} does not hold the nodes its header places there",
                            stream.source.path
                        );
                    }
                }
                Err(message) => {
                    warn!(
                        "{}: chunk {chunk} not streamed: {message}",
                        stream.source.path
                    );
                    stream.table.set_failed(chunk);
                }
            }
        }
    }

    // Where each stream's clouds are seen from, and the smallest node size each
    // camera splits: a node under `min_pixels`, or (with `SplatLod`) below where the
    // camera's cut starts to blend in children, needs no children fetched.
    let pixels = settings.min_pixels.max(0.0);
    let views: Vec<(Vec3, f32)> = cameras
        .iter()
        .filter(|(camera, ..)| camera.is_active)
        .filter_map(|(camera, transform, projection, lod, entity)| {
            let focal = focal_pixels(camera, projection)?;
            let cut = lod
                .zip(splat_stats.get(entity).and_then(|s| s.lod))
                .map_or(0.0, |(lod, stats)| {
                    stats.threshold * (-lod.half_octaves()).exp2()
                });
            let smallest = (pixels / focal).max(cut);
            Some((transform.translation(), smallest))
        })
        .collect();
    let mut in_flight: usize = streams.streams.values().map(|s| s.fetches.len()).sum();
    // Every stream's resident and in-flight bytes, kept current as each plans.
    let mut total_held: u64 = streams.streams.values().map(Stream::held_bytes).sum();
    for (id, stream) in streams.streams.iter_mut() {
        let mut seen_from = Vec::new();
        for (cloud, transform) in &clouds {
            if cloud.0.id() != *id {
                continue;
            }
            let cloud_from_world = transform.to_matrix().inverse();
            if !cloud_from_world.is_finite() {
                continue;
            }
            for &(position, smallest) in &views {
                seen_from.push(StreamCamera {
                    position: cloud_from_world.transform_point3(position),
                    pixels_per_size: 1.0 / smallest.max(f32::MIN_POSITIVE),
                });
            }
        }
        // This stream may use what the others leave of the budget.
        let others = total_held - stream.held_bytes();
        let budget = settings.gpu_bytes.saturating_sub(others);
        let slots = settings.max_in_flight.saturating_sub(in_flight) + stream.fetches.len();
        let plan = {
            let stream_ref = &*stream;
            let sizes: Vec<u64> = (0..stream_ref.table.chunks())
                .map(|chunk| stream_ref.chunk_bytes(chunk))
                .collect();
            stream
                .table
                .plan(&seen_from, slots, budget, |chunk| sizes[chunk])
        };
        for chunk in &plan.evicted {
            stream.pages.remove(chunk);
            streams.evicted += 1;
            changed = true;
        }
        for chunk in plan.fetch {
            let task = AsyncComputeTaskPool::get().spawn(fetch_chunk(
                server.clone(),
                stream.source.clone(),
                chunk,
            ));
            stream.fetches.push((chunk, task));
            in_flight += 1;
        }
        total_held = others + stream.held_bytes();
    }

    // Records of the pages whose nodes changed, fades moved on a frame first.
    for stream in streams.streams.values_mut() {
        stream.table.advance_fades();
        for chunk in stream.table.resident().collect::<Vec<_>>() {
            let version = stream.table.records_version(chunk);
            let page = stream.pages.entry(chunk).or_insert_with(|| StreamedPage {
                chunk,
                base: chunk as u32 * stream.source.index.chunk_size(),
                splats: None,
                records: Arc::default(),
                version: 0,
            });
            if page.version != version {
                page.records = Arc::new(stream.table.records(chunk).unwrap_or_default());
                page.version = version;
                changed = true;
            }
        }
    }
    if changed {
        streams.generation += 1;
    }

    *stats = SplatStreamingStats {
        streams: streams.streams.len(),
        total_nodes: streams
            .streams
            .values()
            .map(|s| u64::from(s.table.nodes()))
            .sum(),
        resident_nodes: streams
            .streams
            .values()
            .map(|s| s.table.resident_nodes())
            .sum(),
        total_chunks: streams.streams.values().map(|s| s.table.chunks()).sum(),
        resident_chunks: streams
            .streams
            .values()
            .map(|s| s.table.resident().count())
            .sum(),
        in_flight: streams.streams.values().map(|s| s.fetches.len()).sum(),
        failed_chunks: streams.streams.values().map(|s| s.table.failed()).sum(),
        gpu_bytes: streams.streams.values().map(Stream::resident_bytes).sum(),
        bytes_read: streams.bytes_read,
        evicted_chunks: streams.evicted,
    };
}
