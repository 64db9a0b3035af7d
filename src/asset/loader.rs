use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext};
use bevy::log::{info, warn};
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

use super::formats::ply::{self, PlyError};
use super::splats::GaussianSplats;

/// Loads Inria-format 3DGS `.ply` files into [`GaussianSplats`].
#[derive(Default, TypePath)]
pub struct PlyLoader;

/// How [`PlyLoader`] prepares what it loads. Use with
/// `asset_server.load_with_settings(path, |s: &mut PlyLoaderSettings| ...)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlyLoaderSettings {
    /// Keep the SH coefficients as f16 on the GPU (see
    /// [`GaussianSplats::with_half_precision_sh`]).
    pub half_precision_sh: bool,
}

/// Why a splat file did not load.
#[derive(Debug, thiserror::Error)]
pub enum SplatLoadError {
    /// The file could not be read.
    #[error("could not read the splat file: {0}")]
    Io(#[from] std::io::Error),
    /// The bytes are not a valid 3DGS PLY file.
    #[error("invalid 3DGS PLY file: {0}")]
    Ply(#[from] PlyError),
}

impl AssetLoader for PlyLoader {
    type Asset = GaussianSplats;
    type Settings = PlyLoaderSettings;
    type Error = SplatLoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &PlyLoaderSettings,
        load_context: &mut LoadContext<'_>,
    ) -> Result<GaussianSplats, SplatLoadError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        let decoded = ply::decode(&bytes)?;
        let path = load_context.path();
        if decoded.non_finite > 0 {
            warn!(
                "{path}: {} of {} splats hold NaN or infinite values; the renderer culls them",
                decoded.non_finite,
                decoded.len()
            );
        }
        info!(
            "{path}: {} splats, SH degree {}",
            decoded.len(),
            decoded.sh_degree
        );
        Ok(GaussianSplats::from(decoded).with_half_precision_sh(settings.half_precision_sh))
    }

    fn extensions(&self) -> &[&str] {
        &["ply"]
    }
}
