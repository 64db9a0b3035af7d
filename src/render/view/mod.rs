//! What each camera view keeps across frames, and the frame it records.
//!
//! - [`bands`]: how a view is cut into bands of tile rows, each within one storage
//!   binding (a pure policy);
//! - [`band_buffers`]: one band's working buffers and their capacities;
//! - [`buffer_plan`]: which of a band's four shared buffers holds which of the frame's
//!   arrays at each step, checked by its tests;
//! - [`sizing`]: which bands a view needs this frame, from the GPU's latest counts;
//! - [`shared_work`]: the layer and band work that views of one shape share (they
//!   record one after another), and each view's own buffers over them;
//! - [`splat_layer`]: the texture the bands draw into and the composite reads;
//! - [`uniform`]: the camera as the passes see it;
//! - [`dispatch`] and [`frame`]: every bind group of one frame, built in prepare and
//!   recorded by the node;
//! - [`readback`]: the bands' counters, read back a frame late;
//! - [`lod`]: a camera's level-of-detail feedback and threshold (`SplatLod`);
//! - [`picks`]: the pointer pixels a view is asked about and the GPU's answers, read
//!   back the same way;
//! - [`timestamps`]: each stage's GPU time, from timestamps at its pass's ends;
//! - [`stats`]: those counts and times, shared with the main world.

pub mod band_buffers;
pub mod bands;
pub mod buffer_plan;
pub mod dispatch;
pub mod frame;
pub mod lod;
pub mod picks;
pub mod readback;
pub mod shared_work;
pub mod sizing;
pub mod splat_layer;
pub mod stats;
pub mod timestamps;
pub mod uniform;

use band_buffers::BandBuffers;
use readback::CounterReadback;
use splat_layer::{LayerParams, SplatLayer};

/// What one view keeps across frames, a component on the render world's view: the
/// splat layer its bands draw into, the bands' buffers, and the read-back of their
/// counters. The layer and the bands' work are shared with the views of the same shape
/// (`shared_work`); the bands' inputs and the read-back are the view's own.
#[derive(bevy::ecs::component::Component)]
pub struct ViewBuffers {
    pub layer: std::sync::Arc<SplatLayer>,
    /// Where this view places the layer (the composite's and depth write's uniform).
    pub layer_params: LayerParams,
    /// Top to bottom; each draws its own tile rows of the layer.
    pub bands: Vec<BandBuffers>,
    /// Reads back every band's counters; built for this many bands.
    pub readback: CounterReadback,
}
