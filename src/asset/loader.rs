use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext};
use bevy::log::{info, warn};
use bevy::reflect::TypePath;
use serde::{Deserialize, Serialize};

#[cfg(any(feature = "sog", feature = "rad"))]
use super::beside::read_beside;
use super::decoded::DecodedSplats;
#[cfg(any(feature = "sog", feature = "rad"))]
use super::decoded::DecodedTree;
use super::formats::{self, DecodeError, Format};
use super::splats::{GaussianSplats, SplatStorage};

/// Loads every single-cloud splat file into [`GaussianSplats`]: Inria and compressed
/// `.ply`, `.splat`, `.spz`, a `.sog` bundle, a SOG `meta.json` (its images read
/// from beside it), a streamed SOG's `lod-meta.json` and Spark's `.rad` (both at
/// their finest level), and GaussianSplats3D's `.ksplat`. The extension
/// picks the decoder, the content must agree.
#[derive(Default, TypePath)]
pub struct SplatLoader;

/// The loader's former name, from when it read only PLY files.
#[deprecated(note = "renamed to SplatLoader")]
pub type PlyLoader = SplatLoader;
/// The loader settings' former name.
#[deprecated(note = "renamed to SplatLoaderSettings")]
pub type PlyLoaderSettings = SplatLoaderSettings;

/// How [`SplatLoader`] prepares what it loads. Use with
/// `asset_server.load_with_settings(path, |s: &mut SplatLoaderSettings| ...)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplatLoaderSettings {
    /// Keep the SH coefficients as f16 on the GPU (see
    /// [`GaussianSplats::with_half_precision_sh`]). From before [`SplatStorage`];
    /// f16 SH is the default now, so `true` changes nothing unless `storage` is
    /// [`SplatStorage::Full`].
    pub half_precision_sh: bool,
    /// How the GPU stores the splats ([`SplatStorage`], f16 SH by default; choose
    /// `Full` for the f32 reference image, `Compact` for the least memory).
    #[serde(default)]
    pub storage: SplatStorage,
    /// Load a `.rad` with a level-of-detail tree as a stream: only its header and
    /// first chunk (the coarsest levels) now, the rest as cameras need it, within
    /// [`SplatStreaming`](crate::streaming::SplatStreaming)'s GPU memory (see
    /// [`crate::streaming`]). Other files load whole.
    #[serde(default)]
    pub streaming: bool,
}

impl SplatLoaderSettings {
    /// The GPU layout these settings ask for.
    pub fn storage(&self) -> SplatStorage {
        match (self.storage, self.half_precision_sh) {
            (SplatStorage::Full, true) => SplatStorage::HalfSh,
            (storage, _) => storage,
        }
    }
}

/// Why a splat file did not load.
#[derive(Debug, thiserror::Error)]
pub enum SplatLoadError {
    /// The file could not be read.
    #[error("could not read the splat file: {0}")]
    Io(#[from] std::io::Error),
    /// A file a SOG `meta.json` or a chunked `.rad` names could not be read.
    #[error("could not read {path}, which the splat file names: {message}")]
    SiblingFile {
        /// Its asset path (its name as written, where that did not resolve).
        path: String,
        /// Why it could not be read.
        message: String,
    },
    /// The extension is not one of a splat format.
    #[error("{0}: not a splat file extension")]
    UnknownExtension(String),
    /// The bytes are not a valid file of their format.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

impl SplatLoader {
    async fn decode(
        bytes: &[u8],
        format: Format,
        load_context: &mut LoadContext<'_>,
    ) -> Result<DecodedSplats, SplatLoadError> {
        #[cfg(feature = "spz")]
        if format == Format::Spz {
            format.confirm(bytes)?;
            let (splats, info) =
                formats::spz::decode_with_info(bytes).map_err(DecodeError::from)?;
            if info.dropped_sh_bands() {
                warn!(
                    "{}: SPZ with SH degree {}; bands above {} are not drawn",
                    load_context.path(),
                    info.stored_sh_degree,
                    info.loaded_sh_degree
                );
            }
            return Ok(splats);
        }
        if format != Format::SogMeta {
            return Ok(formats::decode(format, bytes)?);
        }
        #[cfg(feature = "sog")]
        {
            format.confirm(bytes)?;
            let meta = formats::sog::parse_meta(bytes).map_err(DecodeError::from)?;
            let mut images = std::collections::HashMap::new();
            for file in meta.image_files() {
                let image = sibling(load_context, file).await?;
                images.insert(file.to_owned(), image);
            }
            Ok(
                formats::sog::decode_images(&meta, |name| images.get(name).map(Vec::as_slice))
                    .map_err(DecodeError::from)?,
            )
        }
        #[cfg(not(feature = "sog"))]
        {
            let _ = load_context;
            Err(DecodeError::FeatureDisabled {
                format,
                feature: "sog",
            }
            .into())
        }
    }
}

/// A file the splat file names, read from beside it.
#[cfg(any(feature = "sog", feature = "rad"))]
async fn sibling(
    load_context: &mut LoadContext<'_>,
    name: &str,
) -> Result<Vec<u8>, SplatLoadError> {
    read_beside(load_context, name)
        .await
        .map_err(|e| SplatLoadError::SiblingFile {
            path: e.path,
            message: e.message,
        })
}

#[cfg(feature = "sog")]
impl SplatLoader {
    /// A streamed SOG's finest level: its `lod-meta.json`, then each chunk's
    /// `meta.json` and images, from beside it.
    /// A streamed SOG's finest level, and a tree whose interior nodes are its coarser
    /// levels' splats (`lod::tree_from_levels`), its chunk folders read from beside it.
    async fn decode_sog_lod(
        bytes: &[u8],
        load_context: &mut LoadContext<'_>,
    ) -> Result<(DecodedSplats, Option<DecodedTree>), SplatLoadError> {
        use formats::sog;
        Format::SogLod.confirm(bytes)?;
        let meta = sog::parse_lod_meta(bytes).map_err(DecodeError::from)?;
        let levels = meta.levels();
        let mut chunks = std::collections::HashMap::new();
        for level in 0..levels {
            for chunk in meta.level_files(level) {
                if chunks.contains_key(chunk) {
                    continue;
                }
                let chunk_meta = sog::parse_meta(&sibling(load_context, chunk).await?)
                    .map_err(DecodeError::from)?;
                let mut images = std::collections::HashMap::new();
                for file in chunk_meta.image_files() {
                    let image = sibling(load_context, &sog::beside_chunk(chunk, file)).await?;
                    images.insert(file.to_owned(), image);
                }
                let splats =
                    sog::decode_images(&chunk_meta, |name| images.get(name).map(Vec::as_slice))
                        .map_err(DecodeError::from)?;
                chunks.insert(chunk.to_owned(), splats);
            }
        }
        let decoded = (0..levels)
            .map(|level| sog::decode_lod_level(&meta, level, |name| chunks.get(name)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(DecodeError::from)?;
        let tree = crate::lod::levels::tree_from_levels(&decoded);
        if let Some(tree) = &tree {
            info!(
                "{}: a streamed SOG of {levels} levels; its finest is loaded, the coarser \
                 {} splats are its level-of-detail tree",
                load_context.path(),
                tree.interior.len()
            );
        }
        let finest = decoded.into_iter().next().ok_or_else(|| {
            SplatLoadError::Decode(DecodeError::from(sog::SogError::InvalidMeta {
                key: "lodLevels",
                reason: "no level".to_owned(),
            }))
        })?;
        Ok((finest, tree))
    }
}

#[cfg(feature = "rad")]
impl SplatLoader {
    /// A `.rad` file's leaves (its finest level) and its tree, its chunks read from
    /// beside it when the header names chunk files.
    async fn decode_rad(
        bytes: &[u8],
        load_context: &mut LoadContext<'_>,
    ) -> Result<(DecodedSplats, Option<DecodedTree>), SplatLoadError> {
        Format::Rad.confirm(bytes)?;
        let names = formats::rad::chunk_files(bytes).map_err(DecodeError::from)?;
        let mut chunks = std::collections::HashMap::new();
        for name in names {
            let chunk = sibling(load_context, &name).await?;
            chunks.insert(name, chunk);
        }
        let nodes =
            formats::rad::decode_nodes_with(bytes, |name| chunks.get(name).map(Vec::as_slice))
                .map_err(DecodeError::from)?;
        Ok(nodes.leaves_and_tree())
    }
}

impl AssetLoader for SplatLoader {
    type Asset = GaussianSplats;
    type Settings = SplatLoaderSettings;
    type Error = SplatLoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &SplatLoaderSettings,
        load_context: &mut LoadContext<'_>,
    ) -> Result<GaussianSplats, SplatLoadError> {
        let path = load_context.path().to_string();
        let format =
            Format::of_path(&path).ok_or(SplatLoadError::UnknownExtension(path.clone()))?;
        #[cfg(feature = "rad")]
        if settings.streaming && format == Format::Rad {
            use super::stream_load::{HeadError, load_stream_head};
            let splats = load_stream_head(reader, load_context)
                .await
                .map_err(|e| match e {
                    HeadError::Io(e) => SplatLoadError::Io(e),
                    HeadError::Rad(e) => SplatLoadError::Decode(DecodeError::from(e)),
                    HeadError::Beside(e) => SplatLoadError::SiblingFile {
                        path: e.path,
                        message: e.message,
                    },
                })?;
            return Ok(splats.with_storage(settings.storage()));
        }
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        // A `.rad` brings its level-of-detail tree along.
        // So do a streamed SOG's levels.
        let (decoded, file_tree) = match format {
            #[cfg(feature = "rad")]
            Format::Rad => Self::decode_rad(&bytes, load_context).await?,
            #[cfg(feature = "sog")]
            Format::SogLod => Self::decode_sog_lod(&bytes, load_context).await?,
            _ => (Self::decode(&bytes, format, load_context).await?, None),
        };
        if decoded.non_finite > 0 {
            warn!(
                "{path}: {} of {} splats hold NaN or infinite values; the renderer culls them",
                decoded.non_finite,
                decoded.len()
            );
        }
        info!(
            "{path}: {} splats, SH degree {}{} ({})",
            decoded.len(),
            decoded.sh_degree,
            if decoded.antialiased {
                ", trained antialiased"
            } else {
                ""
            },
            format.name()
        );
        let splats = GaussianSplats::from(decoded).with_storage(settings.storage());
        Ok(match file_tree {
            Some(tree) => splats.with_file_tree(tree),
            None => splats,
        })
    }

    fn extensions(&self) -> &[&str] {
        &["ply", "splat", "spz", "sog", "meta.json", "rad", "ksplat"]
    }
}
