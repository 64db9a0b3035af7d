//! Level of detail: a tree over each cloud's splats whose interior nodes are splats
//! too, each the moment-matched merge of its children (`moments.rs`), so that a far
//! part of a scene can be drawn by a few coarse splats instead of many fine ones.
//!
//! [`SplatLodTree::build`] makes the tree of any [`GaussianSplats`](crate::GaussianSplats),
//! whatever file it came from: an octree over the splats' centres in Morton order
//! (`tree.rs`). Node `i < leaves` is splat `i`; every interior node has at least two
//! children, comes after them, and is a splat in the asset's own layout (position,
//! log-scales, rotation, opacity logit, SH coefficients of the asset's degree), so
//! the passes that draw splats can draw it. Choosing which nodes a camera draws (a cut
//! of the tree within a budget) is the renderer's part and not in this module.

mod moments;
mod tree;

pub use moments::{Moments, principal_axes};
pub use tree::{NO_PARENT, SplatLodTree};

#[cfg(test)]
mod tests;
