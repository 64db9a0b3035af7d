//! Building a cloud's level-of-detail tree: an octree over the splats' centres, its
//! interior nodes moment-matched merges of their children.
//!
//! The leaves are put in Morton order of their centres (21 bits an axis in the
//! cloud's bounds); level by level, the nodes that share a cell of the next coarser
//! grid (the code shifted by three more bits) become one parent. A node alone in its
//! cell is carried up as it is, so every interior node has at least two children and
//! there are fewer interior nodes than leaves. Time is a sort and 21 linear passes:
//! O(n log n), well under a second per million splats on one core (BENCHMARKS.md).

use bevy::math::DVec3;

use super::moments::Moments;
use crate::asset::{DecodedTree, GaussianSplats, SplatGeometry};

/// No parent: a root of the tree.
pub const NO_PARENT: u32 = u32::MAX;

/// Bits of a Morton code per axis.
const MORTON_BITS: u32 = 21;

/// A cloud's level-of-detail tree. Nodes `0..leaves` are the cloud's splats, in the
/// asset's order; nodes from `leaves` on are the interior nodes, children before their
/// parents, each a splat of its own ([`SplatLodTree::interior`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SplatLodTree {
    leaves: u32,
    /// Per node: its parent, or [`NO_PARENT`].
    parents: Vec<u32>,
    /// Per node: the radius of a sphere about its centre holding its 3σ ellipsoid and
    /// every descendant's (its size on screen is this over its distance).
    radii: Vec<f32>,
    /// Per interior node: its children's range in `children`.
    child_ranges: Vec<[u32; 2]>,
    children: Vec<u32>,
    /// The interior nodes as splats, and their SH coefficients (the asset's stride).
    interior: Vec<SplatGeometry>,
    interior_sh: Vec<f32>,
}

impl SplatLodTree {
    /// The tree of `splats`. Splats the renderer culls (zero quaternions, non-finite
    /// values) are leaves that weigh nothing in their parents.
    pub fn build(splats: &GaussianSplats) -> Self {
        let geometry = splats.geometry();
        let stride = splats.sh_stride();
        let sh = splats.sh();
        let leaves = geometry.len();
        let Ok(leaf_count) = u32::try_from(leaves) else {
            // More splats than a u32 counts: no GPU buffer holds them either.
            return Self::default();
        };
        // Interior nodes are fewer than the leaves: room for all, no reallocation.
        let mut moments: Vec<Moments> = Vec::with_capacity(2 * leaves);
        moments.extend(geometry.iter().map(Moments::of_splat));
        let mut colours: Vec<f32> = Vec::new();
        let mut tree = Self {
            leaves: leaf_count,
            parents: vec![NO_PARENT; leaves],
            radii: moments.iter().map(|m| m.radius() as f32).collect(),
            ..Self::default()
        };

        // (code, node) in Morton order of the leaves' centres.
        let codes = morton_codes(&moments);
        let mut level: Vec<(u64, u32)> = codes.into_iter().zip(0..leaf_count).collect();
        level.sort_unstable();

        let mut next = Vec::with_capacity(level.len());
        for _ in 0..MORTON_BITS {
            next.clear();
            let mut start = 0;
            while start < level.len() {
                let cell = level[start].0 >> 3;
                let mut end = start + 1;
                while end < level.len() && level[end].0 >> 3 == cell {
                    end += 1;
                }
                let group = &level[start..end];
                start = end;
                if group.len() == 1 {
                    next.push((cell, group[0].1));
                    continue;
                }
                let node = leaf_count as usize + tree.interior.len();
                let Ok(node_id) = u32::try_from(node) else {
                    next.extend(group.iter().map(|&(_, n)| (cell, n)));
                    continue;
                };
                let members = group.iter().map(|&(_, n)| &moments[n as usize]);
                let merged = Moments::merge(members.clone()).unwrap_or_else(|| {
                    // Nothing visible below: a weightless node where its children are.
                    let mean = members.map(|m| m.mean).sum::<DVec3>() / group.len() as f64;
                    Moments::weightless(mean)
                });
                // The colour: every SH coefficient, weighted as the moments are.
                let first_colour = colours.len();
                colours.resize(first_colour + stride, 0.0);
                if merged.weight > 0.0 {
                    // Children's colours all come before this node's.
                    let (merged_so_far, colour) = colours.split_at_mut(first_colour);
                    for &(_, child) in group {
                        let weight = (moments[child as usize].weight / merged.weight) as f32;
                        let child_colour =
                            node_colour(child, leaf_count, stride, sh, merged_so_far);
                        for (sum, value) in colour.iter_mut().zip(child_colour) {
                            *sum += weight * value;
                        }
                    }
                }
                let first_child = tree.children.len() as u32;
                for &(_, child) in group {
                    tree.parents[child as usize] = node_id;
                    tree.children.push(child);
                }
                tree.child_ranges
                    .push([first_child, tree.children.len() as u32]);
                // The node's sphere holds its children's: every descendant lies in it.
                let reach = group
                    .iter()
                    .map(|&(_, c)| {
                        let child = &moments[c as usize];
                        (child.mean - merged.mean).length() + f64::from(tree.radii[c as usize])
                    })
                    .fold(merged.radius(), f64::max);
                tree.parents.push(NO_PARENT);
                tree.radii.push(reach as f32);
                tree.interior.push(merged.to_splat());
                moments.push(merged);
                next.push((cell, node_id));
            }
            std::mem::swap(&mut level, &mut next);
            if level.len() == 1 {
                break;
            }
        }
        tree.interior_sh = colours;
        tree
    }

    /// The tree a file brought over `splats` ([`GaussianSplats::file_tree`]), with
    /// parents and radii worked out here; `None` when it does not fit the cloud (its
    /// SH stride, ids out of range, a node with two parents or after its parent, or
    /// more than one root).
    pub fn from_file(file: &DecodedTree, splats: &GaussianSplats) -> Option<Self> {
        let leaves = splats.len();
        let stride = splats.sh_stride();
        let interior = file.interior.len();
        let total = leaves.checked_add(interior)?;
        if file.child_ranges.len() != interior
            || file.interior_sh.len() != interior.checked_mul(stride)?
            || u32::try_from(total).is_err()
        {
            return None;
        }
        let geometry = |node: usize| match node.checked_sub(leaves) {
            None => &splats.geometry()[node],
            Some(i) => &file.interior[i],
        };
        let moments: Vec<Moments> = (0..total).map(|n| Moments::of_splat(geometry(n))).collect();
        let mut parents = vec![NO_PARENT; total];
        let mut radii: Vec<f32> = moments.iter().map(|m| m.radius() as f32).collect();
        for (i, &[start, end]) in file.child_ranges.iter().enumerate() {
            let node = leaves + i;
            let kids = file.children.get(start as usize..end as usize)?;
            let mut reach = f64::from(radii[node]);
            for &child in kids {
                let child = child as usize;
                // Children come before their parent, each with one parent.
                if child >= node || parents[child] != NO_PARENT {
                    return None;
                }
                parents[child] = node as u32;
                let distance = (moments[child].mean - moments[node].mean).length();
                reach = reach.max(distance + f64::from(radii[child]));
            }
            radii[node] = reach as f32;
        }
        if parents.iter().filter(|&&p| p == NO_PARENT).count() != 1 {
            return None;
        }
        Some(Self {
            leaves: leaves as u32,
            parents,
            radii,
            child_ranges: file.child_ranges.clone(),
            children: file.children.clone(),
            interior: file.interior.clone(),
            interior_sh: file.interior_sh.clone(),
        })
    }

    /// Splats of the cloud (the leaves).
    pub fn leaves(&self) -> usize {
        self.leaves as usize
    }

    /// The interior nodes as splats, in the asset's layout: node `leaves() + i` is
    /// `interior()[i]`.
    pub fn interior(&self) -> &[SplatGeometry] {
        &self.interior
    }

    /// The interior nodes' SH coefficients, with the asset's stride.
    pub fn interior_sh(&self) -> &[f32] {
        &self.interior_sh
    }

    /// Node `node`'s parent, or [`NO_PARENT`] for a root (or a node out of range).
    pub fn parent(&self, node: usize) -> u32 {
        self.parents.get(node).copied().unwrap_or(NO_PARENT)
    }

    /// Node `node`'s radius: a sphere about its centre holding its 3σ ellipsoid and
    /// its descendants'; 0 out of range.
    pub fn radius(&self, node: usize) -> f32 {
        self.radii.get(node).copied().unwrap_or(0.0)
    }

    /// The children of interior node `node` (a node id ≥ `leaves()`); none for a leaf.
    pub fn children(&self, node: usize) -> &[u32] {
        node.checked_sub(self.leaves as usize)
            .and_then(|i| self.child_ranges.get(i))
            .and_then(|&[start, end]| self.children.get(start as usize..end as usize))
            .unwrap_or(&[])
    }

    /// Every node, leaves and interior.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// Whether the tree has no node.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// Bytes the tree holds beside the leaves themselves.
    pub fn heap_bytes(&self) -> usize {
        self.parents.len() * 4
            + self.radii.len() * 4
            + self.child_ranges.len() * 8
            + self.children.len() * 4
            + self.interior.len() * size_of::<SplatGeometry>()
            + self.interior_sh.len() * 4
    }
}

/// Node `node`'s SH coefficients: a leaf's from the asset, an interior node's from
/// those merged so far.
fn node_colour<'a>(
    node: u32,
    leaves: u32,
    stride: usize,
    sh: &'a [f32],
    interior: &'a [f32],
) -> &'a [f32] {
    let (source, index) = match node.checked_sub(leaves) {
        Some(i) => (interior, i as usize),
        None => (sh, node as usize),
    };
    source
        .get(index * stride..(index + 1) * stride)
        .unwrap_or(&[])
}

/// Each splat's Morton code: its centre quantised to 2^21 steps an axis across the
/// bounds of the finite centres, the bits interleaved (x lowest).
fn morton_codes(moments: &[Moments]) -> Vec<u64> {
    let (low, high) = moments
        .iter()
        .map(|m| m.mean)
        .filter(|p| p.is_finite())
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p), hi.max(p))
        });
    let extent = (high - low).max(DVec3::splat(f64::MIN_POSITIVE));
    let steps = f64::from((1u32 << MORTON_BITS) - 1);
    moments
        .iter()
        .map(|m| {
            let unit = ((m.mean - low) / extent).clamp(DVec3::ZERO, DVec3::ONE);
            // A non-finite centre lands in the first cell (clamp keeps NaN as NaN; the
            // cast takes it to 0).
            let q = (unit * steps).to_array().map(|v| v as u32 as u64);
            spread(q[0]) | spread(q[1]) << 1 | spread(q[2]) << 2
        })
        .collect()
}

/// The low 21 bits of `v`, two zero bits after each.
fn spread(v: u64) -> u64 {
    let mut x = v & 0x1f_ffff;
    x = (x | x << 32) & 0x1f_0000_0000_ffff;
    x = (x | x << 16) & 0x1f_0000_ff00_00ff;
    x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
    x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
    x = (x | x << 2) & 0x1249_2492_4924_9249;
    x
}
