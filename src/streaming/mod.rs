//! Streaming: a cloud larger than GPU memory drawn from its file a chunk at a time.
//!
//! A `.rad` loaded with [`SplatLoaderSettings::streaming`](crate::asset::SplatLoaderSettings)
//! arrives as its first chunk: the root and the coarsest levels of its
//! level-of-detail tree, so the whole scene shows at once, coarsely. Each frame
//! [`update_streams`] measures, from every active camera, how large on screen the
//! resident nodes whose children are missing can be, fetches the chunks holding
//! those children (largest first, a few at a time, off the main thread: ranged reads
//! through the asset server) and, when [`SplatStreaming::gpu_bytes`] would be passed,
//! evicts the chunks least recently wanted. `table.rs` keeps the page table and the
//! records the GPU's cut reads: a resident node whose children are not all resident
//! is drawn in their place, so every part of the scene is always covered, by its
//! finest resident level. [`SplatStreamingStats`] says how far it has come.
//!
//! The render world uploads each resident chunk as a page (`render/lod_trees.rs`) and
//! draws the cut over the pages with the same preprocess as any level-of-detail tree;
//! a camera without [`SplatLod`](crate::SplatLod) draws the finest resident level.

mod read;
mod settings;
mod systems;
mod table;

pub use settings::{SplatStreaming, SplatStreamingStats};
pub use systems::{SplatStreams, StreamedPage, update_streams};
pub use table::{HIDDEN_RADIUS, LEAF_RADIUS};
