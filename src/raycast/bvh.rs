//! Bounding volume hierarchy over the splats' 3σ boxes, and the traversal
//! that hands splats to a caller in exact front-to-back order.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::ops::ControlFlow;

use bevy::math::{Quat, Vec3, Vec3A};

use super::gaussian::{Aabb, Contribution, PreparedSplat, Ray, SplatShape};

/// Candidate split positions along the chosen axis. Beyond about a dozen
/// the tree barely improves while the binning pass keeps getting slower.
const BIN_COUNT: usize = 12;
/// Index of the last bin, as the float that bin positions are clamped to.
const LAST_BIN: f32 = (BIN_COUNT - 1) as f32;

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

#[derive(Clone, Copy, Debug, PartialEq)]
struct Node {
    bounds: Aabb,
    /// Interior: index of the left child (the right one follows it).
    /// Leaf: first splat of the leaf's range in `SplatBvh::splats`.
    first: u32,
    /// Number of splats in a leaf; 0 marks an interior node.
    count: u32,
}

impl Node {
    const PLACEHOLDER: Self = Self {
        bounds: Aabb::EMPTY,
        first: 0,
        count: 0,
    };
}

/// A BVH over a splat cloud, with the per-splat data a ray cast needs.
///
/// Splats that can never contribute (see [`PreparedSplat::new`]) are left
/// out. Hits report the splat's index in the input that built the tree.
#[derive(Clone, Debug, Default)]
pub struct SplatBvh {
    nodes: Vec<Node>,
    /// Prepared splats, permuted so that every leaf's splats are contiguous.
    splats: Vec<PreparedSplat>,
    /// For each entry of `splats`, its index in the builder's input.
    source_indices: Vec<u32>,
}

/// One splat during the build. The partitioning moves these (not indices),
/// so every pass over a range reads memory sequentially.
#[derive(Clone, Copy, Debug)]
struct BuildItem {
    bounds: Aabb,
    /// Index into the prepared (input-order) splats.
    prepared: u32,
}

impl BuildItem {
    fn centroid(&self) -> Vec3 {
        self.bounds.centroid()
    }
}

/// A box in SIMD registers. The builder spends most of its time taking
/// unions; `Vec3A` does each in two instructions where `Vec3`'s NaN-aware
/// scalar min/max take many. The values are the same floats either way.
#[derive(Clone, Copy, Debug)]
struct SimdBox {
    min: Vec3A,
    max: Vec3A,
}

impl SimdBox {
    const EMPTY: Self = Self {
        min: Vec3A::INFINITY,
        max: Vec3A::NEG_INFINITY,
    };

    fn grow(self, min: Vec3A, max: Vec3A) -> Self {
        Self {
            min: self.min.min(min),
            max: self.max.max(max),
        }
    }

    fn union(self, other: Self) -> Self {
        self.grow(other.min, other.max)
    }

    fn half_area(&self) -> f32 {
        Aabb::from(*self).half_area()
    }
}

impl From<SimdBox> for Aabb {
    fn from(simd: SimdBox) -> Self {
        Self {
            min: simd.min.into(),
            max: simd.max.into(),
        }
    }
}

/// What the builder needs to know about a range of items: the union of their
/// boxes (the node box) and the box of their centroids (the binning domain).
/// Unions are exact and order-independent, so a range's summary can be
/// assembled from its bins' summaries instead of another pass.
#[derive(Clone, Copy, Debug)]
struct RangeSummary {
    bounds: SimdBox,
    centroids: SimdBox,
    count: u32,
}

impl RangeSummary {
    const EMPTY: Self = Self {
        bounds: SimdBox::EMPTY,
        centroids: SimdBox::EMPTY,
        count: 0,
    };

    fn of(items: &[BuildItem]) -> Self {
        items
            .iter()
            .fold(Self::EMPTY, |summary, item| summary.with(item))
    }

    fn with(self, item: &BuildItem) -> Self {
        let min = Vec3A::from(item.bounds.min);
        let max = Vec3A::from(item.bounds.max);
        let centroid = (min + max) * 0.5;
        Self {
            bounds: self.bounds.grow(min, max),
            centroids: self.centroids.grow(centroid, centroid),
            count: self.count + 1,
        }
    }

    fn union(self, other: Self) -> Self {
        Self {
            bounds: self.bounds.union(other.bounds),
            centroids: self.centroids.union(other.centroids),
            count: self.count + other.count,
        }
    }

    /// SAH weight of this range as a child: its area times its splat count.
    fn sah_weight(&self) -> f32 {
        self.bounds.half_area() * self.count as f32
    }
}

#[derive(Clone, Copy, Debug)]
struct BuildTask {
    node: usize,
    start: usize,
    depth: u32,
    /// Whether the range currently lives in the spare buffer.
    in_spare: bool,
    summary: RangeSummary,
}

/// How a range is divided: the first `left.count` items (after
/// partitioning) go left.
#[derive(Clone, Copy, Debug)]
struct Split {
    left: RangeSummary,
    right: RangeSummary,
}

/// Maps a centroid coordinate along `axis` to one of `BIN_COUNT` equal bins
/// spanning the range's centroid box.
#[derive(Clone, Copy, Debug)]
struct Binning {
    axis: usize,
    origin: f32,
    bins_per_unit: f32,
}

impl Binning {
    fn bin_of(&self, item: &BuildItem) -> usize {
        let coordinate = (item.bounds.min[self.axis] + item.bounds.max[self.axis]) * 0.5;
        // Clamped in float first: rounding can put the low end slightly
        // below 0 and the far end lands on BIN_COUNT itself.
        let position = ((coordinate - self.origin) * self.bins_per_unit).clamp(0.0, LAST_BIN);
        position as usize
    }
}

impl SplatBvh {
    /// Most inputs a tree reads (2³¹ − 1). Hits report `u32` indices and a
    /// tree of n splats can need up to 2n − 1 nodes, also addressed by
    /// `u32`.
    pub const MAX_INPUT_LEN: usize = (u32::MAX / 2) as usize;

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

    /// Number of splats indexed (those that can contribute at all).
    #[must_use]
    pub fn len(&self) -> usize {
        self.splats.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.splats.is_empty()
    }

    /// Union of all indexed splats' 3σ boxes, as `(min, max)`.
    #[must_use]
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        self.nodes
            .first()
            .map(|root| (root.bounds.min, root.bounds.max))
    }

    /// Number of tree nodes; for statistics.
    #[must_use]
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Every indexed splat with its input index, in no particular order.
    pub(crate) fn splats_with_sources(&self) -> impl Iterator<Item = (&PreparedSplat, u32)> {
        self.splats.iter().zip(self.source_indices.iter().copied())
    }

    /// Calls `visit` with (input index, contribution) for every splat that
    /// contributes to `ray`, in increasing depth and, at equal depth, in
    /// increasing input index, until `visit` breaks.
    ///
    /// The order is exact, not approximate: nodes are opened nearest entry
    /// first, contributions wait in a second heap, and one is released only
    /// once its depth is strictly less than the entry of every unopened
    /// node. That is safe because a contribution's depth is never before
    /// the ray's entry into the splat's own box (see
    /// [`PreparedSplat::contribution`]), hence never before the entry into
    /// any node above it ([`Ray::span`] is monotone in the box).
    ///
    /// The cost follows from the exactness: every splat whose box the ray
    /// enters before the answer's depth gets evaluated. In ordinary scenes
    /// that is the neighbourhood of the hit; in a cloud where everything
    /// overlaps (all splats at one point) it is all of them.
    pub fn visit_front_to_back(
        &self,
        ray: &Ray,
        mut visit: impl FnMut(u32, Contribution) -> ControlFlow<()>,
    ) {
        let mut unopened: BinaryHeap<Reverse<OpenNode>> = BinaryHeap::with_capacity(64);
        let mut pending: BinaryHeap<Reverse<PendingSplat>> = BinaryHeap::with_capacity(64);
        if let Some(root) = self.nodes.first()
            && let Some((entry, _)) = ray.span(&root.bounds)
        {
            unopened.push(Reverse(OpenNode { entry, node: 0 }));
        }
        loop {
            if let Some(Reverse(next)) = pending.peek() {
                let released = unopened
                    .peek()
                    .is_none_or(|Reverse(node)| next.depth < node.entry);
                if released {
                    let next = *next;
                    pending.pop();
                    if visit(next.source_index, next.contribution).is_break() {
                        return;
                    }
                    continue;
                }
            }
            let Some(Reverse(open)) = unopened.pop() else {
                return;
            };
            let node = &self.nodes[open.node as usize];
            let first = node.first as usize;
            if node.count == 0 {
                for child in [first, first + 1] {
                    if let Some((entry, _)) = ray.span(&self.nodes[child].bounds) {
                        unopened.push(Reverse(OpenNode {
                            entry,
                            node: child as u32,
                        }));
                    }
                }
            } else {
                let leaf = first..first + node.count as usize;
                for (splat, &source_index) in self.splats[leaf.clone()]
                    .iter()
                    .zip(&self.source_indices[leaf])
                {
                    if let Some(contribution) = splat.contribution(ray) {
                        pending.push(Reverse(PendingSplat {
                            depth: contribution.t,
                            source_index,
                            contribution,
                        }));
                    }
                }
            }
        }
    }
}

/// A node whose box the ray enters at `entry`, not yet opened.
#[derive(Clone, Copy, Debug)]
struct OpenNode {
    entry: f32,
    node: u32,
}

impl Ord for OpenNode {
    fn cmp(&self, other: &Self) -> Ordering {
        self.entry
            .total_cmp(&other.entry)
            .then(self.node.cmp(&other.node))
    }
}

impl PartialOrd for OpenNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for OpenNode {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for OpenNode {}

/// A contribution waiting until no unopened node can hold a nearer one.
#[derive(Clone, Copy, Debug)]
struct PendingSplat {
    depth: f32,
    source_index: u32,
    contribution: Contribution,
}

/// The compositing order shared with the brute-force reference: depth, then
/// input index so that equal depths resolve identically on both paths.
pub(crate) fn compositing_order(
    depth_a: f32,
    index_a: u32,
    depth_b: f32,
    index_b: u32,
) -> Ordering {
    depth_a.total_cmp(&depth_b).then(index_a.cmp(&index_b))
}

impl Ord for PendingSplat {
    fn cmp(&self, other: &Self) -> Ordering {
        compositing_order(
            self.depth,
            self.source_index,
            other.depth,
            other.source_index,
        )
    }
}

impl PartialOrd for PendingSplat {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PendingSplat {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PendingSplat {}

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

/// Bins `items` by centroid and returns the cheapest SAH split between
/// bins, as (first bin of the right side, split); `None` when all items
/// land in one bin.
fn best_binned_split(
    items: &[BuildItem],
    bin_ids: &mut [u8],
    binning: &Binning,
) -> Option<(usize, Split)> {
    let mut bins = [RangeSummary::EMPTY; BIN_COUNT];
    for (item, bin_id) in items.iter().zip(bin_ids.iter_mut()) {
        let index = binning.bin_of(item);
        *bin_id = index as u8;
        bins[index] = bins[index].with(item);
    }
    // Suffix sweep: what lies right of each boundary.
    let mut right_of = [RangeSummary::EMPTY; BIN_COUNT];
    let mut right = RangeSummary::EMPTY;
    for boundary in (1..BIN_COUNT).rev() {
        right = right.union(bins[boundary]);
        right_of[boundary] = right;
    }
    let mut left = RangeSummary::EMPTY;
    let mut best: Option<(f32, usize, Split)> = None;
    for boundary in 1..BIN_COUNT {
        left = left.union(bins[boundary - 1]);
        let right = right_of[boundary];
        if left.count == 0 || right.count == 0 {
            continue;
        }
        let cost = left.sah_weight() + right.sah_weight();
        if best.is_none_or(|(best_cost, _, _)| cost < best_cost) {
            best = Some((cost, boundary, Split { left, right }));
        }
    }
    best.map(|(_, boundary, split)| (boundary, split))
}

/// Splits at position `middle` of the range as it stands.
fn split_at(items: &[BuildItem], middle: usize) -> Split {
    let (left, right) = items.split_at(middle);
    Split {
        left: RangeSummary::of(left),
        right: RangeSummary::of(right),
    }
}

/// Splits at the median centroid along `axis`; always gives two non-empty
/// halves.
fn object_median_split(items: &mut [BuildItem], axis: usize) -> Split {
    let middle = items.len() / 2;
    items.select_nth_unstable_by(middle, |a, b| {
        a.centroid()[axis].total_cmp(&b.centroid()[axis])
    });
    split_at(items, middle)
}

/// Copies `items` into `target` (same length), those whose bin is below
/// `first_right_bin` to the front and the rest to the back; returns how
/// many went to the front.
///
/// Branch-free, since near the root which side an item goes to is close to
/// a coin flip: each item is written at both open ends and only the
/// matching end advances. The other write lands in the unfilled middle,
/// which later writes fill; when the ends meet every slot has received its
/// final item.
fn partition_into(
    items: &[BuildItem],
    bin_ids: &[u8],
    target: &mut [BuildItem],
    first_right_bin: usize,
) -> usize {
    let (mut front, mut back) = (0, target.len());
    for (item, &bin_id) in items.iter().zip(bin_ids) {
        let goes_left = usize::from(bin_id) < first_right_bin;
        target[front] = *item;
        target[back - 1] = *item;
        front += usize::from(goes_left);
        back -= usize::from(!goes_left);
    }
    front
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn is_send_and_sync() {
        assert_send_sync::<SplatBvh>();
    }

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
    fn partition_into_separates_and_keeps_every_item() {
        let items: Vec<BuildItem> = (0..50u32)
            .map(|k| BuildItem {
                bounds: Aabb::EMPTY,
                prepared: k,
            })
            .collect();
        for modulus in [1u32, 2, 3, 7, 51] {
            // Bin 0 goes left, bin 1 right.
            let bin_ids: Vec<u8> = items
                .iter()
                .map(|item| u8::from(!item.prepared.is_multiple_of(modulus)))
                .collect();
            let mut target = items.clone();
            let front = partition_into(&items, &bin_ids, &mut target, 1);
            let goes_left = |item: &BuildItem| item.prepared.is_multiple_of(modulus);
            assert!(target[..front].iter().all(goes_left));
            assert!(!target[front..].iter().any(goes_left));
            let mut seen: Vec<u32> = target.iter().map(|item| item.prepared).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..50).collect::<Vec<_>>());
        }
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
