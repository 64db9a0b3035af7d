//! Accounting of the GPU memory the plugin holds, so apps and tests can watch it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy::ecs::prelude::*;
use bevy::reflect::prelude::*;

/// Bytes of GPU buffers and textures the splat renderer holds right now: cloud data
/// and every view's working buffers. Shared between the main and render worlds.
///
/// Reflected as an opaque value (its `Debug` shows the count): a reflected field would
/// have to be the counter itself, and a copy made through reflection must stay shared
/// with the renderer's, as a `Clone` is.
#[derive(Resource, Clone, Default, Debug, Reflect)]
#[reflect(opaque)]
#[reflect(Resource, Default, Debug, Clone)]
pub struct SplatMemory(Arc<AtomicU64>);

impl SplatMemory {
    /// Bytes currently held.
    pub fn bytes(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Counts `bytes` until the returned guard is dropped.
    pub(crate) fn track(&self, bytes: u64) -> GpuBytes {
        self.0.fetch_add(bytes, Ordering::Relaxed);
        GpuBytes {
            total: self.0.clone(),
            bytes,
        }
    }
}

/// Bytes of one allocation, released from the total when dropped with it.
#[derive(Debug)]
pub(crate) struct GpuBytes {
    total: Arc<AtomicU64>,
    bytes: u64,
}

impl Drop for GpuBytes {
    fn drop(&mut self) {
        self.total.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}
