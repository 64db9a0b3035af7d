//! Traversal of a [`SplatBvh`]: [`SplatBvh::visit_front_to_back`], which opens nodes
//! nearest entry first and releases contributions in exact compositing order.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::ops::ControlFlow;

use super::{SplatBvh, compositing_order};
use crate::raycast::gaussian::{Contribution, Ray};

impl SplatBvh {
    /// Calls `visit` with (input index, contribution) for every splat that
    /// contributes to `ray`, in increasing depth and, at equal depth, in
    /// increasing input index, until `visit` breaks.
    ///
    /// The order is exact, not approximate: nodes are opened nearest entry
    /// first, contributions wait in a second heap, and one is released only
    /// once its depth is strictly less than the entry of every unopened
    /// node. That is safe because a contribution's depth is never before
    /// the ray's entry into the splat's own box (see
    /// [`PreparedSplat::contribution`](crate::raycast::PreparedSplat::contribution)),
    /// hence never before the entry into any node above it ([`Ray::span`] is
    /// monotone in the box).
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
