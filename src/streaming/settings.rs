//! `SplatStreaming`, what streams may hold, and `SplatStreamingStats`, where they stand.

use bevy::ecs::prelude::*;
use bevy::reflect::prelude::*;

/// The GPU memory streamed clouds may hold, and how eagerly they fetch.
#[derive(Resource, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Resource, Default, Debug, Clone, PartialEq)]
pub struct SplatStreaming {
    /// Bytes of GPU memory all streamed clouds' resident chunks may take together
    /// (splats in their storage layout and the cut's records). Each cloud's first
    /// chunk stays resident even when it alone passes this.
    pub gpu_bytes: u64,
    /// Chunks fetched at once, across all clouds.
    pub max_in_flight: usize,
    /// Nodes smaller than this on screen (radius in pixels) are not split: their
    /// children are not fetched.
    pub min_pixels: f32,
    /// Frames a chunk's detail takes to fade in where it arrives (its nodes in, their
    /// parents out, coverage kept); 0 shows it at once.
    pub fade_frames: u32,
}

impl Default for SplatStreaming {
    fn default() -> Self {
        Self {
            gpu_bytes: 1 << 30,
            max_in_flight: 4,
            min_pixels: 1.0,
            fade_frames: 8,
        }
    }
}

/// Where streaming stands, summed over every streamed asset; for HUDs and tests.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Resource, Default, Debug, Clone, PartialEq)]
pub struct SplatStreamingStats {
    /// Streamed assets.
    pub streams: usize,
    /// Nodes of their trees, leaves and interior.
    pub total_nodes: u64,
    /// Nodes in resident chunks.
    pub resident_nodes: u64,
    /// Chunks of their files.
    pub total_chunks: usize,
    /// Chunks resident.
    pub resident_chunks: usize,
    /// Chunks being fetched.
    pub in_flight: usize,
    /// Chunks whose fetch or decode failed (not asked for again).
    pub failed_chunks: usize,
    /// GPU bytes the resident chunks take.
    pub gpu_bytes: u64,
    /// Bytes read from files since the start.
    pub bytes_read: u64,
    /// Chunks evicted since the start.
    pub evicted_chunks: u64,
}

impl SplatStreamingStats {
    /// Whether nothing is being fetched and nothing more is wanted: every stream
    /// holds what its cameras need, or all that fits.
    pub fn settled(&self) -> bool {
        self.streams > 0 && self.in_flight == 0
    }
}
