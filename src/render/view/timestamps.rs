//! Each stage's GPU time from timestamps written at the start and end of its pass —
//! the one GPU timing WebGPU offers (it has no timestamps inside encoders or passes,
//! which Bevy's render diagnostics need) — read back like the counters, a frame or
//! more late, without stalling.

use bevy::ecs::component::Component;
use bevy::ecs::reflect::ReflectComponent;
use bevy::reflect::prelude::*;
use wgpu::{
    BufferUsages, CommandEncoder, ComputePassTimestampWrites, Device, QuerySet, QuerySetDescriptor,
    QueryType, RenderPassTimestampWrites,
};

use super::readback::Staging;
use crate::render::memory::{GpuBytes, SplatMemory};
use crate::render::passes::common::buffer;

/// Times each stage of this camera's splat passes on the GPU: each stage's time in
/// [`SplatViewStats::gpu_pass_ns`](crate::render::SplatViewStats::gpu_pass_ns) and,
/// with Bevy's `RenderDiagnosticsPlugin`, as `render/gaussian_splats/<stage>/elapsed_gpu`.
///
/// Off by default: the timestamps at every stage's ends cost GPU time (on an H200 at
/// 5.8 M splats about 0.04 ms a frame for these, 0.14 ms more for Bevy's spans;
/// BENCHMARKS.md). Without it, `RenderDiagnosticsPlugin` still times the whole splat
/// span, `render/gaussian_splats/elapsed_gpu`.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
pub struct SplatPassTimes;

/// A begin and an end timestamp per stage.
const QUERIES_PER_STAGE: u32 = 2;
const TIMESTAMP_BYTES: u64 = 8;

/// The timestamp queries of one view's stages and their read-back.
#[derive(bevy::ecs::component::Component)]
pub struct PassTimestamps {
    queries: QuerySet,
    resolved: wgpu::Buffer,
    staging: Staging,
    stages: u32,
    /// Nanoseconds per timestamp tick.
    period_ns: f32,
    _bytes: GpuBytes,
}

impl PassTimestamps {
    /// `None` where the device cannot write timestamps.
    pub fn new(
        device: &Device,
        queue: &wgpu::Queue,
        memory: &SplatMemory,
        stages: usize,
    ) -> Option<Self> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let stages = u32::try_from(stages).ok()?;
        let count = stages * QUERIES_PER_STAGE;
        let bytes = u64::from(count) * TIMESTAMP_BYTES;
        let queries = device.create_query_set(&QuerySetDescriptor {
            label: Some("splat pass timestamps"),
            ty: QueryType::Timestamp,
            count,
        });
        let resolved = buffer(
            device,
            "splat pass timestamps resolved",
            bytes,
            BufferUsages::QUERY_RESOLVE | BufferUsages::COPY_SRC | BufferUsages::COPY_DST,
        );
        Some(Self {
            _bytes: memory.track(resolved.size()),
            queries,
            resolved,
            staging: Staging::new(device, memory, "splat pass timestamps readback", bytes),
            stages,
            period_ns: queue.get_timestamp_period(),
        })
    }

    fn indices(&self, stage: usize) -> Option<(u32, u32)> {
        let stage = u32::try_from(stage).ok().filter(|&s| s < self.stages)?;
        Some((stage * QUERIES_PER_STAGE, stage * QUERIES_PER_STAGE + 1))
    }

    /// The writes for a compute pass of `stage`.
    pub fn compute_writes(&self, stage: usize) -> Option<ComputePassTimestampWrites<'_>> {
        let (begin, end) = self.indices(stage)?;
        Some(ComputePassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(begin),
            end_of_pass_write_index: Some(end),
        })
    }

    /// The writes for a render pass of `stage`.
    pub fn render_writes(&self, stage: usize) -> Option<RenderPassTimestampWrites<'_>> {
        let (begin, end) = self.indices(stage)?;
        Some(RenderPassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(begin),
            end_of_pass_write_index: Some(end),
        })
    }

    /// After the last stage: resolves the timestamps of this frame's first `stages`
    /// stages (the ones that ran) and copies them out if the read-back is free. Only
    /// written queries may be resolved: Vulkan waits for a query's result, and one
    /// that was never written hangs the GPU until the device is lost.
    pub fn resolve(&self, encoder: &mut CommandEncoder, stages: usize) {
        let stages = u32::try_from(stages).unwrap_or(u32::MAX).min(self.stages);
        let count = stages * QUERIES_PER_STAGE;
        if count == 0 {
            return;
        }
        encoder.resolve_query_set(&self.queries, 0..count, &self.resolved, 0);
        // Stages that did not run read as zero, not as an earlier frame's time.
        let resolved_bytes = u64::from(count) * TIMESTAMP_BYTES;
        if resolved_bytes < self.resolved.size() {
            encoder.clear_buffer(&self.resolved, resolved_bytes, None);
        }
        self.staging.copy_if_free(encoder, |encoder, staging| {
            encoder.copy_buffer_to_buffer(&self.resolved, 0, staging, 0, self.resolved.size());
        });
    }

    /// The latest frame's time per stage in nanoseconds, if back.
    pub fn poll(&self, device: &Device) -> Option<Vec<u64>> {
        self.staging.poll(device, |data| {
            let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(data);
            ticks
                .chunks_exact(QUERIES_PER_STAGE as usize)
                .map(|pair| {
                    let ticks = pair[1].saturating_sub(pair[0]);
                    (ticks as f64 * f64::from(self.period_ns)) as u64
                })
                .collect()
        })
    }
}
