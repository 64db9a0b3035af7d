//! Everything that can be wrong with a PLY file, as one typed error.

use thiserror::Error;

/// Why a PLY file could not be decoded. The `Display` text names the problem.
///
/// A body that is too short is reported in one of two ways:
/// [`PlyError::TooManyVertices`] when the declared vertex count could not fit in the
/// whole file (a corrupt or hostile header; checked before anything is allocated), and
/// [`PlyError::Truncated`] when the count is plausible but the data ends early (a cut
/// download).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlyError {
    /// Zero bytes.
    #[error("empty file: not a PLY file")]
    Empty,
    /// The first line is not `ply`.
    #[error("not a PLY file: the first line is not `ply`")]
    NotPly,
    /// The file ends before the `end_header` line.
    #[error("PLY header has no `end_header` line (truncated header?)")]
    UnterminatedHeader,
    /// The header text was rejected by the header parser (ply-rs).
    #[error("invalid PLY header: {0}")]
    InvalidHeader(String),
    /// The `format` line names an encoding other than `ascii`,
    /// `binary_little_endian` or `binary_big_endian`.
    #[error(
        "unsupported format `{0}` (expected ascii, binary_little_endian or binary_big_endian 1.0)"
    )]
    UnsupportedFormat(String),
    /// Two elements share a name, so the body layout is ambiguous.
    #[error("duplicate element {0} in the header")]
    DuplicateElement(String),
    /// Two properties of one element share a name.
    #[error("duplicate property {property} in element {element}")]
    DuplicateProperty {
        /// The element that declares it twice.
        element: String,
        /// The repeated property name.
        property: String,
    },
    /// The header declares no element named `vertex`.
    #[error("no vertex element")]
    NoVertexElement,
    /// A property of the vertex element is a list; splat records must be fixed-size.
    #[error("property {0} has list type (the vertex element must hold scalars only)")]
    ListProperty(String),
    /// A property every 3DGS splat needs is absent.
    #[error("missing property {0}")]
    MissingProperty(String),
    /// The number of `f_rest_*` properties is not 0, 9, 24 or 45 (SH degree 0 to 3).
    #[error("unsupported f_rest count {0} (expected 0, 9, 24 or 45 for SH degree 0-3)")]
    UnsupportedFRest(usize),
    /// A list before the vertex element has a count type that is not an integer.
    #[error("element {element}: list property {property} has non-integer count type {count_type}")]
    ListCountType {
        /// The element holding the list.
        element: String,
        /// The list property.
        property: String,
        /// The declared count type, e.g. `float`.
        count_type: &'static str,
    },
    /// A list before the vertex element has a negative length.
    #[error("element {element} record {index}: negative list length {length}")]
    NegativeListLength {
        /// The element holding the list.
        element: String,
        /// The record (0-based) with the bad list.
        index: usize,
        /// The length as stored.
        length: i64,
    },
    /// The vertex count cannot fit in the file at all.
    #[error("header declares {declared} vertices but the file holds at most {max}")]
    TooManyVertices {
        /// The count in the header.
        declared: usize,
        /// An upper bound on how many vertices the file's bytes could hold.
        max: usize,
    },
    /// The body ends before all records of an element are read.
    #[error("body truncated at {element} {at} of {count}")]
    Truncated {
        /// The element being read (`vertex` or one before it).
        element: String,
        /// How many complete records were present.
        at: usize,
        /// How many the header declares.
        count: usize,
    },
    /// An ASCII value that is not a number.
    #[error("line {line}: cannot parse `{token}` as a number (property {property})")]
    AsciiNumber {
        /// 1-based line in the file.
        line: usize,
        /// The offending token (shortened if long).
        token: String,
        /// The property it was meant for.
        property: String,
    },
    /// An ASCII vertex line with the wrong number of values.
    #[error("line {line}: vertex {vertex} has {found} values, expected {expected}")]
    AsciiValueCount {
        /// 1-based line in the file.
        line: usize,
        /// 0-based vertex index.
        vertex: usize,
        /// Values on the line.
        found: usize,
        /// Properties in the vertex element.
        expected: usize,
    },
    /// A compressed PLY with an ASCII body; PlayCanvas writes binary only.
    #[error("compressed PLY (chunk and packed vertex elements) with an ASCII body")]
    CompressedAscii,
    /// A property of the compressed layout has another type than it must.
    #[error("compressed PLY: property {property} is {found}, expected {expected}")]
    CompressedType {
        /// `element.property`.
        property: String,
        /// The type the layout needs.
        expected: &'static str,
        /// The type the header declares.
        found: &'static str,
    },
    /// The chunk count does not match the vertex count (one chunk per 256 splats).
    #[error(
        "compressed PLY: {chunks} chunks for {vertices} vertices (expected {expected}, one per 256)"
    )]
    CompressedChunkCount {
        /// Chunks in the header.
        chunks: usize,
        /// Vertices in the header.
        vertices: usize,
        /// `ceil(vertices / 256)`.
        expected: usize,
    },
    /// The `sh` element has another count than `vertex`.
    #[error("compressed PLY: {sh} sh records for {vertices} vertices")]
    CompressedShCount {
        /// Records of the `sh` element.
        sh: usize,
        /// Vertices in the header.
        vertices: usize,
    },
}
