//! The working buffers and layer the shadow views share.
//!
//! A camera keeps its own, but a scene's shadow views are many (four cascades per
//! camera and directional light, six faces per point light) and each used to hold
//! buffers for every splat it could see: a scene's shadow memory grew with its views.
//! They never need them at the same time. Every view is recorded whole, one after
//! another, and its passes clear or overwrite whatever they read of the work before
//! reading it (the counters, bin ranges and work counts are cleared, every other array
//! is written before it is read, and the depth write reads only the tiles the view's
//! own tile render has just written). So the views whose bands have the same shape
//! (the same map size and rows) share one set, as large as the largest of them needs;
//! each keeps only its own inputs (camera, clouds, dispatch parameters) and its counts'
//! read-back, which are what differ.

use std::ops::Range;
use std::sync::Arc;

use bevy::ecs::prelude::*;
use bevy::math::UVec2;
use bevy::platform::collections::HashMap;

use crate::render::memory::SplatMemory;
use crate::render::passes::SplatPipelines;
use crate::render::view::ViewBuffers;
use crate::render::view::band_buffers::{BandBuffers, BandCapacity, BandInputs, BandWork};
use crate::render::view::readback::CounterReadback;
use crate::render::view::splat_layer::{LayerOutputs, SplatLayer};

/// The shared work of the shadow views, by the shape of their bands; what no view
/// used this frame is dropped.
#[derive(Resource, Default)]
pub struct ShadowWork {
    by_shape: HashMap<WorkShape, SharedWork>,
}

/// What views must have in common to share work: the map size and every band's rows
/// and room for chunks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct WorkShape {
    viewport: UVec2,
    bands: Vec<(Range<u32>, u32)>,
}

impl WorkShape {
    fn of(viewport: UVec2, bands: &[BandCapacity]) -> Self {
        Self {
            viewport,
            bands: bands
                .iter()
                .map(|band| (band.rows.clone(), band.tile_chunks))
                .collect(),
        }
    }
}

/// One shape's layer and band work.
struct SharedWork {
    layer: Arc<SplatLayer>,
    bands: Vec<Arc<BandWork>>,
}

/// One shadow view's plan for this frame: its map size and its bands' capacities,
/// planned from its own counts as a camera plans its own.
pub struct PlannedView {
    pub entity: Entity,
    pub viewport: UVec2,
    pub bands: Vec<BandCapacity>,
}

impl ShadowWork {
    /// Makes or keeps the work every shape of `plans` needs: per band, the most splats
    /// and pairs any of its views plans. Drops the shapes no view plans. Returns each plan's layer and band work, in order.
    pub fn share(
        &mut self,
        plans: &[PlannedView],
        device: &wgpu::Device,
        pipelines: &SplatPipelines,
        memory: &SplatMemory,
    ) -> Vec<(Arc<SplatLayer>, Vec<Arc<BandWork>>)> {
        let shapes: Vec<WorkShape> = plans
            .iter()
            .map(|plan| WorkShape::of(plan.viewport, &plan.bands))
            .collect();
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
            let previous = self.by_shape.remove(&shape);
            let (layer, mut old_bands) = match previous {
                Some(work) => (work.layer, work.bands),
                None => {
                    let layer =
                        SplatLayer::new(device, memory, shape.viewport, LayerOutputs::SHADOW);
                    (Arc::new(layer), Vec::new())
                }
            };
            old_bands.truncate(bands.len());
            let mut old_bands = old_bands.into_iter();
            let bands = bands
                .into_iter()
                .map(|need| match old_bands.next() {
                    // New clouds or chunks grow the views' own inputs, not this.
                    Some(work) if work.capacity.same_work(&need) => work,
                    _ => Arc::new(BandWork::new(device, pipelines, memory, need)),
                })
                .collect();
            self.by_shape.insert(shape, SharedWork { layer, bands });
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

/// A shadow view's buffers over its shared `layer` and `work`: its own inputs, kept
/// while they hold what `bands` asks (and grown with headroom otherwise), and its
/// read-back. Updates `previous` in place, or returns new buffers to insert.
pub fn view_buffers_over(
    previous: Option<&mut ViewBuffers>,
    bands: &[BandCapacity],
    (layer, work): (Arc<SplatLayer>, Vec<Arc<BandWork>>),
    device: &wgpu::Device,
    memory: &SplatMemory,
) -> Option<ViewBuffers> {
    let over = |old: Option<BandBuffers>, need: &BandCapacity, work: Arc<BandWork>| match old {
        Some(old) if old.inputs.hold(need) => old.with_work(work),
        old => {
            let inputs = old.map_or(
                BandInputs {
                    chunks: need.chunks,
                    instances: need.instances,
                },
                |old| BandInputs {
                    chunks: need.chunks.max(old.inputs.chunks),
                    instances: need.instances.max(old.inputs.instances),
                },
            );
            BandBuffers::over(device, memory, inputs, work)
        }
    };
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
            None
        }
        None => Some(ViewBuffers {
            layer,
            bands: bands
                .iter()
                .zip(work)
                .map(|(need, work)| over(None, need, work))
                .collect(),
            readback: CounterReadback::new(device, memory, bands.len()),
        }),
    }
}
