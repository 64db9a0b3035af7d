//! Per-camera counts from the GPU, shared with the main world for HUDs and benchmarks.

use bevy::ecs::reflect::ReflectResource;
use bevy::reflect::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use bevy::ecs::entity::Entity;
use bevy::ecs::resource::Resource;

use super::readback::GpuCounts;

/// What the GPU reported for one camera's most recent read-back frame.
///
/// A camera that sees more splats than one storage binding holds draws its image in
/// several bands of tile rows; counts are summed over them, so a splat that spans two
/// bands counts twice.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SplatViewStats {
    /// Splats that survived culling.
    pub visible_splats: u32,
    /// Visible splats the buffers held: fewer than `visible_splats` means that frame
    /// was incomplete (the view is split into more bands for the next one).
    pub visible_splats_kept: u32,
    /// (splat, bin) pairs the frame needed, what the tile sort sorts: one per bin of
    /// 2×2 tiles ([`BIN_SIZE`](crate::render::BIN_SIZE) pixels on a side) a splat
    /// reaches.
    pub tile_pairs: u32,
    /// Pairs the buffers held: less than `tile_pairs` means that frame was incomplete
    /// (the buffers grow for the next one).
    pub tile_pairs_kept: u32,
    /// Tiles ([`TILE_SIZE`](crate::render::TILE_SIZE) pixels on a side) some splat
    /// reaches, summed over bands: the tile render, the composite and the depth write
    /// run over these alone, so their cost follows what the splats cover.
    pub tiles_drawn: u32,
    /// Runs of drawn tiles along a tile row, summed over bands: the composite and the
    /// depth write draw one quad over each.
    pub tile_runs: u32,
    /// Chunks of long tile lists filed, each drawn by its own workgroup: shadow views
    /// only, those that hold their work in few tiles (may pass the room for chunks,
    /// beyond which tiles are drawn whole).
    pub tile_chunks: u32,
    /// Bands of bin rows the frame was drawn in.
    pub bands: u32,
    /// Frames rendered for this camera so far.
    pub frames: u64,
    /// How many frames' counts have come back from the GPU so far.
    pub gpu_reports: u64,
    /// GPU time of each stage of the latest timed frame in nanoseconds, in the order
    /// of [`PASS_NAMES`](crate::render::PASS_NAMES), for a camera with
    /// [`SplatPassTimes`](crate::render::SplatPassTimes); `None` without it or where
    /// the device has no timestamp queries. Measured at the ends of each stage's pass,
    /// so it works on WebGPU too.
    pub gpu_pass_ns: Option<[u64; STAGE_COUNT]>,
    /// CPU time this camera's latest frame spent in the plugin's prepare (sizing the
    /// buffers, writing uniforms, building bind groups), in nanoseconds.
    pub cpu_prepare_ns: u64,
    /// CPU time of recording its passes into the command encoder, in nanoseconds.
    pub cpu_record_ns: u64,
    /// For a camera with [`SplatLod`](crate::SplatLod): the cut it drew this frame.
    pub lod: Option<SplatLodStats>,
    /// The latest frame composited its layer in a compute pass: a single-sampled main
    /// texture that takes storage writes (`CameraMainTextureUsages` with
    /// `STORAGE_BINDING`) in `Rgba8Unorm`, `Rgba16Float` or `Rgba32Float`. Otherwise a
    /// fragment pass over the drawn tiles blends it.
    pub compute_composite: bool,
}

/// A camera's level-of-detail cut: `visible_splats` is what it drew.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SplatLodStats {
    /// The node size (radians of its bounding sphere as seen from its nearest point)
    /// below which nodes stop splitting; 0 when the budget covers every splat in view
    /// (the leaves alone, the exact image).
    pub threshold: f32,
    /// Trained splats (leaves) in view in the latest frame the GPU reported: what the
    /// camera would draw without a budget. Counted over the nodes the cut weighs: the
    /// leaves of blocks whose parents all lie below the pixel floor are not.
    pub leaves_in_view: u32,
    /// Tree nodes the preprocess weighs this frame, over every cloud drawn as a cut:
    /// blocks of nodes no threshold above the camera's pixel floor can draw are left
    /// out (`SplatLod::pixel_scale`), so far clouds cost less than their node count.
    pub nodes_weighed: u64,
}

/// How many stages [`SplatViewStats::gpu_pass_ns`] times.
pub const STAGE_COUNT: usize = crate::render::stage::SplatStage::COUNT;

impl SplatViewStats {
    /// Whether the reported frame drew every visible splat on every tile it touches.
    pub fn complete(&self) -> bool {
        self.visible_splats_kept == self.visible_splats && self.tile_pairs_kept == self.tile_pairs
    }

    /// The whole frame's splat GPU time in nanoseconds (the sum of the stages).
    pub fn gpu_total_ns(&self) -> Option<u64> {
        self.gpu_pass_ns.map(|stages| stages.iter().sum())
    }

    /// Takes in one frame's stage times.
    pub(crate) fn record_times(&mut self, stages: &[u64]) {
        let mut times = [0; STAGE_COUNT];
        for (slot, time) in times.iter_mut().zip(stages) {
            *slot = *time;
        }
        self.gpu_pass_ns = Some(times);
    }

    /// Takes in one frame's counts, one per band.
    pub(crate) fn record(&mut self, bands: &[GpuCounts]) {
        let sum = |count: fn(&GpuCounts) -> u32| {
            bands
                .iter()
                .fold(0u32, |sum, band| sum.saturating_add(count(band)))
        };
        self.visible_splats = sum(|c| c.visible_splats);
        self.visible_splats_kept = sum(|c| c.visible_kept);
        self.tile_pairs = sum(|c| c.pairs_needed);
        self.tile_pairs_kept = sum(|c| c.pairs_kept);
        self.tiles_drawn = sum(|c| c.tiles_drawn);
        self.tile_runs = sum(|c| c.tile_runs);
        self.tile_chunks = sum(|c| c.tile_chunks);
        self.bands = bands.len() as u32;
        self.gpu_reports += 1;
    }
}

/// Splat statistics per camera entity (main world), updated a frame or two late.
/// Reflected as an opaque value: a copy made through reflection shares the stats.
#[derive(Resource, Clone, Default, Debug, Reflect)]
#[reflect(opaque)]
#[reflect(Resource, Default, Debug, Clone)]
pub struct SplatStats(Arc<Mutex<HashMap<Entity, SplatViewStats>>>);

impl SplatStats {
    /// The latest statistics of `camera`, if it has drawn splats.
    pub fn get(&self, camera: Entity) -> Option<SplatViewStats> {
        self.lock().get(&camera).copied()
    }

    pub(crate) fn update(&self, camera: Entity, apply: impl FnOnce(&mut SplatViewStats)) {
        apply(self.lock().entry(camera).or_default());
    }

    pub(crate) fn retain(&self, keep: impl Fn(&Entity) -> bool) {
        self.lock().retain(|camera, _| keep(camera));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Entity, SplatViewStats>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
