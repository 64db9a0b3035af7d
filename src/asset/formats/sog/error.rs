//! Everything that can go wrong while reading a SOG scene.

use thiserror::Error;

/// Why a SOG scene could not be decoded. Each variant names the file or key at fault so
/// that a loader can report it without extra context.
#[derive(Debug, Error)]
pub enum SogError {
    /// The `.sog` bytes are not a readable zip archive.
    #[error("SOG bundle is not a valid zip archive: {0}")]
    Zip(#[from] zip::result::ZipError),

    /// The zip archive has no `meta.json` entry at its root.
    #[error("SOG bundle has no meta.json entry")]
    MissingMetaJson,

    /// A zip entry claims (or inflates to) more bytes than the configured limits allow;
    /// this is how a zip bomb is refused before it exhausts memory.
    #[error("zip entry {name} is too large: {size} bytes (limit {limit})")]
    EntryTooLarge {
        /// The entry's name.
        name: String,
        /// Its size, claimed or inflated so far.
        size: u64,
        /// The most allowed.
        limit: u64,
    },

    /// A zip entry could not be inflated.
    #[error("zip entry {name} could not be read: {message}")]
    EntryRead {
        /// The entry's name.
        name: String,
        /// Why it could not be read.
        message: String,
    },

    /// meta.json is not JSON, or a key holds the wrong JSON type (serde's message).
    #[error("meta.json is not valid SOG JSON: {0}")]
    Json(#[from] serde_json::Error),

    /// A key that this SOG version requires is absent.
    #[error("meta.json is missing the key {0}")]
    MissingKey(&'static str),

    /// A key is present and well-typed but its value makes no sense (e.g. three `mins`
    /// for four channels, a file name that climbs out of the scene's folder).
    #[error("meta.json key {key} is invalid: {reason}")]
    InvalidMeta {
        /// The key.
        key: &'static str,
        /// What is wrong with its value.
        reason: String,
    },

    /// `version` is neither absent (v1) nor 1 or 2.
    #[error("unsupported SOG version {0}")]
    UnsupportedVersion(String),

    /// A codebook does not have the 256 entries its 8-bit indices address.
    #[error("codebook {key} has {len} entries, expected 256")]
    CodebookLength {
        /// The key of the codebook.
        key: &'static str,
        /// Its entries.
        len: usize,
    },

    /// `shN.bands` is outside 0..=3.
    #[error("shN.bands is {0}, expected 0..=3")]
    BandsOutOfRange(u64),

    /// `count` exceeds the configured maximum number of splats.
    #[error("count {count} exceeds the limit of {limit} splats")]
    CountTooLarge {
        /// The splats the file claims.
        count: u64,
        /// The most allowed.
        limit: u64,
    },

    /// meta.json names an image that the caller (or the bundle) could not supply.
    #[error("missing SOG image file {0}")]
    MissingImage(String),

    /// An image is not a decodable WebP (or is animated, which SOG never uses).
    #[error("could not decode WebP image {file}: {message}")]
    WebP {
        /// The image's file name.
        file: String,
        /// The WebP decoder's message.
        message: String,
    },

    /// An image header claims more texels than the limits allow, refused before decoding.
    #[error("WebP image {file} is {width}x{height}, more than the limit of {limit} texels")]
    ImageTooLarge {
        /// The image's file name.
        file: String,
        /// Its width in texels.
        width: u32,
        /// Its height in texels.
        height: u32,
        /// The most texels allowed.
        limit: u64,
    },

    /// An image has fewer texels than there are splats.
    #[error("WebP image {file} is {width}x{height}, too small for {count} splats")]
    ImageTooSmall {
        /// The image's file name.
        file: String,
        /// Its width in texels.
        width: u32,
        /// Its height in texels.
        height: u32,
        /// The splats it should hold.
        count: usize,
    },

    /// The SH centroid image does not have the width its band count implies.
    #[error("SH centroid image {file} is {width} texels wide, expected {expected}")]
    CentroidWidth {
        /// The image's file name.
        file: String,
        /// Its width in texels.
        width: u32,
        /// The widths its band count allows.
        expected: String,
    },

    /// A splat's SH label points past the end of the centroid palette.
    #[error("splat {splat} has SH label {label}, but the palette holds only {palette} entries")]
    LabelOutOfRange {
        /// The splat's index.
        splat: usize,
        /// Its label.
        label: u32,
        /// The palette's entries.
        palette: usize,
    },
}
