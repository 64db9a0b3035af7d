//! A camera's level of detail in the render world: the buffer its preprocess counts
//! node sizes into, read back a frame late, and the threshold those counts steer
//! ([`LodController`]) so that the drawn count holds the camera's [`SplatLod`] budget.

use bevy::ecs::prelude::*;
use wgpu::{Buffer, BufferUsages, CommandEncoder, Device};

use super::readback::Staging;
use crate::lod::SplatLod;
use crate::lod::cut::{LodController, LodFeedback};
use crate::render::memory::{GpuBytes, SplatMemory};
use crate::render::passes::common::buffer;
use crate::render::passes::preprocess::LOD_FEEDBACK_BYTES;

/// The cut one view draws this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodFrame {
    /// Node size at which nodes stop splitting; 0 draws the leaves alone.
    pub threshold: f32,
    pub half_octaves: f32,
    /// The size below which no threshold goes (`SplatLod::pixel_scale`); 0 for none.
    pub floor: f32,
    /// Whether the preprocess (band 0) counts the cut's nodes by size for the next
    /// frame's threshold and the leaves in view.
    pub counted: bool,
}

/// A view's LOD state: its feedback buffer and threshold.
#[derive(Component)]
pub struct ViewLod {
    pub feedback: Buffer,
    staging: Staging,
    controller: LodController,
    /// The latest counts back from the GPU.
    latest: Option<LodFeedback>,
    /// The cut planned for this frame; where it is not `counted`, the view neither
    /// clears its feedback nor copies it back.
    planned: Option<LodFrame>,
    _bytes: GpuBytes,
}

impl ViewLod {
    pub fn new(device: &Device, memory: &SplatMemory) -> Self {
        let feedback = buffer(
            device,
            "splat LOD feedback",
            LOD_FEEDBACK_BYTES,
            BufferUsages::STORAGE | BufferUsages::COPY_SRC | BufferUsages::COPY_DST,
        );
        Self {
            _bytes: memory.track(feedback.size()),
            feedback,
            staging: Staging::new(
                device,
                memory,
                "splat LOD feedback readback",
                LOD_FEEDBACK_BYTES,
            ),
            controller: LodController::default(),
            latest: None,
            planned: None,
        }
    }

    /// Whether a view that reports no leaves in view (a shadow view) counts its nodes:
    /// only where `settings`' budget can bind. Under an unlimited budget the
    /// controller's threshold is the pixel floor's (or the leaves') whatever the
    /// counts say (`LodController::update` with no counts picks the same), and the
    /// counting costs the preprocess a workgroup atomic or two for every node in view,
    /// on bins that neighbouring nodes share, and the frame a clear and a copy.
    pub fn counts_for(settings: &SplatLod) -> bool {
        settings.budget != u32::MAX
    }

    /// Called before a frame is planned: takes in the counts that came back (or, for
    /// a view that does not `count`, steps the controller on none) and returns the
    /// cut to draw. `focal` (pixels per unit of size) turns the settings' pixel scale
    /// into a size; `total_leaves` is every splat the view's clouds hold.
    pub fn plan(
        &mut self,
        device: &Device,
        settings: &SplatLod,
        (focal, total_leaves): (f32, u64),
        count: bool,
    ) -> LodFrame {
        let half_octaves = settings.half_octaves();
        let pixel_floor = if settings.pixel_scale.is_finite() && focal > 0.0 {
            settings.pixel_scale.max(0.0) / focal
        } else {
            0.0
        };
        if !count {
            let none = LodFeedback::none();
            self.controller
                .update(&none, settings.budget, pixel_floor, half_octaves);
        } else if let Some(feedback) = self
            .staging
            .poll(device, |data| {
                let words: Vec<u32> = data
                    .chunks_exact(4)
                    .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                    .collect();
                LodFeedback::from_words(&words)
            })
            .flatten()
        {
            self.controller
                .update(&feedback, settings.budget, pixel_floor, half_octaves);
            self.latest = Some(feedback);
        }
        let frame = LodFrame {
            threshold: self.controller.threshold(total_leaves, settings.budget),
            half_octaves,
            floor: pixel_floor,
            counted: count,
        };
        self.planned = Some(frame);
        frame
    }

    /// Whether this frame's preprocess counts into the feedback buffer.
    fn counting(&self) -> bool {
        self.planned.is_some_and(|frame| frame.counted)
    }

    /// A view's cut this frame, for a view (a camera, or a light's shadow view) whose
    /// `settings` ask for one: the state on the view plans it, made when the view starts
    /// asking and dropped when it stops. `count`: whether the view counts its nodes
    /// (every camera; a shadow view as [`Self::counts_for`] says). Returns the cut and
    /// the splats in view that the latest counts report.
    #[expect(clippy::too_many_arguments, reason = "one view's LOD inputs, named")]
    pub fn follow(
        commands: &mut Commands,
        view: Entity,
        (settings, count): (Option<&SplatLod>, bool),
        state: Option<Mut<ViewLod>>,
        device: &Device,
        memory: &SplatMemory,
        focal: f32,
        total_leaves: u64,
    ) -> Option<(LodFrame, u32)> {
        let plan = |lod: &mut ViewLod, settings| {
            let frame = lod.plan(device, settings, (focal, total_leaves), count);
            (frame, lod.latest().map_or(0, |f| f.leaves_in_view))
        };
        match (settings, state) {
            (Some(settings), Some(mut lod)) => Some(plan(&mut lod, settings)),
            (Some(settings), None) => {
                let mut lod = ViewLod::new(device, memory);
                let planned = plan(&mut lod, settings);
                commands.entity(view).insert(lod);
                Some(planned)
            }
            (None, Some(_)) => {
                commands.entity(view).remove::<ViewLod>();
                None
            }
            (None, None) => None,
        }
    }

    /// The latest counts back from the GPU.
    pub fn latest(&self) -> Option<&LodFeedback> {
        self.latest.as_ref()
    }

    /// Called while encoding, before the preprocess: a zeroed feedback buffer, where
    /// the view counts.
    pub fn clear(&self, encoder: &mut CommandEncoder) {
        if self.counting() {
            encoder.clear_buffer(&self.feedback, 0, None);
        }
    }

    /// Called while encoding, after the preprocess: the counts copied for reading back
    /// if the view counts and the staging buffer is free.
    pub fn copy_back(&self, encoder: &mut CommandEncoder) {
        if !self.counting() {
            return;
        }
        self.staging.copy_if_free(encoder, |encoder, staging| {
            encoder.copy_buffer_to_buffer(&self.feedback, 0, staging, 0, LOD_FEEDBACK_BYTES);
        });
    }
}
