//! The splat asset and the loaders that produce it.
//!
//! [`GaussianSplats`] is the asset; [`formats`] decodes each file format into
//! [`DecodedSplats`], which the loader turns into the asset.

#[cfg(any(feature = "sog", feature = "gltf", feature = "rad"))]
mod beside;
mod bounds;
pub mod decoded;
pub mod formats;
#[cfg(target_arch = "wasm32")]
mod http_range;
mod loader;
#[cfg(feature = "gltf")]
mod scene;
mod splats;
#[cfg(feature = "rad")]
pub(crate) mod stream;
#[cfg(feature = "rad")]
mod stream_load;

pub use decoded::{DecodedSplats, DecodedTree, SplatGeometry};
#[cfg(target_arch = "wasm32")]
pub use http_range::{HttpRangeReader, MIN_FETCH_BYTES, RangeReader, register_http_range_sources};
#[allow(deprecated)]
pub use loader::{PlyLoader, PlyLoaderSettings};
pub use loader::{SplatLoadError, SplatLoader, SplatLoaderSettings};
#[cfg(feature = "gltf")]
pub use scene::{GaussianScene, GaussianSceneNode, SplatSceneLoadError, SplatSceneLoader};
#[cfg(feature = "gltf")]
#[allow(deprecated)]
pub use scene::{GltfSplatLoadError, GltfSplatLoader};
pub use splats::{GaussianSplats, SplatStorage};
#[cfg(feature = "rad")]
pub use stream::SplatStreamSource;
