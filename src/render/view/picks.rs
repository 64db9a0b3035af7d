//! Pointer picks of a camera view: the pixels the main world asks about, the buffers the
//! pick pass reads and writes, and the answers, read back a frame or two late without
//! stalling (the same [`Staging`] as the counters) and handed to the main world.

use bevy::ecs::reflect::{ReflectComponent, ReflectResource};
use bevy::reflect::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bevy::ecs::prelude::*;
use bevy::math::UVec2;
use wgpu::{Buffer, BufferUsages, CommandEncoder, Device, Queue};

use super::readback::Staging;
use crate::render::memory::{GpuBytes, SplatMemory};
use crate::render::passes::common::buffer;
use crate::render::passes::pick::{MAX_PICKS, PICK_HIT_BYTES};

/// What a camera asks the GPU this frame: the splat surface under these pixels. Put on
/// a camera (the picking backend does, every frame), it also makes the camera's bands
/// record where each projected splat came from.
#[derive(Component, Clone, Debug, Default, Reflect)]
#[reflect(Component, Default, Debug, Clone)]
pub struct SplatPickRequest {
    /// Names this request in its answer.
    pub id: u64,
    /// Physical pixels of the camera's viewport; at most [`MAX_PICKS`] are read.
    pub pixels: Vec<UVec2>,
    /// Clouds that pointers pass through (`Pickable::IGNORE`): the pick sees the
    /// clouds behind them.
    pub ignored: Vec<Entity>,
}

/// The surface the GPU found under one pixel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplatPick {
    /// The cloud (main-world entity).
    pub cloud: Entity,
    /// The hit splat's index in the cloud's asset (for a camera with `SplatLod`
    /// whose cut drew a merged node there, a splat under that node).
    pub splat_index: u32,
    /// The hit's camera-space depth (distance along the camera's forward axis).
    pub view_depth: f32,
}

/// The GPU's answer to one [`SplatPickRequest`]: one entry per pixel, in its order.
#[derive(Clone, Debug, PartialEq)]
pub struct SplatPickAnswer {
    /// The [`SplatPickRequest::id`] this answers.
    pub id: u64,
    /// The surface under each requested pixel, `None` where no splat covers it.
    pub hits: Vec<Option<SplatPick>>,
}

/// The latest answer per camera (main-world entity), shared by both worlds.
/// Reflected as an opaque value: a copy made through reflection shares the answers.
#[derive(Resource, Clone, Default, Debug, Reflect)]
#[reflect(opaque)]
#[reflect(Resource, Default, Debug, Clone)]
pub struct SplatPickAnswers(Arc<Mutex<HashMap<Entity, SplatPickAnswer>>>);

impl SplatPickAnswers {
    /// The newest answer for `camera` not taken yet.
    pub fn take(&self, camera: Entity) -> Option<SplatPickAnswer> {
        self.lock().remove(&camera)
    }

    pub(crate) fn put(&self, camera: Entity, answer: SplatPickAnswer) {
        self.lock().insert(camera, answer);
    }

    /// Drops the answers of cameras that no longer pick (the picking backend's
    /// bookkeeping).
    #[cfg(feature = "picking")]
    pub(crate) fn retain(&self, keep: impl Fn(&Entity) -> bool) {
        self.lock().retain(|camera, _| keep(camera));
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Entity, SplatPickAnswer>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What one frame's picks need to be read: the request, and each instance's cloud.
#[derive(Clone, Debug)]
pub struct PickTicket {
    id: u64,
    pixels: u32,
    clouds: Arc<[Entity]>,
}

impl PickTicket {
    pub fn pixels(&self) -> u32 {
        self.pixels
    }
}

/// A view's pick buffers, kept across frames.
#[derive(bevy::ecs::component::Component)]
pub struct ViewPicks {
    pixels: Buffer,
    /// Where the pick pass writes, cleared every frame.
    pub hits: Buffer,
    /// 1 per instance a pointer may hit.
    pub pickable: Buffer,
    staging: Staging,
    /// The ticket of the frame whose hits the staging buffer holds.
    in_flight: Mutex<Option<PickTicket>>,
    _bytes: GpuBytes,
}

impl ViewPicks {
    pub fn new(device: &Device, memory: &SplatMemory) -> Self {
        let storage = BufferUsages::STORAGE | BufferUsages::COPY_DST;
        let hits_bytes = MAX_PICKS as u64 * PICK_HIT_BYTES;
        let pixels = buffer(device, "splat pick pixels", MAX_PICKS as u64 * 8, storage);
        let hits = buffer(
            device,
            "splat pick hits",
            hits_bytes,
            storage | BufferUsages::COPY_SRC,
        );
        let pickable = buffer(device, "splat pickable", 16, storage);
        Self {
            _bytes: memory.track(pixels.size() + hits.size()),
            staging: Staging::new(device, memory, "splat pick readback", hits_bytes),
            pixels,
            hits,
            pickable,
            in_flight: Mutex::new(None),
        }
    }

    /// Writes this frame's pixels and which instances are pickable (`clouds` holds each
    /// instance's cloud, in instance order). `None` when there is nothing to pick.
    pub fn write(
        &mut self,
        device: &Device,
        queue: &Queue,
        request: &SplatPickRequest,
        clouds: Vec<Entity>,
    ) -> Option<PickTicket> {
        let pixels: Vec<[u32; 2]> = request
            .pixels
            .iter()
            .take(MAX_PICKS)
            .map(|p| p.to_array())
            .collect();
        if pixels.is_empty() || clouds.is_empty() {
            return None;
        }
        let flags: Vec<u32> = clouds
            .iter()
            .map(|cloud| u32::from(!request.ignored.contains(cloud)))
            .collect();
        let bytes = (flags.len() * 4) as u64;
        if self.pickable.size() < bytes {
            self.pickable = buffer(
                device,
                "splat pickable",
                bytes.next_power_of_two(),
                BufferUsages::STORAGE | BufferUsages::COPY_DST,
            );
        }
        queue.write_buffer(&self.pixels, 0, bytemuck::cast_slice(&pixels));
        queue.write_buffer(&self.pickable, 0, bytemuck::cast_slice(&flags));
        Some(PickTicket {
            id: request.id,
            pixels: pixels.len() as u32,
            clouds: clouds.into(),
        })
    }

    pub fn pixels(&self) -> &Buffer {
        &self.pixels
    }

    /// Called while encoding, after the pick pass: copies this frame's hits if the
    /// staging buffer is free (else this frame's answer is skipped).
    pub fn copy(&self, encoder: &mut CommandEncoder, ticket: &PickTicket) {
        self.staging.copy_if_free(encoder, |encoder, staging| {
            encoder.copy_buffer_to_buffer(&self.hits, 0, staging, 0, staging.size());
            *self.ticket() = Some(ticket.clone());
        });
    }

    /// Called before encoding a frame: the latest answer, if it is back.
    pub fn poll(&self, device: &Device) -> Option<SplatPickAnswer> {
        let words = self.staging.poll(device, |data| {
            bytemuck::cast_slice::<u8, u32>(data).to_vec()
        })?;
        let ticket = self.ticket().take()?;
        Some(answer(&ticket, &words))
    }

    fn ticket(&self) -> MutexGuard<'_, Option<PickTicket>> {
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Reads `PickHit`s (found, instance, splat, depth bits) for the ticket's pixels.
fn answer(ticket: &PickTicket, words: &[u32]) -> SplatPickAnswer {
    let hits = words
        .chunks_exact(4)
        .take(ticket.pixels as usize)
        .map(|hit| {
            let cloud = *ticket.clouds.get(hit[1] as usize)?;
            (hit[0] == 1).then_some(SplatPick {
                cloud,
                splat_index: hit[2],
                view_depth: f32::from_bits(hit[3]),
            })
        })
        .collect();
    SplatPickAnswer {
        id: ticket.id,
        hits,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_follow_the_ticket() {
        let clouds: Arc<[Entity]> = vec![Entity::from_raw_u32(7).unwrap()].into();
        let ticket = PickTicket {
            id: 3,
            pixels: 3,
            clouds,
        };
        let words = [
            1,
            0,
            42,
            2.5f32.to_bits(), // a hit on instance 0
            0,
            0,
            0,
            0, // no hit
            1,
            5,
            1,
            1.0f32.to_bits(), // an instance that is not in the ticket
            1,
            0,
            9,
            0, // past the ticket's pixels
        ];
        let answer = answer(&ticket, &words);
        assert_eq!(answer.id, 3);
        assert_eq!(answer.hits.len(), 3);
        assert_eq!(
            answer.hits[0],
            Some(SplatPick {
                cloud: Entity::from_raw_u32(7).unwrap(),
                splat_index: 42,
                view_depth: 2.5
            })
        );
        assert_eq!(answer.hits[1], None);
        assert_eq!(answer.hits[2], None);
    }
}
