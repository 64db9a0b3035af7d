//! What the GPU wrote, read back a frame or two late without stalling: the counters of
//! a view's bands, and (through the same [`Staging`]) its pass timestamps.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use wgpu::{Buffer, BufferUsages, CommandEncoder, Device};

use crate::render::memory::{GpuBytes, SplatMemory};
use crate::render::passes::common::buffer;
use crate::render::passes::indirect::{COUNTERS_SIZE, ViewCounters};

/// Bytes of each band's counters that are read back: all of them.
const COUNTS_BYTES: u64 = COUNTERS_SIZE;

/// What the GPU counted for one band in one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuCounts {
    pub visible_splats: u32,
    pub pairs_needed: u32,
    pub pairs_kept: u32,
    pub visible_kept: u32,
    pub tiles_drawn: u32,
    pub tile_runs: u32,
    pub tile_chunks: u32,
}

impl GpuCounts {
    /// Whether the band drew every visible splat and every pair it needed (its buffers
    /// held them all).
    pub fn complete(&self) -> bool {
        self.visible_kept == self.visible_splats && self.pairs_kept == self.pairs_needed
    }
}

impl From<&ViewCounters> for GpuCounts {
    fn from(counters: &ViewCounters) -> Self {
        Self {
            visible_splats: counters.visible,
            pairs_needed: counters.pairs_needed,
            pairs_kept: counters.pairs_kept,
            visible_kept: counters.visible_kept,
            tiles_drawn: counters.tiles_drawn,
            tile_runs: counters.tile_draw[1],
            tile_chunks: counters.tile_chunks,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadbackState {
    /// Free: the next frame may copy into it.
    Idle,
    /// A frame copied its data in; map once that frame has been submitted.
    Copied,
    /// Mapping requested, waiting for the GPU.
    Mapping,
    /// Mapped: the data can be read.
    Ready,
}

/// A small staging buffer cycling through copy → map → read, so the CPU learns what
/// the GPU wrote without stalling the frame.
pub struct Staging {
    buffer: Buffer,
    state: Arc<Mutex<ReadbackState>>,
    _bytes: GpuBytes,
}

impl Staging {
    pub fn new(device: &Device, memory: &SplatMemory, label: &str, bytes: u64) -> Self {
        let buffer = buffer(
            device,
            label,
            bytes,
            BufferUsages::MAP_READ | BufferUsages::COPY_DST,
        );
        Self {
            _bytes: memory.track(buffer.size()),
            buffer,
            state: Arc::new(Mutex::new(ReadbackState::Idle)),
        }
    }

    fn state(&self) -> MutexGuard<'_, ReadbackState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Called while encoding a frame: `copy` records copies into the staging buffer if
    /// it is free (else this frame's data is skipped). Whether it did.
    pub fn copy_if_free(
        &self,
        encoder: &mut CommandEncoder,
        copy: impl FnOnce(&mut CommandEncoder, &Buffer),
    ) -> bool {
        let mut state = self.state();
        if *state == ReadbackState::Idle {
            copy(encoder, &self.buffer);
            *state = ReadbackState::Copied;
            return true;
        }
        false
    }

    /// Called before encoding a frame: maps a copied buffer, reads a mapped one with
    /// `read`. Never waits: when the GPU has already finished the copying frame, its
    /// data comes back one frame late, else on a later call.
    pub fn poll<T>(&self, device: &Device, read: impl FnOnce(&[u8]) -> T) -> Option<T> {
        if *self.state() == ReadbackState::Copied {
            *self.state() = ReadbackState::Mapping;
            let shared = self.state.clone();
            self.buffer
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
        let value = read(&self.buffer.slice(..).get_mapped_range());
        self.buffer.unmap();
        *state = ReadbackState::Idle;
        Some(value)
    }
}

/// The counters of every band of a view. All bands of a frame are copied together, so
/// their counts always come from the same frame, and carry the tag that frame gave
/// them (a shadow view's frame number, so that it knows which frame they describe).
pub struct CounterReadback {
    staging: Staging,
    bands: usize,
    /// The tag of the counts in the staging buffer: one copy is in flight at a time.
    tag: AtomicU64,
}

impl CounterReadback {
    pub fn new(device: &Device, memory: &SplatMemory, bands: usize) -> Self {
        let bytes = COUNTS_BYTES * bands as u64;
        Self {
            staging: Staging::new(device, memory, "splat counters readback", bytes),
            bands,
            tag: AtomicU64::new(0),
        }
    }

    /// How many bands' counters it reads.
    pub fn bands(&self) -> usize {
        self.bands
    }

    /// Called while encoding a frame: copies every band's counters (in band order) if
    /// the staging buffer is free, tagged with `tag`.
    pub fn copy<'a>(
        &self,
        encoder: &mut CommandEncoder,
        counters: impl IntoIterator<Item = &'a Buffer>,
        tag: u64,
    ) {
        let copied = self.staging.copy_if_free(encoder, |encoder, staging| {
            for (band, counters) in counters.into_iter().enumerate().take(self.bands) {
                let at = band as u64 * COUNTS_BYTES;
                encoder.copy_buffer_to_buffer(counters, 0, staging, at, COUNTS_BYTES);
            }
        });
        if copied {
            self.tag.store(tag, Ordering::Relaxed);
        }
    }

    /// Called before encoding a frame: the latest counts, one per band, if back, with
    /// the tag they were copied under.
    pub fn poll(&self, device: &Device) -> Option<(u64, Vec<GpuCounts>)> {
        // Read before the next copy can change it: that copy waits for this poll to
        // free the staging buffer.
        let tag = self.tag.load(Ordering::Relaxed);
        let counts = self.staging.poll(device, |data| {
            data.chunks_exact(COUNTS_BYTES as usize)
                .take(self.bands)
                .map(|band| GpuCounts::from(&bytemuck::pod_read_unaligned::<ViewCounters>(band)))
                .collect()
        })?;
        Some((tag, counts))
    }
}
