//! Which runs of a tree chunk's nodes a view's cut can reach at all.
//!
//! The `LOD` preprocess reads every node's record to weigh it, even where the cut
//! draws none of them: a far shadow cascade weighs every leaf of every cloud to find
//! that their parents are a fraction of a texel. A node is drawn only where its
//! parent's size passes the bottom of the blend below the threshold (`lod/cut.rs`),
//! and the threshold never falls below the view's pixel floor; so a block of nodes
//! whose parents are all smaller than that, for every instance, can be left out of
//! the dispatch. The bound is per block of [`REACH_BLOCK`] nodes: the largest parent
//! radius and a sphere around the parents' centres, from which the nearest any parent
//! can be to a camera (perspective) or its scale (orthographic) bounds every parent's
//! size. A block is only as small as its largest parent: a few large splats among a
//! block's 4,096 keep it (on the angel, leaf parents reach 2.5 units), so blocks fall
//! away only for clouds far below the floor.
//!
//! The floor, not the frame's threshold, decides: the feedback histograms then still
//! count every node any threshold the controller may pick would draw, so the budget's
//! control is unchanged (nodes below the floor on both sides cancel in its sums). What
//! the cut's "leaves in view" reports is then the leaves of the blocks it read.

use std::ops::Range;

use bevy::math::{Mat4, Vec3};

use crate::lod::cut::{blend_step, node_size};
use crate::render::passes::preprocess::CloudInstance;

/// Nodes per block of a chunk whose parents share one bound.
pub const REACH_BLOCK: u32 = 4096;

/// Sizes within this fraction of the floor's edge are kept: the GPU computes them in
/// its own rounding.
const MARGIN: f32 = 0.98;

/// The parents of one block of nodes, bounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParentBound {
    /// The centre of a sphere holding every parent's centre (cloud frame).
    centre: Vec3,
    /// That sphere's radius.
    spread: f32,
    /// The largest parent radius; infinite where a node has no parent (a root is
    /// always drawn) or a record is not finite.
    radius: f32,
}

impl ParentBound {
    /// The bounds of `parents` (each node's parent sphere: centre and radius, a
    /// negative radius for none), one per block of [`REACH_BLOCK`].
    pub fn of_blocks(parents: &[[f32; 4]]) -> Vec<Self> {
        parents
            .chunks(REACH_BLOCK as usize)
            .map(Self::of_block)
            .collect()
    }

    fn of_block(parents: &[[f32; 4]]) -> Self {
        let unbounded = Self {
            centre: Vec3::ZERO,
            spread: 0.0,
            radius: f32::INFINITY,
        };
        let mut low = Vec3::splat(f32::INFINITY);
        let mut high = Vec3::splat(f32::NEG_INFINITY);
        let mut radius = 0.0f32;
        for &[x, y, z, r] in parents {
            let centre = Vec3::new(x, y, z);
            // A negative radius (no parent), NaN or infinity: no bound.
            if !(r.is_finite() && r >= 0.0 && centre.is_finite()) {
                return unbounded;
            }
            low = low.min(centre);
            high = high.max(centre);
            radius = radius.max(r);
        }
        if parents.is_empty() {
            return unbounded;
        }
        let centre = (low + high) * 0.5;
        let spread = parents
            .iter()
            .map(|&[x, y, z, _]| Vec3::new(x, y, z).distance(centre))
            .fold(0.0f32, f32::max);
        Self {
            centre,
            spread: spread * (1.0 + 1e-5),
            radius,
        }
    }

    /// The largest size any of the block's parents can have for `instance` (the cut's
    /// rule, `lod/cut.rs`).
    fn largest_size(&self, instance: &CloudInstance, orthographic: bool) -> f32 {
        if !self.radius.is_finite() {
            return f32::INFINITY;
        }
        if orthographic {
            // The preprocess's scale: camera units per cloud unit, from the first axis.
            let scale = Mat4::from_cols_array_2d(&instance.cam_from_cloud)
                .x_axis
                .truncate()
                .length();
            return node_size(Vec3::ZERO, self.radius, Vec3::ZERO, Some(scale));
        }
        let camera = Vec3::from_slice(&instance.camera_in_cloud[..3]);
        let nearest = (self.centre.distance(camera) - self.spread).max(0.0);
        // A sphere of the largest radius whose centre is as near as any parent's.
        node_size(camera + Vec3::X * nearest, self.radius, camera, None)
    }
}

/// The cut a view draws with, as far as which nodes it can reach.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReachCut {
    /// The frame's threshold (0: the leaves alone, whole).
    pub threshold: f32,
    /// The view's pixel floor as a size (0: none).
    pub floor: f32,
    pub half_octaves: f32,
    pub orthographic: bool,
}

impl ReachCut {
    /// Whether a parent of `size` can make its children drawn under any threshold the
    /// view may use (no lower than its floor).
    fn reaches(&self, size: f32) -> bool {
        // NaN counts as neither.
        let positive = |x: f32| x.is_finite() && x > 0.0;
        if !positive(self.threshold) || !positive(self.floor) {
            return true;
        }
        let lowest = self.threshold.min(self.floor);
        blend_step(size / MARGIN, lowest, self.half_octaves) > 0.0
    }

    /// The runs of a chunk's `count` nodes, bounded block by block by `bounds`, that
    /// some instance's cut can draw.
    pub fn runs(
        &self,
        bounds: &[ParentBound],
        count: u32,
        instances: &[CloudInstance],
    ) -> Vec<Range<u32>> {
        let mut runs: Vec<Range<u32>> = Vec::new();
        for block in 0..count.div_ceil(REACH_BLOCK) {
            let reached = bounds.get(block as usize).is_none_or(|bound| {
                instances
                    .iter()
                    .any(|instance| self.reaches(bound.largest_size(instance, self.orthographic)))
            });
            if !reached {
                continue;
            }
            let start = block * REACH_BLOCK;
            let end = (start + REACH_BLOCK).min(count);
            match runs.last_mut() {
                Some(run) if run.end == start => run.end = end,
                _ => runs.push(start..end),
            }
        }
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance_at(camera: Vec3, scale: f32) -> CloudInstance {
        let cam_from_cloud = Mat4::from_scale(Vec3::splat(scale)) * Mat4::from_translation(-camera);
        CloudInstance {
            cam_from_cloud: cam_from_cloud.to_cols_array_2d(),
            camera_in_cloud: camera.extend(1.0).to_array(),
            ..bytemuck::Zeroable::zeroed()
        }
    }

    /// Blocks of small parents far away, then blocks of large ones.
    fn parents() -> Vec<[f32; 4]> {
        let small = (0..2 * REACH_BLOCK).map(|i| [i as f32 * 1e-4, 0.0, 0.0, 0.001]);
        let large = (0..REACH_BLOCK).map(|_| [0.0, 0.0, 0.0, 1.0]);
        small.chain(large).collect()
    }

    #[test]
    fn blocks_of_parents_below_the_floor_are_left_out() {
        let parents = parents();
        let bounds = ParentBound::of_blocks(&parents);
        let cut = ReachCut {
            threshold: 0.01,
            floor: 0.01,
            half_octaves: 0.5,
            orthographic: false,
        };
        let far = [instance_at(Vec3::new(0.0, 0.0, -50.0), 1.0)];
        let count = parents.len() as u32;
        assert_eq!(cut.runs(&bounds, count, &far), vec![2 * REACH_BLOCK..count]);
        // Every parent's own size agrees: the left-out ones are below the blend.
        for parent in &parents[..2 * REACH_BLOCK as usize] {
            let centre = Vec3::from_slice(&parent[..3]);
            let size = node_size(centre, parent[3], Vec3::new(0.0, 0.0, -50.0), None);
            assert_eq!(blend_step(size, 0.01, 0.5), 0.0);
        }
        // Near enough, every block is read; one near instance is enough.
        let near = [far[0], instance_at(Vec3::new(0.41, 0.0, -0.01), 1.0)];
        assert_eq!(cut.runs(&bounds, count, &near), vec![0..count]);
    }

    #[test]
    fn orthographic_views_bound_by_scale_and_roots_are_always_read() {
        let mut parents = parents();
        let bounds = ParentBound::of_blocks(&parents);
        let cut = ReachCut {
            threshold: 0.05,
            floor: 0.05,
            half_octaves: 0.0,
            orthographic: true,
        };
        let count = parents.len() as u32;
        let instances = [instance_at(Vec3::ZERO, 2.0)];
        assert_eq!(
            cut.runs(&bounds, count, &instances),
            vec![2 * REACH_BLOCK..count]
        );
        let larger = [instance_at(Vec3::ZERO, 50.0)];
        assert_eq!(cut.runs(&bounds, count, &larger), vec![0..count]);
        // A root in the first block keeps it.
        parents[7][3] = -1.0;
        let bounds = ParentBound::of_blocks(&parents);
        assert_eq!(
            cut.runs(&bounds, count, &instances),
            vec![0..REACH_BLOCK, 2 * REACH_BLOCK..count]
        );
    }

    #[test]
    fn without_a_floor_or_with_the_leaves_alone_everything_is_read() {
        let parents = parents();
        let bounds = ParentBound::of_blocks(&parents);
        let count = parents.len() as u32;
        let far = [instance_at(Vec3::new(0.0, 0.0, -50.0), 1.0)];
        for (threshold, floor) in [(0.01, 0.0), (0.0, 0.01), (f32::NAN, 0.01)] {
            let cut = ReachCut {
                threshold,
                floor,
                half_octaves: 0.5,
                orthographic: false,
            };
            assert_eq!(cut.runs(&bounds, count, &far), vec![0..count]);
        }
    }
}
