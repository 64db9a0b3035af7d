//! One decoder per splat file format, each from bytes to [`DecodedSplats`]: pure Rust
//! on byte slices, no Bevy, so each can be tested and fuzzed on its own.
//!
//! A file's format is chosen by its extension and confirmed by its content
//! ([`Format::of_path`], [`Format::sniff`]); [`decode`] runs the decoder of the
//! single-file formats.

#[cfg(feature = "gltf")]
pub mod gltf;
pub mod ksplat;
pub mod ply;
#[cfg(feature = "rad")]
pub mod rad;
#[cfg(feature = "sog")]
pub mod sog;
pub mod splat;
#[cfg(feature = "spz")]
pub mod spz;

use crate::asset::decoded::DecodedSplats;

/// A splat file format the crate reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Inria 3DGS PLY, or PlayCanvas's compressed PLY (`.ply`).
    Ply,
    /// antimatter15's headerless 32-byte records (`.splat`).
    Splat,
    /// Niantic's SPZ, versions 1-4 (`.spz`).
    Spz,
    /// PlayCanvas's SOG as one zip bundle (`.sog`).
    SogBundle,
    /// PlayCanvas's SOG as a `meta.json` beside its WebP images.
    SogMeta,
    /// PlayCanvas's streamed SOG: a `lod-meta.json` over chunks of SOG folders, one
    /// set per level of detail.
    SogLod,
    /// glTF 2.0 (`.gltf`, `.glb`) with `KHR_gaussian_splatting`.
    Gltf,
    /// Spark's `.rad`: chunked, compressed, with an optional level-of-detail tree.
    Rad,
    /// GaussianSplats3D's `.ksplat` (compression levels 0–2).
    Ksplat,
}

impl Format {
    /// The format a file name's extension names (`meta.json` only as a whole name's
    /// end, so that other JSON is not taken for SOG).
    pub fn of_path(path: &str) -> Option<Format> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with("lod-meta.json") {
            return Some(Format::SogLod);
        }
        if lower.ends_with("meta.json") {
            return Some(Format::SogMeta);
        }
        match lower.rsplit_once('.')?.1 {
            "ply" => Some(Format::Ply),
            "splat" => Some(Format::Splat),
            "spz" => Some(Format::Spz),
            "sog" => Some(Format::SogBundle),
            "gltf" | "glb" => Some(Format::Gltf),
            "rad" => Some(Format::Rad),
            "ksplat" => Some(Format::Ksplat),
            _ => None,
        }
    }

    /// What the bytes themselves say they are; `None` when no magic matches (a
    /// `.splat` file has none).
    pub fn sniff(bytes: &[u8]) -> Option<Format> {
        if bytes.starts_with(b"ply\n") || bytes.starts_with(b"ply\r\n") {
            return Some(Format::Ply);
        }
        if bytes.starts_with(b"glTF") {
            return Some(Format::Gltf);
        }
        // SPZ v1-3 are gzip streams, v4 starts with its own magic.
        if bytes.starts_with(&[0x1f, 0x8b]) || bytes.starts_with(b"NGSP") {
            return Some(Format::Spz);
        }
        if bytes.starts_with(b"PK\x03\x04") {
            return Some(Format::SogBundle);
        }
        if bytes.starts_with(b"RAD0") {
            return Some(Format::Rad);
        }
        // No magic: headers that describe the file's length exactly.
        if ksplat::is_ksplat(bytes) {
            return Some(Format::Ksplat);
        }
        let text = bytes.trim_ascii_start();
        if text.starts_with(b"{") {
            // Both are JSON objects; glTF's must hold `asset`, SOG's `means`.
            let head = &text[..text.len().min(64 * 1024)];
            let has = |key: &[u8]| head.windows(key.len()).any(|w| w == key);
            // SOG writers add an `asset` object too, so SOG is asked first.
            #[cfg(feature = "sog")]
            if sog::is_sog_lod_meta(bytes) {
                return Some(Format::SogLod);
            }
            #[cfg(feature = "sog")]
            let sog = sog::is_sog_meta(bytes);
            #[cfg(not(feature = "sog"))]
            let sog = has(b"\"means\"");
            if sog {
                return Some(Format::SogMeta);
            }
            if has(b"\"asset\"") {
                return Some(Format::Gltf);
            }
        }
        None
    }

    /// The format's name as users know it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Ply => "PLY",
            Format::Splat => ".splat",
            Format::Spz => "SPZ",
            Format::SogBundle => "SOG bundle",
            Format::SogMeta => "SOG meta.json",
            Format::SogLod => "streamed SOG lod-meta.json",
            Format::Gltf => "glTF",
            Format::Rad => "Spark .rad",
            Format::Ksplat => ".ksplat",
        }
    }

    /// Checks that the content agrees with the format the extension chose.
    pub fn confirm(self, bytes: &[u8]) -> Result<(), DecodeError> {
        let found = Format::sniff(bytes);
        match (self, found) {
            (_, Some(found)) if found == self => Ok(()),
            // A `.splat` has no magic: anything that is not another format's.
            (Format::Splat, None) => Ok(()),
            (_, Some(found)) => Err(DecodeError::FormatMismatch {
                expected: self,
                found: Some(found),
            }),
            (_, None) => Err(DecodeError::FormatMismatch {
                expected: self,
                found: None,
            }),
        }
    }
}

/// Why a splat file did not decode. The `Display` text names the format and the
/// problem.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The extension names one format, the content is another (or none known).
    #[error(
        "not a {} file: its content is {}",
        expected.name(),
        found.map_or("no splat format this crate knows", Format::name)
    )]
    FormatMismatch {
        /// The format the extension named.
        expected: Format,
        /// The format the content has, if any known.
        found: Option<Format>,
    },
    /// The format's decoder is not compiled in (its crate feature is off).
    #[error("{} files need the `{feature}` feature of bevy_splat", format.name())]
    FeatureDisabled {
        /// The file's format.
        format: Format,
        /// The crate feature that decodes it.
        feature: &'static str,
    },
    /// The format has more than one file or a scene: use its own decoder.
    #[error("{} files are not read from one byte buffer here", .0.name())]
    NotSingleFile(Format),
    /// The PLY decoder refused the file.
    #[error("invalid PLY file: {0}")]
    Ply(#[from] ply::PlyError),
    /// The `.splat` decoder refused the file.
    #[error("invalid .splat file: {0}")]
    Splat(#[from] splat::SplatFileError),
    /// The SPZ decoder refused the file.
    #[cfg(feature = "spz")]
    #[error("invalid SPZ file: {0}")]
    Spz(#[from] spz::SpzError),
    /// The SOG decoder refused the file.
    #[cfg(feature = "sog")]
    #[error("invalid SOG file: {0}")]
    Sog(#[from] sog::SogError),
    /// The `.ksplat` decoder refused the file.
    #[error("invalid .ksplat file: {0}")]
    Ksplat(#[from] ksplat::KsplatError),
    /// The `.rad` decoder refused the file.
    #[cfg(feature = "rad")]
    #[error("invalid .rad file: {0}")]
    Rad(#[from] rad::RadError),
    /// The glTF decoder refused the file.
    #[cfg(feature = "gltf")]
    #[error("invalid glTF splat file: {0}")]
    Gltf(#[from] gltf::GltfError),
}

/// Decodes one file of a single-file format, after confirming its content.
pub fn decode(format: Format, bytes: &[u8]) -> Result<DecodedSplats, DecodeError> {
    format.confirm(bytes)?;
    match format {
        Format::Ply => Ok(ply::decode(bytes)?),
        Format::Splat => Ok(splat::decode(bytes)?),
        #[cfg(feature = "spz")]
        Format::Spz => Ok(spz::decode(bytes)?),
        #[cfg(not(feature = "spz"))]
        Format::Spz => Err(DecodeError::FeatureDisabled {
            format,
            feature: "spz",
        }),
        #[cfg(feature = "sog")]
        Format::SogBundle => Ok(sog::decode_bundle(bytes)?),
        #[cfg(not(feature = "sog"))]
        Format::SogBundle => Err(DecodeError::FeatureDisabled {
            format,
            feature: "sog",
        }),
        Format::Ksplat => Ok(ksplat::decode(bytes)?),
        #[cfg(feature = "rad")]
        Format::Rad => Ok(rad::decode(bytes)?),
        #[cfg(not(feature = "rad"))]
        Format::Rad => Err(DecodeError::FeatureDisabled {
            format,
            feature: "rad",
        }),
        Format::SogMeta | Format::SogLod | Format::Gltf => Err(DecodeError::NotSingleFile(format)),
    }
}

/// Decodes a file from disk, any format but glTF: a SOG `meta.json` reads its images
/// from beside it. For tools and examples; apps load through the asset server.
#[cfg(not(target_arch = "wasm32"))]
pub fn decode_path(path: &std::path::Path) -> Result<DecodedSplats, PathDecodeError> {
    let name = path.to_string_lossy();
    let format = Format::of_path(&name)
        .ok_or_else(|| PathDecodeError::UnknownExtension(name.to_string()))?;
    let bytes = read_file(path)?;
    let invalid = |source: DecodeError| PathDecodeError::Decode {
        path: name.to_string(),
        source,
    };
    #[cfg(feature = "rad")]
    if format == Format::Rad {
        format.confirm(&bytes).map_err(invalid)?;
        let names = rad::chunk_files(&bytes).map_err(|e| invalid(e.into()))?;
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        let mut chunks = std::collections::HashMap::new();
        for name in names {
            let data = read_file(&dir.join(&name))?;
            chunks.insert(name, data);
        }
        let nodes = rad::decode_nodes_with(&bytes, |name| chunks.get(name).map(Vec::as_slice))
            .map_err(|e| invalid(e.into()))?;
        return Ok(nodes.leaves());
    }
    if format != Format::SogMeta && format != Format::SogLod {
        return decode(format, &bytes).map_err(invalid);
    }
    #[cfg(feature = "sog")]
    if format == Format::SogLod {
        format.confirm(&bytes).map_err(invalid)?;
        let meta = sog::parse_lod_meta(&bytes).map_err(|e| invalid(e.into()))?;
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        let mut chunks = std::collections::HashMap::new();
        for chunk in meta.level_files(0) {
            let chunk_meta =
                sog::parse_meta(&read_file(&dir.join(chunk))?).map_err(|e| invalid(e.into()))?;
            let mut images = std::collections::HashMap::new();
            for file in chunk_meta.image_files() {
                images.insert(file, read_file(&dir.join(sog::beside_chunk(chunk, file)))?);
            }
            let splats =
                sog::decode_images(&chunk_meta, |name| images.get(name).map(Vec::as_slice))
                    .map_err(|e| invalid(e.into()))?;
            chunks.insert(chunk.to_owned(), splats);
        }
        return sog::decode_lod_level(&meta, 0, |name| chunks.get(name))
            .map_err(|e| invalid(e.into()));
    }
    #[cfg(feature = "sog")]
    {
        format.confirm(&bytes).map_err(invalid)?;
        let meta = sog::parse_meta(&bytes).map_err(|e| invalid(e.into()))?;
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        let mut images = std::collections::HashMap::new();
        for file in meta.image_files() {
            images.insert(file.to_owned(), read_file(&dir.join(file))?);
        }
        sog::decode_images(&meta, |name| images.get(name).map(Vec::as_slice))
            .map_err(|e| invalid(e.into()))
    }
    #[cfg(not(feature = "sog"))]
    Err(invalid(DecodeError::FeatureDisabled {
        format,
        feature: "sog",
    }))
}

/// Decodes a glTF scene from disk, reading its external buffers from beside it.
#[cfg(all(feature = "gltf", not(target_arch = "wasm32")))]
pub fn decode_gltf_path(path: &std::path::Path) -> Result<gltf::SplatScene, PathDecodeError> {
    let invalid = |source: gltf::GltfError| PathDecodeError::Decode {
        path: path.display().to_string(),
        source: source.into(),
    };
    let bytes = read_file(path)?;
    let document = gltf::parse(&bytes).map_err(invalid)?;
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut buffers = std::collections::HashMap::new();
    for uri in document.external_buffers() {
        let data = read_file(&dir.join(&uri))?;
        buffers.insert(uri, data);
    }
    gltf::decode(&document, &|uri| buffers.get(uri).map(Vec::as_slice)).map_err(invalid)
}

#[cfg(not(target_arch = "wasm32"))]
fn read_file(path: &std::path::Path) -> Result<Vec<u8>, PathDecodeError> {
    std::fs::read(path).map_err(|e| PathDecodeError::Io(path.display().to_string(), e))
}

/// Why [`decode_path`] or [`decode_gltf_path`] failed; the text names the file.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, thiserror::Error)]
pub enum PathDecodeError {
    /// A file (the one named, or one it names) could not be read: its path and why.
    #[error("cannot read {0}: {1}")]
    Io(String, std::io::Error),
    /// The path's extension names no splat format.
    #[error(
        "{0}: not a splat file extension (.ply, .splat, .spz, .sog, meta.json, lod-meta.json, .rad, .ksplat, .gltf, .glb)"
    )]
    UnknownExtension(String),
    /// The file was read but did not decode.
    #[error("{path}: {source}")]
    Decode {
        /// The file.
        path: String,
        /// Why it did not decode.
        source: DecodeError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_and_magic_agree() {
        assert_eq!(Format::of_path("a/b/Scene.PLY"), Some(Format::Ply));
        assert_eq!(Format::of_path("x/meta.json"), Some(Format::SogMeta));
        assert_eq!(Format::of_path("x/other.json"), None);
        assert_eq!(Format::of_path("scene.glb"), Some(Format::Gltf));
        assert_eq!(Format::sniff(b"ply\nformat"), Some(Format::Ply));
        assert_eq!(Format::sniff(b"NGSP\x04"), Some(Format::Spz));
        let sog = br#" {"asset": {"generator": "splat-transform"},
            "means": {"files": ["means_l.webp"]}, "quats": {"files": ["quats.webp"]}}"#;
        assert_eq!(Format::sniff(sog), Some(Format::SogMeta));
        assert_eq!(Format::sniff(b"{\"asset\": {}}"), Some(Format::Gltf));
        assert_eq!(Format::sniff(&[0u8; 32]), None);
        assert!(Format::Splat.confirm(&[0u8; 32]).is_ok());
        let err = Format::Splat.confirm(b"ply\n").unwrap_err();
        assert_eq!(err.to_string(), "not a .splat file: its content is PLY");
        let err = Format::Ply.confirm(&[0u8; 8]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "not a PLY file: its content is no splat format this crate knows"
        );
    }
}
