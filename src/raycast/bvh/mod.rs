//! Bounding volume hierarchy over the splats' 3σ boxes, and the traversal
//! that hands splats to a caller in exact front-to-back order.
//!
//! - this module: [`SplatBvh`] (the tree, its nodes and its accessors) and the
//!   compositing order that the traversal and the brute-force reference share;
//! - `build`: construction, [`SplatBvh::build`] and [`SplatBvh::from_shapes`], a
//!   binned-SAH builder on an explicit task stack;
//! - `split`: what a split is made of (the build items, range summaries, binning,
//!   the SAH sweep over the bins, partitions);
//! - `traverse`: [`SplatBvh::visit_front_to_back`], the exact front-to-back walk.

mod build;
mod split;
mod traverse;

use std::cmp::Ordering;

use bevy::math::Vec3;

use super::gaussian::{Aabb, PreparedSplat};

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

impl SplatBvh {
    /// Most inputs a tree reads (2³¹ − 1). Hits report `u32` indices and a
    /// tree of n splats can need up to 2n − 1 nodes, also addressed by
    /// `u32`.
    pub const MAX_INPUT_LEN: usize = (u32::MAX / 2) as usize;

    /// Number of splats indexed (those that can contribute at all).
    #[must_use]
    pub fn len(&self) -> usize {
        self.splats.len()
    }

    /// Whether no splat is indexed.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn is_send_and_sync() {
        assert_send_sync::<SplatBvh>();
    }
}
