//! A level-of-detail tree as the nodes of a file: every node's children contiguous and
//! after it, the layout Spark's `.rad` stores (`formats::rad::write`). Breadth first
//! from the root, or in chunks that each hold one region's detail, so that a reader
//! streaming the file a chunk at a time fetches the part of the scene it looks at.

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
        Some(self.nodes_in(splats, &order, children))
    }

    /// Every node as a splat, as [`breadth_first`](Self::breadth_first) lays them out,
    /// but filled `chunk_nodes` at a time so that each chunk after the first holds the
    /// children of nodes near each other: a chunk places the children of the nodes its
    /// predecessor left unexpanded, in order, then theirs, until it is full; what it
    /// leaves unexpanded is continued next (depth first over regions), and the rest of
    /// what it started from after that. A node's children may straddle two chunks.
    pub fn in_chunks(
        &self,
        splats: &GaussianSplats,
        chunk_nodes: usize,
    ) -> Option<(DecodedSplats, Vec<[u32; 2]>)> {
        let leaves = self.leaves();
        if leaves != splats.len() || self.is_empty() || chunk_nodes == 0 {
            return None;
        }
        let mut roots = (0..self.len()).filter(|&n| self.parent(n) == NO_PARENT);
        let root = roots.next()?;
        if roots.next().is_some() {
            return None;
        }
        let mut order = vec![root as u32];
        let mut children = vec![[0u32, 0u32]];
        let mut groups = vec![std::collections::VecDeque::from([0usize])];
        while let Some(mut seeds) = groups.pop() {
            let limit = (order.len() / chunk_nodes + 1) * chunk_nodes;
            let mut found = std::collections::VecDeque::new();
            while order.len() < limit {
                let Some(at) = seeds.pop_front().or_else(|| found.pop_front()) else {
                    break;
                };
                let kids = self.children(order[at] as usize);
                let first = order.len();
                children[at] = [first as u32, kids.len() as u32];
                for &kid in kids {
                    if !self.children(kid as usize).is_empty() {
                        found.push_back(order.len());
                    }
                    order.push(kid);
                    children.push([0, 0]);
                }
            }
            if !seeds.is_empty() {
                groups.push(seeds);
            }
            if !found.is_empty() {
                groups.push(found);
            }
        }
        Some(self.nodes_in(splats, &order, children))
    }

    /// The nodes `order` names as splats, with their child ranges.
    fn nodes_in(
        &self,
        splats: &GaussianSplats,
        order: &[u32],
        children: Vec<[u32; 2]>,
    ) -> (DecodedSplats, Vec<[u32; 2]>) {
        let leaves = self.leaves();
        let stride = splats.sh_stride();
        let mut geometry = Vec::with_capacity(order.len());
        let mut sh = Vec::with_capacity(order.len() * stride);
        for &node in order {
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
        (nodes, children)
    }
}
