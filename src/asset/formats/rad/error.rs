//! Everything that can go wrong reading or writing a `.rad` file, each case named so a
//! caller can tell a truncated download from a file of another kind.

/// Why a `.rad` file did not decode (or could not be written).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RadError {
    /// The first four bytes are neither `RAD0` nor `RADC`.
    #[error("no RAD0 or RADC magic at the start")]
    BadMagic,
    /// The file ends inside a part it announces.
    #[error("truncated in {what}: needs {needed} bytes from offset {at}, the file has {len}")]
    Truncated {
        /// The part: "header", "chunk 2", "chunk 2's center data", ...
        what: String,
        /// Where the part starts.
        at: u64,
        /// Its length.
        needed: u64,
        /// The file's length.
        len: u64,
    },
    /// A JSON block (the header or a chunk's) does not parse or lacks a key.
    #[error("{what}: invalid JSON: {message}")]
    Json {
        /// "header" or "chunk N".
        what: String,
        /// serde_json's message.
        message: String,
    },
    /// A version or type this reader does not know.
    #[error("{what} is {found}; this reader knows {expected}")]
    Unsupported {
        /// The field.
        what: &'static str,
        /// Its value in the file.
        found: String,
        /// The value read here.
        expected: &'static str,
    },
    /// The header's counts disagree with the chunks'.
    #[error("the header says {header} splats, its chunks hold {chunks}")]
    CountMismatch {
        /// The header's `count`.
        header: u64,
        /// The chunks' counts summed.
        chunks: u64,
    },
    /// A chunk does not start where the splats before it end.
    #[error("chunk {chunk} starts at splat {base}, but {expected} splats come before it")]
    ChunkBase {
        /// The chunk's position in the header's list.
        chunk: usize,
        /// Its `base`.
        base: u64,
        /// The splats of the chunks before it.
        expected: u64,
    },
    /// A chunk holds more splats than this reader takes in one chunk.
    #[error("chunk {chunk} claims {count} splats; at most {max} are read from one chunk")]
    ChunkTooLarge {
        /// The chunk.
        chunk: usize,
        /// Its `count`.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// A chunk lacks a property every splat needs.
    #[error("chunk {chunk} has no {property} property")]
    MissingProperty {
        /// The chunk.
        chunk: usize,
        /// The property's name in the file.
        property: &'static str,
    },
    /// A property is stored in an encoding this property cannot have, or one the
    /// reader does not know.
    #[error("chunk {chunk}: {property} stored as {encoding}, which it cannot be")]
    BadEncoding {
        /// The chunk.
        chunk: usize,
        /// The property.
        property: String,
        /// Its encoding.
        encoding: String,
    },
    /// A quantised property lacks its range.
    #[error("chunk {chunk}: {property} ({encoding}) has no {bound}")]
    MissingRange {
        /// The chunk.
        chunk: usize,
        /// The property.
        property: String,
        /// Its encoding.
        encoding: String,
        /// `min` or `max`.
        bound: &'static str,
    },
    /// A property's data inflates to another size than its count and encoding need.
    #[error("chunk {chunk}: {property} holds {got} bytes, {expected} expected")]
    PropertySize {
        /// The chunk.
        chunk: usize,
        /// The property.
        property: String,
        /// Bytes its count and encoding need.
        expected: u64,
        /// Bytes found (at most `expected + 1`: reading stops there).
        got: u64,
    },
    /// A property's compressed bytes are too few to inflate to what its count needs.
    #[error(
        "chunk {chunk}: {property}'s {stored} compressed bytes cannot hold the {expected} its count needs"
    )]
    Unexpandable {
        /// The chunk.
        chunk: usize,
        /// The property.
        property: String,
        /// Its compressed bytes.
        stored: u64,
        /// Bytes its count and encoding need.
        expected: u64,
    },
    /// A property's deflate stream is corrupt.
    #[error("chunk {chunk}: {property} does not inflate: {message}")]
    Inflate {
        /// The chunk.
        chunk: usize,
        /// The property.
        property: String,
        /// The inflater's message.
        message: String,
    },
    /// The header's SH degree is above 3.
    #[error("maxSh is {0}; spherical harmonics stop at degree 3")]
    ShDegree(u64),
    /// A clustered file's SH labels name a codebook entry that is not there.
    #[error("splat {splat} names SH code {label}, the codebook has {codes}")]
    ShLabel {
        /// The splat.
        splat: u64,
        /// Its label.
        label: u32,
        /// Entries in the codebook.
        codes: u64,
    },
    /// The level-of-detail tree's child ranges are not a tree rooted at node 0.
    #[error("level-of-detail tree: {0}")]
    Tree(String),
    /// A chunked file names a chunk file that could not be read.
    #[error("chunk {chunk} is in {file}, which could not be read")]
    MissingChunkFile {
        /// The chunk.
        chunk: usize,
        /// The file its range names.
        file: String,
    },
    /// What was asked to be written cannot be a `.rad` file.
    #[error("cannot write: {0}")]
    Write(String),
    /// The file cannot be read a chunk at a time (`stream::RadStreamIndex`).
    #[error("cannot be streamed: {0}")]
    NotStreamable(String),
}
