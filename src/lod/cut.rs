//! The cut: which nodes of a tree a camera draws, and with what weight.
//!
//! A node's size is the angle its bounding sphere subtends, `r / (d − r)` (the sphere
//! seen from its nearest point; the orthographic size is the radius itself). Given a
//! threshold `τ`, a node is drawn where it is at most `τ` and its parent is larger.
//! Sizes never grow from parent to child (`spheres.rs`), so that picks exactly one
//! node on every path from a root to a leaf. With a blend of `2h` octaves, the step at
//! `τ` becomes a ramp `f` from 0 at `τ·2^−h` to 1 at `τ·2^h` in the logarithm of the
//! size, and a node's weight (its opacity's multiplier) is `f(parent) − f(node)`: the
//! weights on every path still sum to one, a parent fading out exactly as its children
//! fade in. These functions are the GPU's rule (`preprocess_lod.wgsl`) in Rust, for
//! the tests and for choosing `τ` from what the GPU counted.

use bevy::math::Vec3;

/// Bins of the size histograms: an eighth of an octave each, from 2^−24 up to 2^8.
pub const LOD_BINS: usize = 256;
/// Bins per octave (doubling) of node size.
pub const LOD_BINS_PER_OCTAVE: i32 = 8;
/// The first bin's lower edge is 2 to this power.
pub const LOD_LOWEST_OCTAVE: i32 = -24;

/// Words of a view's LOD feedback (`LodFeedback` in WGSL): the leaves in view, three
/// spare words, then the histograms of the nodes' own sizes and of their parents'.
pub const LOD_FEEDBACK_WORDS: usize = 4 + 2 * LOD_BINS;

/// The size below which a node's distance no longer matters: its radius times this
/// (a camera inside a sphere sees it as very large, never as negative).
const NEAREST_FRACTION: f32 = 1.0 / 1_048_576.0;

/// Node size as the cut measures it. `centre` and `radius` in the cloud's frame;
/// `camera` there too; `orthographic_scale`: for an orthographic view, camera units
/// per cloud unit.
pub fn node_size(centre: Vec3, radius: f32, camera: Vec3, orthographic_scale: Option<f32>) -> f32 {
    if let Some(scale) = orthographic_scale {
        return radius * scale;
    }
    let distance = (centre - camera).length();
    radius / (distance - radius).max(radius * NEAREST_FRACTION)
}

/// The ramp `f`: 0 for sizes well below `threshold`, 1 well above. Non-finite sizes
/// count as infinite.
pub fn blend_step(size: f32, threshold: f32, half_octaves: f32) -> f32 {
    if !size.is_finite() {
        return 1.0;
    }
    if size.is_nan() || size <= 0.0 {
        return 0.0;
    }
    if half_octaves <= 0.0 {
        return if size > threshold { 1.0 } else { 0.0 };
    }
    let octaves = (size / threshold).log2();
    ((octaves + half_octaves) / (2.0 * half_octaves)).clamp(0.0, 1.0)
}

/// A node's weight: `f(parent) − f(node)`, with a leaf's own size 0 and a root's
/// parent's infinite. `threshold` 0 draws the leaves alone, whole. The node is drawn
/// with its transmittance raised to this power (`1 − (1 − α)^weight`): blending
/// nodes share the transmittance, so a parent and its children halfway through a
/// blend cover what either covers alone (scaling opacities instead would thin the
/// image wherever a blend is under way).
pub fn node_weight(
    own_size: Option<f32>,
    parent_size: Option<f32>,
    threshold: f32,
    half_octaves: f32,
) -> f32 {
    if threshold <= 0.0 {
        return if own_size.is_none() { 1.0 } else { 0.0 };
    }
    let above = parent_size.map_or(1.0, |size| blend_step(size, threshold, half_octaves));
    let below = own_size.map_or(0.0, |size| blend_step(size, threshold, half_octaves));
    (above - below).max(0.0)
}

/// The histogram bin of a size, or `None` above the last bin (a node that large is
/// never small enough: it is left out of the counts).
pub fn size_bin(size: f32) -> Option<usize> {
    let top = 2f32.powi(LOD_LOWEST_OCTAVE + LOD_BINS as i32 / LOD_BINS_PER_OCTAVE);
    if size.is_nan() || size >= top {
        return None;
    }
    if size <= 0.0 {
        return Some(0);
    }
    let bin = ((size.log2() - LOD_LOWEST_OCTAVE as f32) * LOD_BINS_PER_OCTAVE as f32).floor();
    Some(bin.clamp(0.0, (LOD_BINS - 1) as f32) as usize)
}

/// The threshold at the lower edge of bin `edge` (may lie past either end).
pub fn edge_threshold(edge: i32) -> f32 {
    2f32.powf(LOD_LOWEST_OCTAVE as f32 + edge as f32 / LOD_BINS_PER_OCTAVE as f32)
}

/// What the GPU counted for one view in one frame: the nodes in view by their own size
/// and by their parent's, and the leaves in view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LodFeedback {
    /// Leaves (trained splats) in view: the count without a budget.
    pub leaves_in_view: u32,
    /// Interior nodes in view by the bin of their own size.
    pub own: Vec<u32>,
    /// Nodes in view with a parent, by the bin of their parent's size.
    pub parent: Vec<u32>,
}

impl LodFeedback {
    /// No node counted: what a view that does not count steers by.
    pub fn none() -> Self {
        Self {
            leaves_in_view: 0,
            own: vec![0; LOD_BINS],
            parent: vec![0; LOD_BINS],
        }
    }

    /// Reads the GPU's words (`LOD_FEEDBACK_WORDS` of them); `None` if too few.
    pub fn from_words(words: &[u32]) -> Option<Self> {
        if words.len() < LOD_FEEDBACK_WORDS {
            return None;
        }
        Some(Self {
            leaves_in_view: words[0],
            own: words[4..4 + LOD_BINS].to_vec(),
            parent: words[4 + LOD_BINS..4 + 2 * LOD_BINS].to_vec(),
        })
    }

    /// Nodes the cut at the lower edge of bin `edge` draws, blended over
    /// `half_bins` bins either side: those whose own size is below the blend's top and
    /// whose parent's is above its bottom.
    pub fn drawn_at(&self, edge: i32, half_bins: i32) -> u64 {
        let below = |histogram: &[u32], end: i32| -> u64 {
            let end = end.clamp(0, LOD_BINS as i32) as usize;
            histogram[..end].iter().map(|&n| u64::from(n)).sum()
        };
        // Leaves are below every threshold.
        (u64::from(self.leaves_in_view) + below(&self.own, edge + half_bins))
            .saturating_sub(below(&self.parent, edge - half_bins))
    }
}

/// The threshold a camera's cut uses, moved frame by frame towards the one that keeps
/// the drawn count within the budget.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LodController {
    /// `None` before any count came back; `Some(None)`: the leaves alone (exact);
    /// `Some(Some(edge))`: the lower edge of that bin.
    state: Option<Option<i32>>,
}

/// Bins the threshold may move towards finer detail per frame, per blend bin: a node
/// takes about four frames to fade in.
const REFINE_FRACTION: i32 = 4;

impl LodController {
    /// The threshold to draw with: 0 for the leaves alone. Before the GPU has counted
    /// anything, the coarsest (the roots) unless `total_nodes` fits the budget.
    pub fn threshold(&self, total_leaves: u64, budget: u32) -> f32 {
        match self.state {
            None if total_leaves <= u64::from(budget) => 0.0,
            None => edge_threshold(LOD_BINS as i32),
            Some(None) => 0.0,
            Some(Some(edge)) => edge_threshold(edge),
        }
    }

    /// Takes in one frame's counts: the threshold moves to the finest whose predicted
    /// count fits `budget` (no finer than `pixel_floor`, a size), at once towards
    /// coarser, a few bins a frame towards finer so nodes fade in.
    pub fn update(
        &mut self,
        feedback: &LodFeedback,
        budget: u32,
        pixel_floor: f32,
        half_octaves: f32,
    ) {
        let half_bins = (half_octaves.max(0.0) * LOD_BINS_PER_OCTAVE as f32).round() as i32;
        let floor_edge = (pixel_floor > 0.0).then(|| {
            ((pixel_floor.log2() - LOD_LOWEST_OCTAVE as f32) * LOD_BINS_PER_OCTAVE as f32).ceil()
                as i32
        });
        let budget = u64::from(budget);
        let target = if floor_edge.is_none() && u64::from(feedback.leaves_in_view) <= budget {
            None
        } else {
            let last = LOD_BINS as i32 + half_bins;
            let finest = (-half_bins..=last)
                .find(|&edge| feedback.drawn_at(edge, half_bins) <= budget)
                .unwrap_or(last);
            Some(floor_edge.map_or(finest, |floor| finest.max(floor)))
        };
        let step = (2 * half_bins / REFINE_FRACTION).max(1);
        self.state = Some(match (self.state, target) {
            // The first count, or a hard switch: straight to the target.
            (None, target) => target,
            (Some(_), target) if half_bins == 0 => target,
            (Some(None), target) => target,
            (Some(Some(now)), None) => {
                let next = now - step;
                (next > -half_bins).then_some(next)
            }
            (Some(Some(now)), Some(target)) if target < now => Some((now - step).max(target)),
            (Some(Some(_)), Some(target)) => Some(target),
        });
    }
}
