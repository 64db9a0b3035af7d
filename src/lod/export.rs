//! A level-of-detail tree as the nodes of a file: breadth first from the root, so that
//! every node's children are contiguous and come after it, the layout Spark's `.rad`
//! stores (`formats::rad::write`).

use super::tree::{NO_PARENT, SplatLodTree};
use crate::asset::{DecodedSplats, GaussianSplats};

impl SplatLodTree {
    /// Every node (leaves and interior) as a splat, root first and breadth first, with
    /// each node's `[first child, child count]` in that order. `None` when the tree
    /// has no single root (an empty cloud, or one too large to build).
    pub fn breadth_first(&self, splats: &GaussianSplats) -> Option<(DecodedSplats, Vec<[u32; 2]>)> {
        let leaves = self.leaves();
        if leaves != splats.len() || self.is_empty() {
            return None;
        }
        let mut roots = (0..self.len()).filter(|&n| self.parent(n) == NO_PARENT);
        let root = roots.next()?;
        if roots.next().is_some() {
            return None;
        }
        let stride = splats.sh_stride();
        let mut order = Vec::with_capacity(self.len());
        let mut children = Vec::with_capacity(self.len());
        order.push(root as u32);
        // Visiting in order: each node's children are appended as one run.
        let mut next = 0;
        while next < order.len() {
            let node = order[next] as usize;
            let kids = self.children(node);
            let first = order.len() as u32;
            order.extend_from_slice(kids);
            children.push([if kids.is_empty() { 0 } else { first }, kids.len() as u32]);
            next += 1;
        }
        let mut geometry = Vec::with_capacity(order.len());
        let mut sh = Vec::with_capacity(order.len() * stride);
        for &node in &order {
            let node = node as usize;
            if node < leaves {
                geometry.push(splats.geometry()[node]);
                sh.extend_from_slice(&splats.sh()[node * stride..(node + 1) * stride]);
            } else {
                let i = node - leaves;
                geometry.push(self.interior()[i]);
                sh.extend_from_slice(&self.interior_sh()[i * stride..(i + 1) * stride]);
            }
        }
        let nodes = DecodedSplats::from_parts(geometry, sh, splats.sh_degree(), false);
        Some((nodes, children))
    }
}
