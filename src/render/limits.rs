//! Caps an app can put on the GPU resources the splat passes use, below what the
//! device offers.

use bevy::ecs::prelude::*;
use bevy::reflect::prelude::*;
use bevy::render::extract_resource::ExtractResource;
use bevy::render::renderer::RenderDevice;

/// The smallest binding cap honoured: below this a band would hold too few splats to
/// be worth a dispatch.
pub const MIN_STORAGE_BINDING_BYTES: u64 = 64 << 10;

/// Limits the splat renderer keeps to even where the device allows more: a big GPU can
/// be made to draw like a small one (a browser's WebGPU device cannot be created with
/// limits below the WebGPU defaults, so this is how a page tests its banded path).
///
/// Read when a cloud uploads and when a view sizes its buffers: set it before clouds
/// load.
#[derive(Resource, ExtractResource, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Resource, Default, Debug, Clone, PartialEq)]
pub struct SplatGpuLimits {
    /// The largest storage buffer binding the passes use, in bytes (at least
    /// [`MIN_STORAGE_BINDING_BYTES`]); `None`: the device's. A smaller one makes a view
    /// draw its splats in more bands of tile rows and a cloud upload in more chunks.
    pub max_storage_binding_bytes: Option<u64>,
    /// The most chunks of long tile lists a shadow view keeps room for, each drawn by
    /// a workgroup of its own (264 bytes each); `None`: as many as its pairs may need,
    /// up to 65,535. `Some(0)` draws every tile of a shadow view with one workgroup.
    pub max_tile_chunks: Option<u32>,
}

impl SplatGpuLimits {
    /// The storage binding the passes may use on `device`, in bytes.
    pub fn max_storage_binding(&self, device: &RenderDevice) -> u64 {
        let limits = device.limits();
        let device_max = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        match self.max_storage_binding_bytes {
            Some(cap) => cap.max(MIN_STORAGE_BINDING_BYTES).min(device_max),
            None => device_max,
        }
    }
}
