//! The counters of a view's bands, read back a frame or two late without stalling.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use wgpu::{Buffer, BufferUsages, Device};

use crate::render::memory::{GpuBytes, SplatMemory};
use crate::render::passes::common::buffer;

/// Bytes of each band's counters that are read back (see `indirect.wgsl`).
const COUNTS_BYTES: u64 = 16;

/// What the GPU counted for one band in one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuCounts {
    pub visible_splats: u32,
    pub pairs_needed: u32,
    pub pairs_kept: u32,
    pub visible_kept: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadbackState {
    /// Free: the next frame may copy its counters in.
    Idle,
    /// A frame copied its counters; map once that frame has been submitted.
    Copied,
    /// Mapping requested, waiting for the GPU.
    Mapping,
    /// Mapped: the counts can be read.
    Ready,
}

/// A small staging buffer cycling through copy → map → read, so the CPU learns each
/// band's needs (to size its buffers) without stalling the frame. All bands of a frame
/// are copied together, so their counts always come from the same frame.
pub struct CounterReadback {
    staging: Buffer,
    bands: usize,
    state: Arc<Mutex<ReadbackState>>,
    _bytes: GpuBytes,
}

impl CounterReadback {
    pub fn new(device: &Device, memory: &SplatMemory, bands: usize) -> Self {
        let staging = buffer(
            device,
            "splat counters readback",
            COUNTS_BYTES * bands as u64,
            BufferUsages::MAP_READ | BufferUsages::COPY_DST,
        );
        Self {
            _bytes: memory.track(staging.size()),
            staging,
            bands,
            state: Arc::new(Mutex::new(ReadbackState::Idle)),
        }
    }

    /// How many bands' counters it reads.
    pub fn bands(&self) -> usize {
        self.bands
    }

    fn state(&self) -> MutexGuard<'_, ReadbackState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Called while encoding a frame: copies every band's counters (in band order) if
    /// the staging buffer is free.
    pub fn copy<'a>(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        counters: impl IntoIterator<Item = &'a Buffer>,
    ) {
        let mut state = self.state();
        if *state == ReadbackState::Idle {
            for (band, counters) in counters.into_iter().enumerate().take(self.bands) {
                let at = band as u64 * COUNTS_BYTES;
                encoder.copy_buffer_to_buffer(counters, 0, &self.staging, at, COUNTS_BYTES);
            }
            *state = ReadbackState::Copied;
        }
    }

    /// Called before encoding a frame: maps a copied buffer, reads a mapped one.
    /// Never waits: when the GPU has already finished the copying frame, its counts
    /// come back one frame late, else on a later call.
    pub fn poll(&self, device: &Device) -> Option<Vec<GpuCounts>> {
        if *self.state() == ReadbackState::Copied {
            *self.state() = ReadbackState::Mapping;
            let shared = self.state.clone();
            self.staging
                .slice(..)
                .map_async(wgpu::MapMode::Read, move |result| {
                    let mut state = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    // A failed map (device lost) just frees the buffer for another try.
                    *state = if result.is_ok() {
                        ReadbackState::Ready
                    } else {
                        ReadbackState::Idle
                    };
                });
            // Runs the callback now if the GPU is already done; does not block.
            let _ = device.poll(wgpu::PollType::Poll);
        }
        let mut state = self.state();
        if *state != ReadbackState::Ready {
            return None;
        }
        let counts = {
            let data = self.staging.slice(..).get_mapped_range();
            let words: &[u32] = bytemuck::cast_slice(&data);
            words
                .chunks_exact(4)
                .take(self.bands)
                .map(|w| GpuCounts {
                    visible_splats: w[0],
                    pairs_needed: w[1],
                    pairs_kept: w[2],
                    visible_kept: w[3],
                })
                .collect()
        };
        self.staging.unmap();
        *state = ReadbackState::Idle;
        Some(counts)
    }
}
