//! Per-camera counts from the GPU, shared with the main world for HUDs and benchmarks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use bevy::ecs::entity::Entity;
use bevy::ecs::resource::Resource;

/// What the GPU reported for one camera's most recent read-back frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SplatViewStats {
    /// Splats that survived culling.
    pub visible_splats: u32,
    /// (splat, tile) pairs the frame needed.
    pub tile_pairs: u32,
    /// Pairs the buffers held: less than `tile_pairs` means that frame was incomplete
    /// (the buffers grow for the next one).
    pub tile_pairs_kept: u32,
    /// Frames rendered for this camera so far.
    pub frames: u64,
    /// How many frames' counts have come back from the GPU so far.
    pub gpu_reports: u64,
}

/// Splat statistics per camera entity (main world), updated a frame or two late.
#[derive(Resource, Clone, Default, Debug)]
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
