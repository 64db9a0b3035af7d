//! Everything that can go wrong reading an SPZ file, each case named so a caller (or a
//! test) can tell a truncated download from a file of the wrong kind.

use std::fmt;

/// The six per-splat attribute arrays, in the order SPZ stores them (one gzip payload
/// for v1–3, one zstd stream each for v4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attribute {
    /// The centres.
    Positions,
    /// The opacities.
    Alphas,
    /// The DC colours.
    Colors,
    /// The log scales.
    Scales,
    /// The rotations.
    Rotations,
    /// The spherical-harmonic coefficients beyond DC.
    Sh,
}

impl Attribute {
    /// Every attribute, in the order SPZ stores them.
    pub const ALL: [Attribute; 6] = [
        Attribute::Positions,
        Attribute::Alphas,
        Attribute::Colors,
        Attribute::Scales,
        Attribute::Rotations,
        Attribute::Sh,
    ];
}

impl fmt::Display for Attribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Attribute::Positions => "positions",
            Attribute::Alphas => "alphas",
            Attribute::Colors => "colours",
            Attribute::Scales => "scales",
            Attribute::Rotations => "rotations",
            Attribute::Sh => "spherical harmonics",
        })
    }
}

/// The part of a file that ended early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The 16-byte header inside the gzip member (v1–3) or the 32-byte v4 header.
    Header,
    /// The v4 table of contents.
    Toc,
    /// The attribute arrays of a v1–3 payload, or one v4 stream.
    Attribute(Attribute),
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Section::Header => f.write_str("header"),
            Section::Toc => f.write_str("v4 table of contents"),
            Section::Attribute(a) => write!(f, "{a} data"),
        }
    }
}

/// How the bytes around the header are packaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    /// One gzip member holding the 16-byte header and the attributes (v1–3).
    Gzip,
    /// A raw 32-byte NGSP header, a table of contents and zstd streams (v4).
    Ngsp,
}

impl fmt::Display for Container {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Container::Gzip => "gzip (versions 1-3)",
            Container::Ngsp => "raw NGSP (version 4)",
        })
    }
}

/// A v4 table of contents that does not describe the streams the header implies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TocProblem {
    /// The TOC would overlap the 32-byte header.
    OffsetInsideHeader {
        /// The TOC's offset in the file.
        offset: u32,
    },
    /// The TOC runs past the end of the file.
    OutsideFile {
        /// The byte it ends at.
        toc_end: u64,
        /// The file's length.
        file_len: u64,
    },
    /// The header's stream count differs from the non-empty attributes it implies.
    StreamCount {
        /// The header's stream count.
        found: u8,
        /// The streams its counts imply.
        expected: u8,
    },
    /// A stream's declared uncompressed size differs from the header's count.
    StreamSize {
        /// The stream's attribute.
        attribute: Attribute,
        /// The uncompressed size the TOC declares.
        found: u64,
        /// The size the header's counts imply.
        expected: u64,
    },
}

impl fmt::Display for TocProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TocProblem::OffsetInsideHeader { offset } => {
                write!(f, "TOC offset {offset} lies inside the 32-byte header")
            }
            TocProblem::OutsideFile { toc_end, file_len } => {
                write!(f, "TOC ends at byte {toc_end} of a {file_len}-byte file")
            }
            TocProblem::StreamCount { found, expected } => {
                write!(
                    f,
                    "header lists {found} streams, its counts imply {expected}"
                )
            }
            TocProblem::StreamSize {
                attribute,
                found,
                expected,
            } => write!(
                f,
                "{attribute} stream declares {found} uncompressed bytes, the header implies {expected}"
            ),
        }
    }
}

/// Why an SPZ file did not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpzError {
    /// No bytes at all.
    #[error("empty input: an SPZ file holds at least a header")]
    Empty,
    /// The bytes start with neither a gzip member nor the NGSP magic.
    #[error(
        "not an SPZ file: it starts with {found:02x?}, not a gzip member (1f 8b) or the NGSP magic"
    )]
    UnrecognizedContainer {
        /// The file's first bytes.
        found: Vec<u8>,
    },
    /// The header's magic is not "NGSP".
    #[error("bad magic {found:#010x} in the SPZ header (expected 0x5053474e, \"NGSP\")")]
    BadMagic {
        /// The magic found.
        found: u32,
    },
    /// A version this decoder does not read, or one its container cannot hold.
    #[error("SPZ version {version} cannot be stored in a {container} container")]
    UnsupportedVersion {
        /// The header's version.
        version: u32,
        /// The container it came in.
        container: Container,
    },
    /// The gzip member does not inflate (v1–3): flate2's message.
    #[error("gzip stream is invalid: {0}")]
    Gzip(String),
    /// Every attribute byte arrived, but the member's end and its CRC did not, so the
    /// data cannot be trusted (most often a download cut short by a few bytes).
    #[error(
        "gzip member is cut off after the {payload} attribute bytes: its end and CRC are missing"
    )]
    GzipTrailerMissing {
        /// The attribute bytes that did arrive.
        payload: u64,
    },
    /// An attribute's zstd stream does not decompress (v4).
    #[error("zstd stream of the {attribute} is invalid: {message}")]
    Zstd {
        /// The stream's attribute.
        attribute: Attribute,
        /// The zstd decoder's message.
        message: String,
    },
    /// The file ends inside `section`. For the header and TOC the counts are raw file
    /// bytes; for v1–3 attributes they are decompressed payload bytes (all six arrays
    /// together); for a v4 stream they are its compressed bytes, or its decompressed
    /// bytes when the frame itself ends early.
    #[error("{section} is truncated: expected {expected} bytes, got {got}")]
    Truncated {
        /// The part that ends early.
        section: Section,
        /// Bytes it should hold.
        expected: u64,
        /// Bytes it holds.
        got: u64,
    },
    /// The header claims more splats than [`MAX_POINTS`](super::MAX_POINTS).
    #[error("header claims {num_points} splats, more than the {max} this loader accepts")]
    TooManyPoints {
        /// The splats the header claims.
        num_points: u32,
        /// The most accepted.
        max: u32,
    },
    /// The header claims more splats than the compressed bytes could possibly expand
    /// to: refused before allocating for them.
    #[error(
        "header claims {num_points} splats ({needed} bytes of attributes), more than \
         {available} compressed bytes can expand to"
    )]
    CountExceedsData {
        /// The splats the header claims.
        num_points: u32,
        /// The attribute bytes they need.
        needed: u64,
        /// The compressed bytes there are.
        available: u64,
    },
    /// The header's SH degree is above 4.
    #[error("SH degree {0} is out of range: SPZ stores degrees 0 to 4")]
    ShDegreeOutOfRange(u8),
    /// A v4 table of contents that does not fit the header.
    #[error("v4 table of contents is inconsistent: {0}")]
    TocInconsistent(TocProblem),
}
