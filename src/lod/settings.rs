//! `SplatLod`: a camera's splat budget.

use bevy::ecs::prelude::*;
use bevy::reflect::prelude::*;

/// Draws this camera's clouds from their level-of-detail trees, at most about
/// `budget` splats a frame across all of them.
///
/// Each frame a node of a cloud's tree (a trained splat, or the merge of a group of
/// them) is drawn where it is small enough on screen and its parent is not; the size
/// is the angle its bounding sphere subtends, so the choice depends on where the
/// camera stands and not on where it looks. The angle at which nodes stop splitting
/// is found from the GPU's count of the frame before, so that the drawn count stays
/// within `budget`; nodes whose sizes lie within `blend_octaves` of it are blended
/// (the parent fading out as its children fade in) so that a moving camera sees no
/// pops. A budget that covers every splat in view draws exactly what a camera without
/// `SplatLod` draws.
///
/// On a light (directional, point or spot) it does the same for each of the light's
/// shadow views, with `pixel_scale` in shadow-map texels: far cascades then draw coarse
/// nodes instead of many splats smaller than a texel. `budget` holds for each point or
/// spot view, and for a directional light's cascades of one camera together (they are
/// drawn in one run).
///
/// Trees are built on a worker thread the first time a camera with `SplatLod` exists
/// (about a second per million splats, [`SplatLodTrees`](crate::lod::SplatLodTrees));
/// until a cloud's tree is on the GPU it is drawn whole. Clouds with a
/// [`SplatShader`](crate::SplatShader) are drawn whole, and so are all clouds on a
/// device with fewer than 10 storage buffers per shader stage.
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
pub struct SplatLod {
    /// Splats a frame (summed over every cloud the camera sees) the cut aims at.
    pub budget: u32,
    /// Nodes whose radius covers fewer pixels than this are not split even when the
    /// budget allows (0: split as far as the budget allows, down to the trained
    /// splats).
    pub pixel_scale: f32,
    /// Width of the blend between a node and its children, in octaves of screen size
    /// (0: a hard switch, which pops).
    pub blend_octaves: f32,
}

impl Default for SplatLod {
    fn default() -> Self {
        Self {
            budget: 2_500_000,
            pixel_scale: 0.0,
            blend_octaves: 1.0,
        }
    }
}

impl SplatLod {
    /// Half the blend's width in octaves of node size, as the cut uses it: the
    /// setting clamped to 0..=8 octaves (0 where it is not finite), halved.
    pub fn half_octaves(&self) -> f32 {
        if self.blend_octaves.is_finite() {
            self.blend_octaves.clamp(0.0, 8.0) * 0.5
        } else {
            0.0
        }
    }

    /// A budget of `budget` splats, the other settings their defaults.
    pub fn with_budget(budget: u32) -> Self {
        Self {
            budget,
            ..Self::default()
        }
    }
}
