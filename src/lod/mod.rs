//! Level of detail: a tree over each cloud's splats whose interior nodes are splats
//! too, each the moment-matched merge of its children (`moments.rs`), so that a far
//! part of a scene can be drawn by a few coarse splats instead of many fine ones.
//!
//! [`SplatLodTree::build`] makes the tree of any [`GaussianSplats`](crate::GaussianSplats),
//! whatever file it came from: an octree over the splats' centres in Morton order
//! (`tree.rs`). Node `i < leaves` is splat `i`; every interior node has at least two
//! children, comes after them, and is a splat in the asset's own layout (position,
//! log-scales, rotation, opacity logit, SH coefficients of the asset's degree), so
//! the passes that draw splats can draw it.
//!
//! A camera with [`SplatLod`] draws a cut of each cloud's tree within its budget:
//! `cache.rs` builds the trees ([`SplatLodTrees`], on worker threads), `spheres.rs`
//! the bounding spheres the cut is chosen by, and `cut.rs` the rule itself (sizes,
//! blend weights, the threshold that holds the budget), which the preprocess runs per
//! node on the GPU (`render/lod_trees.rs` uploads the trees, `render/view/lod.rs`
//! keeps each camera's threshold). `export.rs` lays a tree out breadth first, as
//! Spark's `.rad` files store one; `levels.rs` makes a tree of a file's own levels
//! (a streamed SOG's).

mod cache;
pub mod cut;
mod export;
pub(crate) mod levels;
mod moments;
mod settings;
mod spheres;
mod tree;

pub use cache::{CloudLod, SplatLodTrees, finish_lod_builds, start_lod_builds};
pub use levels::tree_from_levels;
pub use moments::{Moments, principal_axes};
pub use settings::SplatLod;
pub use spheres::{LodSpheres, ROOT_RADIUS};
pub use tree::{NO_PARENT, SplatLodTree};

#[cfg(test)]
mod cut_tests;
#[cfg(test)]
mod tests;
