//! Everything that can go wrong reading a `.ksplat` file, each case named so a caller
//! (or a test) can tell a truncated download from a corrupt header or a file of
//! another kind.

use std::fmt;

/// The part of a section that ends before the file does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectionPart {
    /// The 1024-byte section headers that follow the main header.
    Headers,
    /// The table of partially filled buckets' lengths (u32 each).
    BucketLengths,
    /// The bucket centres (3 × f32 each).
    BucketCentres,
}

impl fmt::Display for SectionPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SectionPart::Headers => "section headers",
            SectionPart::BucketLengths => "partial-bucket length table",
            SectionPart::BucketCentres => "bucket centres",
        })
    }
}

/// A section whose bucket table does not describe its splats (levels 1 and 2 place
/// every centre relative to its bucket's, so a wrong table misplaces every splat).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BucketProblem {
    /// Full plus partially filled buckets differ from the bucket count.
    Counts {
        /// Full buckets.
        full: u32,
        /// Partially filled buckets.
        partial: u32,
        /// The section's bucket count.
        total: u32,
    },
    /// The buckets hold a different number of splats than the section.
    Splats {
        /// Splats the full and partial buckets hold together.
        in_buckets: u64,
        /// Splats the section holds.
        in_section: u32,
    },
    /// A bucket entry is not 12 bytes (three f32), the only layout the readers know.
    StorageSize(u16),
    /// The bucket cell size is not finite, so no centre could be placed.
    BlockSize(f32),
}

impl fmt::Display for BucketProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BucketProblem::Counts {
                full,
                partial,
                total,
            } => write!(
                f,
                "{full} full and {partial} partially filled buckets, but a bucket count of {total}"
            ),
            BucketProblem::Splats {
                in_buckets,
                in_section,
            } => write!(
                f,
                "the buckets hold {in_buckets} splats, the section {in_section}"
            ),
            BucketProblem::StorageSize(size) => {
                write!(f, "bucket entries of {size} bytes (expected 12)")
            }
            BucketProblem::BlockSize(size) => write!(f, "bucket block size {size}"),
        }
    }
}

/// Which pair of counts in the main header disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// `sectionCount` and `maxSectionCount`.
    Sections,
    /// `splatCount` and `maxSplatCount`.
    Splats,
}

impl fmt::Display for Counted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Counted::Sections => "sections",
            Counted::Splats => "splats",
        })
    }
}

/// Why a `.ksplat` file did not decode.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KsplatError {
    /// Shorter than the fixed 4096-byte main header.
    #[error("file is {len} bytes, shorter than the 4096-byte .ksplat main header")]
    TooShort {
        /// The file's length.
        len: usize,
    },
    /// A version other than 0.1 or a later 0.x (the only layout there is).
    #[error("unsupported .ksplat version {major}.{minor} (this decoder reads 0.1 and later 0.x)")]
    UnsupportedVersion {
        /// The major version byte.
        major: u8,
        /// The minor version byte.
        minor: u8,
    },
    /// A compression level other than 0, 1 or 2.
    #[error("unknown compression level {0} (levels 0, 1 and 2 exist)")]
    UnknownCompressionLevel(u16),
    /// The main header lists no sections.
    #[error("the main header lists no sections")]
    NoSections,
    /// The main header's "loaded" count differs from its total: the file was saved
    /// part way through a progressive load, or the header is corrupt.
    #[error("the main header marks {loaded} of {max} {counted} as loaded (a partial file?)")]
    HeaderCountsDiffer {
        /// Which counts.
        counted: Counted,
        /// The "loaded" count.
        loaded: u32,
        /// The total.
        max: u32,
    },
    /// A section header's "loaded" splat count differs from its total.
    #[error("section {section} marks {loaded} of {max} splats as loaded (a partial file?)")]
    SectionCountsDiffer {
        /// The section.
        section: u32,
        /// The "loaded" count.
        loaded: u32,
        /// The total.
        max: u32,
    },
    /// A section's SH degree is not 0, 1 or 2 (no writer makes degree 3, and its layout
    /// is not defined).
    #[error("section {section} has SH degree {degree}; .ksplat stores degrees 0, 1 and 2")]
    UnsupportedShDegree {
        /// The section.
        section: u32,
        /// The degree it declares.
        degree: u16,
    },
    /// A section's bucket table is inconsistent.
    #[error("section {section}: {problem}")]
    Buckets {
        /// The section.
        section: u32,
        /// What is wrong.
        problem: BucketProblem,
    },
    /// The file ends inside a section's headers or bucket tables.
    #[error(
        "file is truncated in the {part} of section {section}: they need {needed} bytes, \
         {available} remain"
    )]
    SectionTruncated {
        /// The section.
        section: u32,
        /// The part that ends early.
        part: SectionPart,
        /// Bytes it needs.
        needed: u64,
        /// Bytes left in the file from its start.
        available: u64,
    },
    /// The file ends inside a section's splat records.
    #[error(
        "file is truncated in section {section}: splat {first_missing} of {total} and later \
         are missing"
    )]
    SplatsTruncated {
        /// The section.
        section: u32,
        /// The file-wide index of the first splat whose record is incomplete.
        first_missing: u64,
        /// The splats the file declares.
        total: u32,
    },
    /// The sections together hold a different number of splats than the main header.
    #[error("the sections hold {in_sections} splats, the main header says {in_header}")]
    SplatCountMismatch {
        /// The main header's `maxSplatCount`.
        in_header: u32,
        /// The sum of the sections' counts.
        in_sections: u64,
    },
    /// Bytes follow the last section (both the library and splat-transform write the
    /// file to its exact size).
    #[error("{extra} bytes follow the last section")]
    TrailingBytes {
        /// How many.
        extra: u64,
    },
    /// Level 2 quantises SH to bytes over the header's range, which must be finite
    /// and ordered.
    #[error("the SH range [{min}, {max}] of the main header is not a finite, ordered range")]
    BadShRange {
        /// The range's minimum as read.
        min: f32,
        /// The range's maximum as read.
        max: f32,
    },
}
