//! The splat asset and the loaders that produce it.

mod bounds;
mod loader;
pub mod ply;
mod splats;

pub use loader::{PlyLoader, PlyLoaderSettings, SplatLoadError};
pub use ply::SplatGeometry;
pub use splats::GaussianSplats;
