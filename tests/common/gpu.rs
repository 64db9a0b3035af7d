//! A wgpu device for GPU unit tests, without a Bevy app: create buffers from slices,
//! run compute passes, read buffers back.
//!
//! The backend comes from `WGPU_BACKEND` (Vulkan when unset: lavapipe on machines
//! without a GPU). The device gets the adapter's full limits and its subgroup and
//! timestamp features where present.
#![allow(dead_code)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
}

impl Gpu {
    /// Panics with a readable message when no adapter is found.
    pub fn new() -> Gpu {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        if wgpu::Backends::from_env().is_none() {
            desc.backends = wgpu::Backends::VULKAN;
        }
        let instance = wgpu::Instance::new(desc);
        let adapter = block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
        }))
        .expect(
            "no GPU adapter: install lavapipe (mesa-vulkan-drivers libvulkan1) \
             and set WGPU_BACKEND=vulkan",
        );
        let wanted = wgpu::Features::SUBGROUP
            | wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let (device, queue) = block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("test device"),
            required_features: adapter.features() & wanted,
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .expect("request_device failed");
        Gpu { device, queue }
    }

    /// Adapter name and backend, for test logs.
    pub fn describe(&self) -> String {
        let info = self.device.adapter_info();
        format!("{} ({:?})", info.name, info.backend)
    }

    /// A buffer holding `data` (at least 4 bytes, zero-padded to a multiple of 4),
    /// with `usage | COPY_SRC | COPY_DST` so that it can be read back and refilled.
    pub fn upload<T: bytemuck::Pod>(&self, data: &[T], usage: wgpu::BufferUsages) -> wgpu::Buffer {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let size = (bytes.len() as u64).next_multiple_of(4).max(4);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("test upload"),
            size,
            usage: usage | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: true,
        });
        let mut padded = bytes.to_vec();
        padded.resize(size as usize, 0);
        buffer
            .slice(..)
            .get_mapped_range_mut()
            .copy_from_slice(&padded);
        buffer.unmap();
        buffer
    }

    /// The first `len` elements of `buffer` (which needs `COPY_SRC`), after all work
    /// submitted so far.
    pub fn read<T: bytemuck::Pod>(&self, buffer: &wgpu::Buffer, len: usize) -> Vec<T> {
        let bytes = (len * size_of::<T>()) as u64;
        if bytes == 0 {
            return Vec::new();
        }
        let padded = bytes.next_multiple_of(4);
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("test readback"),
            size: padded,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, padded);
        self.queue.submit([encoder.finish()]);
        staging.slice(..).map_async(wgpu::MapMode::Read, |result| {
            result.expect("mapping the readback buffer failed");
        });
        self.wait();
        let view = staging.slice(..).get_mapped_range();
        bytemuck::pod_collect_to_vec(&view[..bytes as usize])
    }

    /// Encodes one compute pass with `f`, submits it and waits until the GPU is done.
    pub fn run(&self, f: impl FnOnce(&mut wgpu::ComputePass<'_>)) {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("test pass"),
                timestamp_writes: None,
            });
            f(&mut pass);
        }
        self.queue.submit([encoder.finish()]);
        self.wait();
    }

    /// Blocks until all submitted work has finished.
    pub fn wait(&self) {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("device poll failed");
    }
}

/// Drives a future that wgpu's native backends resolve without an executor.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::yield_now();
    }
}
