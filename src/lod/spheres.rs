//! The bounding spheres a cut is chosen by, as the GPU reads them.
//!
//! A node's size on screen is the angle its sphere subtends from the camera (`cut.rs`).
//! The cut is valid (exactly one node drawn on every path from a root to a leaf) when
//! that size never grows from a node to its child, which holds wherever each child's
//! sphere lies inside its parent's. The tree's radii guarantee it in exact arithmetic;
//! these spheres are recomputed from the f32 centres the GPU sees, children first,
//! with a margin for the GPU's rounding.

use bevy::math::DVec3;

use super::tree::{NO_PARENT, SplatLodTree};
use crate::asset::GaussianSplats;

/// Relative margin a parent's sphere gets beyond its children's.
const MARGIN: f64 = 1.0 / 65536.0;

/// A parent radius meaning "no parent": the node is a root, drawn however large.
pub const ROOT_RADIUS: f32 = -1.0;

/// Every node's bounding sphere (centre, radius) in the cloud's frame, leaves first, as
/// [`SplatLodTree`] numbers them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LodSpheres {
    spheres: Vec<[f32; 4]>,
    parents: Vec<u32>,
    leaves: usize,
}

impl LodSpheres {
    /// The spheres of `tree`, built over `splats`.
    pub fn new(tree: &SplatLodTree, splats: &GaussianSplats) -> Self {
        let leaves = tree.leaves();
        let centres = splats
            .geometry()
            .iter()
            .take(leaves)
            .chain(tree.interior())
            .map(|splat| splat.position);
        let mut spheres: Vec<[f32; 4]> = centres
            .enumerate()
            .map(|(node, [x, y, z])| [x, y, z, finite_radius(f64::from(tree.radius(node)))])
            .collect();
        // Children come before their parents: one pass in node order settles each
        // parent after all of its children.
        for node in leaves..spheres.len() {
            let centre = sphere_centre(spheres[node]);
            let reach = tree
                .children(node)
                .iter()
                .filter_map(|&child| spheres.get(child as usize))
                .map(|&child| (sphere_centre(child) - centre).length() + f64::from(child[3]))
                .fold(f64::from(spheres[node][3]), f64::max);
            spheres[node][3] = finite_radius(reach * (1.0 + MARGIN) + f64::MIN_POSITIVE);
        }
        let parents = (0..spheres.len()).map(|node| tree.parent(node)).collect();
        Self {
            spheres,
            parents,
            leaves,
        }
    }

    /// Nodes, leaves and interior.
    pub fn len(&self) -> usize {
        self.spheres.len()
    }

    /// Whether there is no node.
    pub fn is_empty(&self) -> bool {
        self.spheres.is_empty()
    }

    /// Leaves: nodes `0..leaves()` are the cloud's splats.
    pub fn leaves(&self) -> usize {
        self.leaves
    }

    /// Node `node`'s sphere: centre and radius (`None` out of range).
    pub fn sphere(&self, node: usize) -> Option<[f32; 4]> {
        self.spheres.get(node).copied()
    }

    /// Node `node`'s parent's sphere, with [`ROOT_RADIUS`] for a root.
    pub fn parent_sphere(&self, node: usize) -> [f32; 4] {
        match self.parents.get(node) {
            Some(&parent) if parent != NO_PARENT => self
                .spheres
                .get(parent as usize)
                .copied()
                .unwrap_or([0.0, 0.0, 0.0, ROOT_RADIUS]),
            _ => [0.0, 0.0, 0.0, ROOT_RADIUS],
        }
    }

    /// The GPU records of leaves `range`: one vec4 each, the parent's sphere.
    pub fn leaf_records(&self, range: std::ops::Range<usize>) -> Vec<[f32; 4]> {
        range
            .filter(|&node| node < self.leaves)
            .map(|node| self.parent_sphere(node))
            .collect()
    }

    /// The GPU records of interior nodes `range` (counted from the first interior
    /// node): two vec4 each, the node's sphere and its parent's.
    pub fn interior_records(&self, range: std::ops::Range<usize>) -> Vec<[f32; 4]> {
        range
            .map(|i| self.leaves + i)
            .filter(|&node| node < self.spheres.len())
            .flat_map(|node| [self.spheres[node], self.parent_sphere(node)])
            .collect()
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.spheres.len() * 16 + self.parents.len() * 4
    }
}

fn sphere_centre([x, y, z, _]: [f32; 4]) -> DVec3 {
    DVec3::new(f64::from(x), f64::from(y), f64::from(z))
}

/// The smallest f32 not below `value`; a non-finite or huge radius becomes `f32::MAX`
/// (a node no camera ever finds small enough), a negative one 0.
fn finite_radius(value: f64) -> f32 {
    if !value.is_finite() || value >= f64::from(f32::MAX) {
        return f32::MAX;
    }
    let value = value.max(0.0);
    let rounded = value as f32;
    if f64::from(rounded) < value {
        rounded.next_up()
    } else {
        rounded
    }
}
