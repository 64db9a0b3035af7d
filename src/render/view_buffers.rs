//! The working buffers of one camera view, kept across frames and grown on demand.

use std::sync::{Arc, Mutex, PoisonError};

use bevy::math::UVec2;
use wgpu::{Buffer, BufferUsages, Device};

use super::SplatPipelines;
use super::indirect::{
    COUNTERS_SIZE, PAIRS_KEPT_OFFSET, PAIRS_NEEDED_OFFSET, VISIBLE_COUNT_OFFSET,
};
use super::memory::{GpuBytes, SplatMemory};
use super::preprocess::{CHUNK_PARAMS_STRIDE, CloudInstance, PROJECTED_SPLAT_BYTES};
use super::radix_sort::SortBuffers;
use super::scan::ScanBuffers;
use super::tile_render::SPLAT_LAYER_FORMAT;
use super::view_uniform::SplatViewUniform;

/// 16×16 tiles covering a viewport.
pub fn tiles_for(viewport: UVec2) -> UVec2 {
    UVec2::new(viewport.x.div_ceil(16), viewport.y.div_ceil(16))
}

/// The sizes a view's buffers are built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewCapacity {
    /// Splats of all clouds the view sees (the most that can be visible).
    pub splats: u32,
    /// (splat, tile) pairs.
    pub pairs: u32,
    /// Preprocess dispatches (distinct asset chunks) per frame.
    pub chunks: u32,
    /// Clouds (instances of assets) per frame.
    pub instances: u32,
    /// Viewport size in pixels.
    pub viewport: UVec2,
}

impl ViewCapacity {
    pub fn tiles(&self) -> UVec2 {
        tiles_for(self.viewport)
    }

    /// Whether buffers built for `self` can serve a frame that needs `need`.
    pub fn holds(&self, need: &ViewCapacity) -> bool {
        self.splats >= need.splats
            && self.pairs >= need.pairs
            && self.chunks >= need.chunks
            && self.instances >= need.instances
            && self.viewport == need.viewport
    }
}

pub struct ViewBuffers {
    pub capacity: ViewCapacity,
    pub view_uniform: Buffer,
    pub chunk_params: Buffer,
    pub instances: Buffer,
    pub projected: Buffer,
    pub tile_counts: Buffer,
    pub counters: Buffer,
    pub pair_capacity: Buffer,
    pub ranges: Buffer,
    pub composite_params: Buffer,
    pub splat_layer: wgpu::TextureView,
    pub scan: ScanBuffers,
    pub sort: SortBuffers,
    pub readback: CounterReadback,
    _bytes: GpuBytes,
}

fn buffer(device: &Device, label: &str, size: u64, usage: BufferUsages) -> Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        // Bindings of zero bytes are invalid; keep every buffer at least one word.
        size: size.max(16),
        usage,
        mapped_at_creation: false,
    })
}

impl ViewBuffers {
    pub fn new(
        device: &Device,
        pipelines: &SplatPipelines,
        memory: &SplatMemory,
        capacity: ViewCapacity,
    ) -> Self {
        let storage = BufferUsages::STORAGE | BufferUsages::COPY_DST;
        let uniform = BufferUsages::UNIFORM | BufferUsages::COPY_DST;
        let splats = u64::from(capacity.splats.max(1));
        let tiles = capacity.tiles();
        let tile_count = u64::from(tiles.x * tiles.y);

        let view_uniform = buffer(
            device,
            "splat view",
            size_of::<SplatViewUniform>() as u64,
            uniform,
        );
        let chunk_params = buffer(
            device,
            "splat chunk params",
            CHUNK_PARAMS_STRIDE * u64::from(capacity.chunks.max(1)),
            uniform,
        );
        let instances = buffer(
            device,
            "splat cloud instances",
            size_of::<CloudInstance>() as u64 * u64::from(capacity.instances.max(1)),
            storage,
        );
        let projected = buffer(
            device,
            "splat projected",
            splats * PROJECTED_SPLAT_BYTES,
            storage,
        );
        let tile_counts = buffer(device, "splat tile counts", splats * 4, storage);
        let counters = buffer(
            device,
            "splat counters",
            COUNTERS_SIZE,
            storage | BufferUsages::INDIRECT | BufferUsages::COPY_SRC,
        );
        let pair_capacity = buffer(device, "splat pair capacity", 16, uniform);
        let ranges = buffer(device, "splat tile ranges", tile_count * 8, storage);
        let composite_params = buffer(device, "splat composite", 16, uniform);
        let layer = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("splat layer"),
            size: wgpu::Extent3d {
                width: capacity.viewport.x.max(1),
                height: capacity.viewport.y.max(1),
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: SPLAT_LAYER_FORMAT,
            usage: wgpu::TextureUsages::STORAGE_BINDING | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let splat_layer = layer.create_view(&Default::default());

        let scan = ScanBuffers::new(
            device,
            &pipelines.scan,
            capacity.splats.max(1),
            &tile_counts,
            &counters,
            VISIBLE_COUNT_OFFSET,
            &counters,
            PAIRS_NEEDED_OFFSET,
        );
        let sort = SortBuffers::new(
            device,
            &pipelines.sort,
            capacity.pairs.max(1),
            &counters,
            PAIRS_KEPT_OFFSET,
        );

        let bytes = [
            &view_uniform,
            &chunk_params,
            &instances,
            &projected,
            &tile_counts,
            &counters,
            &pair_capacity,
            &ranges,
            &composite_params,
        ]
        .iter()
        .map(|b| b.size())
        .sum::<u64>()
            + u64::from(capacity.viewport.x.max(1)) * u64::from(capacity.viewport.y.max(1)) * 16
            + sort.gpu_bytes()
            + scan.gpu_bytes();

        Self {
            capacity,
            view_uniform,
            chunk_params,
            instances,
            projected,
            tile_counts,
            counters,
            pair_capacity,
            ranges,
            composite_params,
            splat_layer,
            scan,
            sort,
            readback: CounterReadback::new(device),
            _bytes: memory.track(bytes),
        }
    }
}

/// Counts read back from the GPU a frame or two late, never waited for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuCounts {
    pub visible_splats: u32,
    pub pairs_needed: u32,
    pub pairs_kept: u32,
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

/// A small staging buffer cycling through copy → map → read, so the CPU learns the
/// frame's pair count (to grow buffers) without stalling the frame.
pub struct CounterReadback {
    staging: Buffer,
    state: Arc<Mutex<ReadbackState>>,
}

impl CounterReadback {
    fn new(device: &Device) -> Self {
        Self {
            staging: buffer(
                device,
                "splat counters readback",
                16,
                BufferUsages::MAP_READ | BufferUsages::COPY_DST,
            ),
            state: Arc::new(Mutex::new(ReadbackState::Idle)),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ReadbackState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Called while encoding a frame: copies the counters if the staging buffer is free.
    pub fn copy(&self, encoder: &mut wgpu::CommandEncoder, counters: &Buffer) {
        let mut state = self.state();
        if *state == ReadbackState::Idle {
            encoder.copy_buffer_to_buffer(counters, 0, &self.staging, 0, 16);
            *state = ReadbackState::Copied;
        }
    }

    /// Called before encoding a frame: maps a copied buffer, reads a mapped one.
    /// Never waits: when the GPU has already finished the copying frame, its counts
    /// come back one frame late, else on a later call.
    pub fn poll(&self, device: &Device) -> Option<GpuCounts> {
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
            GpuCounts {
                visible_splats: words[0],
                pairs_needed: words[1],
                pairs_kept: words[2],
            }
        };
        self.staging.unmap();
        *state = ReadbackState::Idle;
        Some(counts)
    }
}
