//! Construction of a [`SplatBvh`]: the splats prepared and boxed, then a binned
//! surface-area-heuristic build on an explicit task stack (the pieces of a split are
//! in `split`), and the tree's structure checked in the tests.

use bevy::math::{Quat, Vec3};

use super::split::{
    BIN_COUNT, Binning, BuildItem, RangeSummary, Split, best_binned_split, object_median_split,
    partition_into, split_at,
};
use super::{Node, SplatBvh};
use crate::raycast::gaussian::{Aabb, PreparedSplat, SplatShape};

/// Largest leaf the builder will make; bigger ranges are always split.
const MAX_LEAF_SIZE: usize = 8;

/// Ranges smaller than this always become leaves, without a binning pass.
const MIN_SPLIT_SIZE: usize = 5;

/// Surface-area-heuristic costs of one node visit and one splat evaluation.
/// A visit is a box test plus pushes and pops on the node heap, dearer than
/// a splat evaluation. On 1 M-splat volumes and shells, ratios from 1 to 4
/// gave cast speeds within measurement noise, while 3 made about 40 % fewer
/// nodes than 1 (bigger leaves) and built about 10 % faster.
const NODE_VISIT_COST: f32 = 3.0;
const SPLAT_EVAL_COST: f32 = 1.0;

/// Below this depth the binned SAH chooses splits; deeper ranges are split
/// at the object median. Pathological inputs (geometric progressions of
/// positions) can make SAH peel one cluster per level; the median bounds
/// the remaining depth by log2(n) and keeps the build O(n log n).
const MAX_SAH_DEPTH: u32 = 64;

#[derive(Clone, Copy, Debug)]
struct BuildTask {
    node: usize,
    start: usize,
    depth: u32,
    /// Whether the range currently lives in the spare buffer.
    in_spare: bool,
    summary: RangeSummary,
}

impl SplatBvh {
    /// Builds from parallel arrays. Arrays of different lengths are cut to
    /// the shortest. At most [`SplatBvh::MAX_INPUT_LEN`] inputs are read; the
    /// rest are ignored.
    #[must_use]
    pub fn build(centres: &[Vec3], scales: &[Vec3], rotations: &[Quat], opacities: &[f32]) -> Self {
        // `zip` stops at the shortest array.
        let shapes = centres
            .iter()
            .zip(scales)
            .zip(rotations)
            .zip(opacities)
            .map(|(((&centre, &scale), &rotation), &opacity)| SplatShape {
                centre,
                scale,
                rotation,
                opacity,
            });
        Self::from_shape_iter(shapes)
    }

    /// Builds from one slice of shapes; see [`SplatBvh::build`].
    #[must_use]
    pub fn from_shapes(shapes: &[SplatShape]) -> Self {
        Self::from_shape_iter(shapes.iter().copied())
    }

    fn from_shape_iter(shapes: impl Iterator<Item = SplatShape>) -> Self {
        let mut prepared: Vec<PreparedSplat> = Vec::with_capacity(shapes.size_hint().0);
        let mut sources = Vec::with_capacity(shapes.size_hint().0);
        for (index, shape) in (0..Self::MAX_INPUT_LEN as u32).zip(shapes) {
            if let Some(splat) = PreparedSplat::new(&shape) {
                prepared.push(splat);
                sources.push(index);
            }
        }
        let mut items: Vec<BuildItem> = (0u32..)
            .zip(&prepared)
            .map(|(index, splat)| BuildItem {
                bounds: splat.bounds(),
                prepared: index,
            })
            .collect();
        let nodes = build_nodes(&mut items);
        // A plain gather into new vectors: the loads are independent, so the
        // CPU overlaps their cache misses. (An in-place cycle walk saves the
        // copy but serialises the misses and measured 40% slower overall.)
        let splats = items
            .iter()
            .map(|item| prepared[item.prepared as usize])
            .collect();
        let source_indices = items
            .iter()
            .map(|item| sources[item.prepared as usize])
            .collect();
        Self {
            nodes,
            splats,
            source_indices,
        }
    }
}

/// Builds the tree over `items`, reordering them into leaf order. Uses an
/// explicit task stack, so no input can overflow the call stack.
///
/// Binned splits partition out of place, from one buffer into the other
/// (the range keeps its index span): a streaming copy is several times
/// faster than an in-place partition, whose reads wait on its own writes.
/// Each task records which buffer its range is in; leaves that end up in
/// the spare buffer are copied back.
fn build_nodes(items: &mut [BuildItem]) -> Vec<Node> {
    if items.is_empty() {
        return Vec::new();
    }
    let mut spare = items.to_vec();
    // Bin of each item of the range being split, written by the binning
    // pass so the partition pass need not recompute it.
    let mut bin_ids = vec![0u8; items.len()];
    // A first guess; trees come out at about 0.7 n nodes, and the one
    // regrowth (mremap for a buffer this size) measured no slower than
    // reserving more up front.
    let mut nodes = Vec::with_capacity(items.len() / 2 + 1);
    nodes.push(Node::PLACEHOLDER);
    let mut tasks = vec![BuildTask {
        node: 0,
        start: 0,
        depth: 0,
        in_spare: false,
        summary: RangeSummary::of(items),
    }];
    while let Some(task) = tasks.pop() {
        let span = task.start..task.start + task.summary.count as usize;
        let (current, other) = if task.in_spare {
            (&mut spare[span.clone()], &mut items[span.clone()])
        } else {
            (&mut items[span.clone()], &mut spare[span.clone()])
        };
        let bounds = Aabb::from(task.summary.bounds);
        let bin_ids = &mut bin_ids[span.clone()];
        nodes[task.node] = match choose_split(current, other, bin_ids, &task.summary, task.depth) {
            None => {
                if task.in_spare {
                    other.copy_from_slice(current);
                }
                Node {
                    bounds,
                    first: task.start as u32,
                    count: task.summary.count,
                }
            }
            Some((split, moved)) => {
                let left = nodes.len();
                nodes.push(Node::PLACEHOLDER);
                nodes.push(Node::PLACEHOLDER);
                let in_spare = task.in_spare != moved;
                tasks.push(BuildTask {
                    node: left + 1,
                    start: task.start + split.left.count as usize,
                    depth: task.depth + 1,
                    in_spare,
                    summary: split.right,
                });
                tasks.push(BuildTask {
                    node: left,
                    start: task.start,
                    depth: task.depth + 1,
                    in_spare,
                    summary: split.left,
                });
                Node {
                    bounds,
                    first: left as u32,
                    count: 0,
                }
            }
        };
    }
    nodes
}

/// Decides whether `items` becomes a leaf (`None`) or is split. A split
/// leaves both parts non-empty and either partitions `items` in place
/// (`false`) or writes the partitioned range into `other` (`true`).
fn choose_split(
    items: &mut [BuildItem],
    other: &mut [BuildItem],
    bin_ids: &mut [u8],
    summary: &RangeSummary,
    depth: u32,
) -> Option<(Split, bool)> {
    let count = items.len();
    if count < MIN_SPLIT_SIZE {
        return None;
    }
    let may_be_leaf = count <= MAX_LEAF_SIZE;
    let in_place = |split: Split| (split, false);
    let extent = Vec3::from(summary.centroids.max - summary.centroids.min);
    let axis = extent.max_position();
    if extent[axis] <= 0.0 {
        // All centroids coincide (e.g. many splats at one point): no plane
        // separates them, so only splitting by position in the range works.
        return (!may_be_leaf).then(|| in_place(split_at(items, count / 2)));
    }
    if depth >= MAX_SAH_DEPTH {
        return (!may_be_leaf).then(|| in_place(object_median_split(items, axis)));
    }
    let bins_per_unit = BIN_COUNT as f32 / extent[axis];
    if !bins_per_unit.is_finite() {
        // Extent at the very bottom of the f32 range.
        return (!may_be_leaf).then(|| in_place(object_median_split(items, axis)));
    }
    let binning = Binning {
        axis,
        origin: summary.centroids.min[axis],
        bins_per_unit,
    };
    let Some((first_right_bin, split)) = best_binned_split(items, bin_ids, &binning) else {
        // Every centroid fell into one bin (extent at the rounding limit).
        return (!may_be_leaf).then(|| in_place(object_median_split(items, axis)));
    };
    let node_area = summary.bounds.half_area();
    if may_be_leaf && node_area > 0.0 && node_area.is_finite() {
        let leaf_cost = SPLAT_EVAL_COST * count as f32;
        let split_cost = NODE_VISIT_COST
            + SPLAT_EVAL_COST * (split.left.sah_weight() + split.right.sah_weight()) / node_area;
        if leaf_cost <= split_cost {
            return None;
        }
    }
    let left_count = partition_into(items, bin_ids, other, first_right_bin);
    if left_count != split.left.count as usize {
        // Cannot happen (the partition reads the bins the counts came
        // from), but a split whose summaries disagreed with its items would
        // corrupt the tree. `items` is untouched, so splitting it works.
        return (!may_be_leaf).then(|| in_place(split_at(items, count / 2)));
    }
    Some((split, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point_cloud(centres: &[Vec3]) -> SplatBvh {
        let shapes: Vec<SplatShape> = centres
            .iter()
            .map(|&centre| SplatShape {
                centre,
                scale: Vec3::splat(0.1),
                rotation: Quat::IDENTITY,
                opacity: 0.5,
            })
            .collect();
        SplatBvh::from_shapes(&shapes)
    }

    /// Every splat sits in exactly one leaf, every leaf is within the size
    /// limit, and every node's box holds its children's boxes.
    fn check_structure(bvh: &SplatBvh) {
        let mut seen = vec![false; bvh.splats.len()];
        let mut stack = vec![0usize];
        while let Some(index) = stack.pop() {
            let node = bvh.nodes[index];
            if node.count == 0 {
                for child in [node.first as usize, node.first as usize + 1] {
                    let inner = bvh.nodes[child].bounds;
                    assert!(node.bounds.min.cmple(inner.min).all());
                    assert!(node.bounds.max.cmpge(inner.max).all());
                    stack.push(child);
                }
            } else {
                assert!(node.count as usize <= MAX_LEAF_SIZE);
                let leaf = node.first as usize..(node.first + node.count) as usize;
                for (seen, splat) in seen[leaf.clone()].iter_mut().zip(&bvh.splats[leaf]) {
                    assert!(!*seen, "splat in two leaves");
                    *seen = true;
                    let inner = splat.bounds();
                    assert!(node.bounds.min.cmple(inner.min).all());
                    assert!(node.bounds.max.cmpge(inner.max).all());
                }
            }
        }
        assert!(seen.iter().all(|&s| s), "splat not in any leaf");
    }

    #[test]
    fn structure_of_a_grid() {
        let centres: Vec<Vec3> = (0..1000)
            .map(|i| Vec3::new((i % 10) as f32, (i / 10 % 10) as f32, (i / 100) as f32))
            .collect();
        let bvh = point_cloud(&centres);
        assert_eq!(bvh.len(), 1000);
        check_structure(&bvh);
        let (min, max) = bvh.bounds().expect("non-empty");
        assert!((min - Vec3::splat(-0.3)).abs().max_element() < 1e-6);
        assert!((max - Vec3::splat(9.3)).abs().max_element() < 1e-5);
    }

    #[test]
    fn structure_of_coincident_and_geometric_clouds() {
        let coincident = point_cloud(&vec![Vec3::splat(1.0); 5000]);
        check_structure(&coincident);
        // Positions growing geometrically: the case that makes SAH peel a
        // few splats per level.
        let geometric: Vec<Vec3> = (0..2000)
            .map(|i| Vec3::new(1.05f32.powi(i % 1000), (i / 1000) as f32, 0.0))
            .collect();
        let bvh = point_cloud(&geometric);
        check_structure(&bvh);
    }

    #[test]
    fn empty_and_all_invalid() {
        let empty = SplatBvh::from_shapes(&[]);
        assert!(empty.is_empty());
        assert_eq!(empty.bounds(), None);
        let invalid = SplatBvh::build(
            &[Vec3::ZERO, Vec3::NAN],
            &[Vec3::ZERO, Vec3::ONE],
            &[Quat::IDENTITY, Quat::IDENTITY],
            &[0.5, 0.5],
        );
        assert!(invalid.is_empty());
        assert_eq!(invalid.node_count(), 0);
    }

    #[test]
    fn mismatched_lengths_use_the_shortest() {
        let bvh = SplatBvh::build(
            &[Vec3::ZERO, Vec3::X, Vec3::Y],
            &[Vec3::ONE; 2],
            &[Quat::IDENTITY; 3],
            &[0.5; 3],
        );
        assert_eq!(bvh.len(), 2);
        let mut sources: Vec<u32> = bvh.source_indices.clone();
        sources.sort_unstable();
        assert_eq!(sources, [0, 1]);
    }
}
