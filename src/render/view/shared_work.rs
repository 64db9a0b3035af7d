//! The layer and working buffers that views of one shape share.
//!
//! A view needs its layer and band work only while it records: every view is recorded
//! whole, one after another (a camera's run draws its splats and composites them, a
//! shadow view's run draws them and writes the map), and its passes clear or overwrite
//! whatever they read of the work before reading it (the counters and work counts are
//! cleared, every other array is written before it is read, and the
//! composite and the depth write read only the tiles the view's own tile render has
//! just written). So the views whose bands have the same shape (viewport size, rows,
//! outputs) share one layer and one set of band work, as large as the largest of them
//! needs, where each holding its own made memory grow with the number of views: four
//! cascades per camera and directional light, six faces per point light, the cameras
//! of a split screen. Each view keeps only what differs: its own inputs (camera,
//! clouds, dispatch parameters), where it places the layer in its target
//! (`LayerParams`) and its counts' read-back.

use std::ops::Range;
use std::sync::Arc;

use bevy::ecs::prelude::*;
use bevy::log::debug;
use bevy::math::UVec2;
use bevy::platform::collections::HashMap;

use super::ViewBuffers;
use super::band_buffers::{BandBuffers, BandCapacity, BandInputs, BandWork};
use super::bands::BandLimits;
use super::readback::{CounterReadback, GpuCounts};
use super::sizing::{ViewNeed, plan_bands};
use super::splat_layer::{LayerOutputs, LayerParams, SplatLayer};
use crate::render::memory::SplatMemory;
use crate::render::passes::SplatPipelines;

/// The layers and band work of one kind of view (cameras, shadow views), by shape; a
/// shape no view plans in a frame is dropped.
#[derive(Default)]
pub struct SharedWork {
    by_shape: HashMap<WorkShape, ShapeWork>,
}

/// What views must have in common to share work: the viewport size, the layer's
/// outputs, and every band's rows and what it records.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct WorkShape {
    viewport: UVec2,
    outputs: LayerOutputs,
    bands: Vec<BandShape>,
}

/// (rows, records sources, records lit points, room for tile chunks).
type BandShape = (Range<u32>, bool, bool, u32);

impl WorkShape {
    fn of(plan: &PlannedView) -> Self {
        Self {
            viewport: plan.viewport,
            outputs: plan.outputs,
            bands: plan
                .bands
                .iter()
                .map(|band| {
                    let rows = band.rows.clone();
                    (rows, band.sources, band.lit_points, band.tile_chunks)
                })
                .collect(),
        }
    }
}

/// One shape's layer and band work.
struct ShapeWork {
    layer: Arc<SplatLayer>,
    bands: Vec<Arc<BandWork>>,
}

/// One view's plan for this frame: its viewport size, its layer's outputs and its
/// bands' capacities, planned from its own counts (`sizing::plan_bands`).
pub struct PlannedView {
    pub entity: Entity,
    pub viewport: UVec2,
    pub outputs: LayerOutputs,
    pub bands: Vec<BandCapacity>,
}

impl PlannedView {
    /// Plans `entity`'s bands for this frame from what it draws (`need`) and the GPU's
    /// latest counts on its buffers (`previous`), which it polls and returns too, with
    /// the tag of the frame they came from (`CounterReadback::copy`).
    pub fn from_counts(
        entity: Entity,
        (viewport, outputs): (UVec2, LayerOutputs),
        previous: Option<&ViewBuffers>,
        (need, limits): (&ViewNeed, &BandLimits),
        device: &wgpu::Device,
    ) -> (Self, Option<(u64, Vec<GpuCounts>)>) {
        let counts = previous.and_then(|view| view.readback.poll(device));
        let bands = counts.as_ref().map(|(_, bands)| &bands[..]);
        let plan = Self {
            entity,
            viewport,
            outputs,
            bands: plan_bands(previous, bands, need, limits),
        };
        (plan, counts)
    }
}

impl SharedWork {
    /// Makes or keeps the work every shape of `plans` needs: per band, the most splats
    /// and pairs any of its views plans. Drops the shapes no view plans. Returns each
    /// plan's layer and band work, in order.
    pub fn share(
        &mut self,
        plans: &[PlannedView],
        device: &wgpu::Device,
        pipelines: &SplatPipelines,
        memory: &SplatMemory,
    ) -> Vec<(Arc<SplatLayer>, Vec<Arc<BandWork>>)> {
        let shapes: Vec<WorkShape> = plans.iter().map(WorkShape::of).collect();
        let mut largest: HashMap<WorkShape, Vec<BandCapacity>> = HashMap::default();
        for (shape, plan) in shapes.iter().zip(plans) {
            match largest.get_mut(shape) {
                Some(bands) => {
                    for (band, need) in bands.iter_mut().zip(&plan.bands) {
                        *band = covering(band, need);
                    }
                }
                None => {
                    largest.insert(shape.clone(), plan.bands.clone());
                }
            }
        }
        self.by_shape.retain(|shape, _| largest.contains_key(shape));
        for (shape, bands) in largest {
            let (layer, old_bands) = match self.by_shape.remove(&shape) {
                Some(work) => (work.layer, work.bands),
                None => {
                    let layer = SplatLayer::new(device, memory, shape.viewport, shape.outputs);
                    (Arc::new(layer), Vec::new())
                }
            };
            let mut old_bands = old_bands.into_iter();
            let bands = bands
                .into_iter()
                .map(|need| match old_bands.next() {
                    // New clouds or chunks grow the views' own inputs, not this.
                    Some(work) if work.capacity.same_work(&need) => work,
                    _ => {
                        debug!("splat band work for {need:?}");
                        Arc::new(BandWork::new(device, pipelines, memory, need))
                    }
                })
                .collect();
            self.by_shape.insert(shape, ShapeWork { layer, bands });
        }
        shapes
            .iter()
            .map(|shape| {
                let work = &self.by_shape[shape];
                (work.layer.clone(), work.bands.clone())
            })
            .collect()
    }
}

/// Work that serves both `a` and `b`, two bands of one shape.
fn covering(a: &BandCapacity, b: &BandCapacity) -> BandCapacity {
    BandCapacity {
        splats: a.splats.max(b.splats),
        pairs: a.pairs.max(b.pairs),
        ..a.clone()
    }
}

/// Gives the view of `plan` its buffers for this frame over the work it shares
/// (`SharedWork::share`): its own inputs, kept while they hold what `plan` asks (grown
/// with headroom otherwise, so a cloud appearing doesn't rebuild every frame), and its
/// read-back. Updates `previous` (the view's component) in place, or inserts new ones.
pub fn give_view_its_buffers(
    commands: &mut Commands,
    previous: Option<&mut ViewBuffers>,
    plan: &PlannedView,
    (layer, work): (Arc<SplatLayer>, Vec<Arc<BandWork>>),
    (device, memory): (&wgpu::Device, &SplatMemory),
) {
    let over = |old: Option<BandBuffers>, need: &BandCapacity, work: Arc<BandWork>| match old {
        Some(old) if old.inputs.hold(need) => old.with_work(work),
        old => {
            let held = old.map_or((0, 0), |old| (old.inputs.chunks, old.inputs.instances));
            let inputs = BandInputs {
                chunks: need.chunks.max(held.0),
                instances: need.instances.max(held.1),
            };
            BandBuffers::over(device, memory, inputs, work)
        }
    };
    let bands = &plan.bands;
    match previous {
        Some(view) => {
            if view.readback.bands() != bands.len() {
                view.readback = CounterReadback::new(device, memory, bands.len());
            }
            let mut old = std::mem::take(&mut view.bands).into_iter();
            view.bands = bands
                .iter()
                .zip(work)
                .map(|(need, work)| over(old.next(), need, work))
                .collect();
            view.layer = layer;
        }
        None => {
            commands.entity(plan.entity).insert(ViewBuffers {
                layer,
                layer_params: LayerParams::new(device, memory),
                bands: bands
                    .iter()
                    .zip(work)
                    .map(|(need, work)| over(None, need, work))
                    .collect(),
                readback: CounterReadback::new(device, memory, bands.len()),
            });
        }
    }
}
