//! The 4096-byte main header and the 1024-byte section headers, checked against the
//! bytes actually present, and where each section's tables and records lie.
//!
//! Every size is worked out in u64 from the counts (as both readers do: a section's own
//! `storageSizeBytes` field is not read, because the viewer's progressive buffers
//! write 0 there) and compared with the file's length before anything is sliced or
//! allocated.

use super::error::{BucketProblem, Counted, KsplatError, SectionPart};

/// Bytes of the main header (`SplatBuffer.HeaderSizeBytes`).
pub(crate) const MAIN_HEADER_LEN: usize = 4096;
/// Bytes of one section header (`SplatBuffer.SectionHeaderSizeBytes`).
pub(crate) const SECTION_HEADER_LEN: usize = 1024;
/// Bytes of one bucket centre: three f32.
const BUCKET_ENTRY_LEN: u16 = 12;
/// Bytes of one partially filled bucket's length: a u32.
const BUCKET_LENGTH_LEN: u64 = 4;
/// The centre quantisation range a section header's 0 stands for at levels 1 and 2
/// (`CompressionLevels[1|2].ScaleRange`).
const DEFAULT_SCALE_RANGE: u32 = 32767;
/// Half the default SH range (`Constants.SphericalHarmonics8BitCompressionRange / 2`),
/// which the library reads in place of a header minimum or maximum of 0.
const DEFAULT_SH_HALF_RANGE: f32 = 1.5;
/// The 4-byte words of fields at the start of both headers; the rest is zero padding.
const FIELD_WORDS: usize = 11;

/// How a record stores its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// f32 everywhere.
    Zero,
    /// Centres as u16 offsets from their bucket's centre; the rest as f16.
    One,
    /// As level 1, with SH as u8 over the main header's range.
    Two,
}

impl Level {
    /// Bytes of a record's centre, scale, rotation and colour.
    pub(crate) fn fixed_len(self) -> usize {
        match self {
            Level::Zero => 44,
            Level::One | Level::Two => 24,
        }
    }

    /// Bytes of one SH component.
    fn sh_component_len(self) -> usize {
        match self {
            Level::Zero => 4,
            Level::One => 2,
            Level::Two => 1,
        }
    }
}

/// SH components a record of `degree` (0..=2) stores: 3 channels × 0, 3 or 8.
pub(crate) fn sh_components(degree: u8) -> usize {
    match degree {
        0 => 0,
        1 => 9,
        _ => 24,
    }
}

/// What the main header says, once checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MainHeader {
    pub level: Level,
    pub section_count: u32,
    pub splat_count: u32,
    /// Level 2's SH range, after the library's rule that 0 (or NaN) means ∓1.5.
    pub sh_min: f32,
    pub sh_max: f32,
}

/// Levels 1 and 2: the bucket table that centres are stored relative to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Buckets<'a> {
    /// Splats in each full bucket.
    pub size: u32,
    /// Full buckets; they come first, then the partially filled ones.
    pub full: u32,
    /// One little-endian u32 per partially filled bucket.
    pub partial_lengths: &'a [u8],
    /// 3 × f32 per bucket, full ones first.
    pub centres: &'a [u8],
    /// A stored u16 of `range` is an offset of 0.
    pub range: f64,
    /// World units per u16 step: half the bucket cell over `range`.
    pub step: f64,
}

/// One section, checked against the file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Section<'a> {
    pub splat_count: u32,
    pub sh_degree: u8,
    pub record_len: usize,
    /// `None` at level 0, whose centres are absolute.
    pub buckets: Option<Buckets<'a>>,
    /// `splat_count` records of `record_len` bytes, exactly.
    pub records: &'a [u8],
}

/// A whole file's layout: every count checked, every slice inside the file.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Layout<'a> {
    pub header: MainHeader,
    pub sections: Vec<Section<'a>>,
    /// The lowest SH degree of any section, which the library loads every section at.
    pub sh_degree: u8,
}

/// The first eleven 4-byte words of a header: its fields (the rest is zero padding).
fn words(bytes: &[u8]) -> Option<[[u8; 4]; FIELD_WORDS]> {
    bytes
        .as_chunks::<4>()
        .0
        .first_chunk::<FIELD_WORDS>()
        .copied()
}

fn u32_of(word: [u8; 4]) -> u32 {
    u32::from_le_bytes(word)
}

fn f32_of(word: [u8; 4]) -> f32 {
    f32::from_le_bytes(word)
}

/// The low and high u16 of a word.
fn u16s_of([a, b, c, d]: [u8; 4]) -> (u16, u16) {
    (u16::from_le_bytes([a, b]), u16::from_le_bytes([c, d]))
}

/// JavaScript's `value || fallback` on a number: 0, −0 and NaN are falsy.
fn or_default(value: f32, fallback: f32) -> f32 {
    if value == 0.0 || value.is_nan() {
        fallback
    } else {
        value
    }
}

/// Reads and checks the main header.
fn parse_main(bytes: &[u8]) -> Result<MainHeader, KsplatError> {
    let too_short = KsplatError::TooShort { len: bytes.len() };
    if bytes.len() < MAIN_HEADER_LEN {
        return Err(too_short);
    }
    let [
        [major, minor, _, _],
        max_sections,
        sections,
        max_splats,
        splats,
        level,
        _centre_x,
        _centre_y,
        _centre_z,
        sh_min,
        sh_max,
    ] = words(bytes).ok_or(too_short)?;
    // The library also takes any major version above 0, but none exists, and its
    // layout could not be known; splat-transform reads 0.x only.
    if major != 0 || minor < 1 {
        return Err(KsplatError::UnsupportedVersion { major, minor });
    }
    let level = match u16s_of(level).0 {
        0 => Level::Zero,
        1 => Level::One,
        2 => Level::Two,
        other => return Err(KsplatError::UnknownCompressionLevel(other)),
    };
    let section_count = u32_of(max_sections);
    if section_count == 0 {
        return Err(KsplatError::NoSections);
    }
    let splat_count = u32_of(max_splats);
    for (counted, loaded, max) in [
        (Counted::Sections, u32_of(sections), section_count),
        (Counted::Splats, u32_of(splats), splat_count),
    ] {
        if loaded != max {
            return Err(KsplatError::HeaderCountsDiffer {
                counted,
                loaded,
                max,
            });
        }
    }
    Ok(MainHeader {
        level,
        section_count,
        splat_count,
        sh_min: or_default(f32_of(sh_min), -DEFAULT_SH_HALF_RANGE),
        sh_max: or_default(f32_of(sh_max), DEFAULT_SH_HALF_RANGE),
    })
}

/// Reads and checks every header and places every section's bytes.
pub(crate) fn parse(bytes: &[u8]) -> Result<Layout<'_>, KsplatError> {
    let header = parse_main(bytes)?;
    let len = bytes.len() as u64;
    let headers_end =
        MAIN_HEADER_LEN as u64 + SECTION_HEADER_LEN as u64 * u64::from(header.section_count);
    if headers_end > len {
        let present = (len - MAIN_HEADER_LEN as u64) / SECTION_HEADER_LEN as u64;
        return Err(KsplatError::SectionTruncated {
            section: u32::try_from(present).unwrap_or(u32::MAX),
            part: SectionPart::Headers,
            needed: headers_end - MAIN_HEADER_LEN as u64,
            available: len - MAIN_HEADER_LEN as u64,
        });
    }
    // Bounded by the check above: at most one per 1024 bytes of the file.
    let mut sections = Vec::with_capacity(header.section_count as usize);
    let mut base = headers_end;
    let mut first_splat = 0u64;
    for index in 0..header.section_count {
        let at = MAIN_HEADER_LEN + SECTION_HEADER_LEN * index as usize;
        let fields = bytes
            .get(at..)
            .and_then(words)
            .ok_or(KsplatError::TooShort { len: bytes.len() })?;
        let section = parse_section(bytes, &header, index, fields, base, first_splat)?;
        base += section.storage;
        first_splat += u64::from(section.section.splat_count);
        sections.push(section.section);
    }
    if first_splat != u64::from(header.splat_count) {
        return Err(KsplatError::SplatCountMismatch {
            in_header: header.splat_count,
            in_sections: first_splat,
        });
    }
    if base != len {
        return Err(KsplatError::TrailingBytes { extra: len - base });
    }
    let sh_degree = sections.iter().map(|s| s.sh_degree).min().unwrap_or(0);
    let range_ok =
        header.sh_min.is_finite() && header.sh_max.is_finite() && header.sh_min <= header.sh_max;
    if header.level == Level::Two && sh_degree > 0 && !range_ok {
        return Err(KsplatError::BadShRange {
            min: header.sh_min,
            max: header.sh_max,
        });
    }
    Ok(Layout {
        header,
        sections,
        sh_degree,
    })
}

/// A section and the bytes it spans from its base.
struct Placed<'a> {
    section: Section<'a>,
    storage: u64,
}

/// The slice `[start, start + size)` of the file, or how much of it is missing.
fn span(bytes: &[u8], start: u64, size: u64) -> Result<&[u8], (u64, u64)> {
    let available = (bytes.len() as u64).saturating_sub(start);
    if size > available {
        return Err((size, available));
    }
    // Both ends are within the file, so they fit a usize.
    Ok(bytes
        .get(start as usize..(start + size) as usize)
        .unwrap_or_default())
}

fn parse_section<'a>(
    bytes: &'a [u8],
    header: &MainHeader,
    index: u32,
    fields: [[u8; 4]; FIELD_WORDS],
    base: u64,
    first_splat: u64,
) -> Result<Placed<'a>, KsplatError> {
    let [
        loaded,
        max_splats,
        bucket_size,
        bucket_count,
        block_size,
        entry_len,
        scale_range,
        _storage_size,
        full_buckets,
        partial_buckets,
        sh_degree,
    ] = fields;
    let splat_count = u32_of(max_splats);
    let loaded = u32_of(loaded);
    if loaded != splat_count {
        return Err(KsplatError::SectionCountsDiffer {
            section: index,
            loaded,
            max: splat_count,
        });
    }
    let sh_degree = match u16s_of(sh_degree).0 {
        degree @ 0..=2 => degree as u8,
        degree => {
            return Err(KsplatError::UnsupportedShDegree {
                section: index,
                degree,
            });
        }
    };
    let bad_buckets = |problem| KsplatError::Buckets {
        section: index,
        problem,
    };
    let bucketed = header.level != Level::Zero;
    let entry_len = u16s_of(entry_len).0;
    let bucket_count = u32_of(bucket_count);
    // Level 0 leaves the table empty; the library would still skip whatever a
    // header declared, so its bytes are placed (and checked) the same way.
    if bucketed && entry_len != BUCKET_ENTRY_LEN {
        return Err(bad_buckets(BucketProblem::StorageSize(entry_len)));
    }
    let partial_buckets = u32_of(partial_buckets);
    let truncated = |part| {
        move |(needed, available)| KsplatError::SectionTruncated {
            section: index,
            part,
            needed,
            available,
        }
    };
    let lengths_len = BUCKET_LENGTH_LEN * u64::from(partial_buckets);
    let partial_lengths =
        span(bytes, base, lengths_len).map_err(truncated(SectionPart::BucketLengths))?;
    let centres_len = u64::from(entry_len) * u64::from(bucket_count);
    let centres = span(bytes, base + lengths_len, centres_len)
        .map_err(truncated(SectionPart::BucketCentres))?;
    let data_base = base + lengths_len + centres_len;

    let buckets = if bucketed {
        let full = u32_of(full_buckets);
        if u64::from(full) + u64::from(partial_buckets) != u64::from(bucket_count) {
            return Err(bad_buckets(BucketProblem::Counts {
                full,
                partial: partial_buckets,
                total: bucket_count,
            }));
        }
        let size = u32_of(bucket_size);
        let in_partial: u64 = partial_lengths
            .as_chunks::<4>()
            .0
            .iter()
            .map(|l| u64::from(u32::from_le_bytes(*l)))
            .sum();
        let in_buckets = u64::from(full) * u64::from(size) + in_partial;
        if in_buckets != u64::from(splat_count) {
            return Err(bad_buckets(BucketProblem::Splats {
                in_buckets,
                in_section: splat_count,
            }));
        }
        let block_size = f32_of(block_size);
        if !block_size.is_finite() {
            return Err(bad_buckets(BucketProblem::BlockSize(block_size)));
        }
        let range = match u32_of(scale_range) {
            0 => DEFAULT_SCALE_RANGE,
            r => r,
        };
        // The library's arithmetic, in f64 as JavaScript does it.
        let range = f64::from(range);
        Some(Buckets {
            size,
            full,
            partial_lengths,
            centres,
            range,
            step: f64::from(block_size) / 2.0 / range,
        })
    } else {
        None
    };

    let record_len =
        header.level.fixed_len() + sh_components(sh_degree) * header.level.sh_component_len();
    let records_len = record_len as u64 * u64::from(splat_count);
    let records = span(bytes, data_base, records_len).map_err(|(_, available)| {
        KsplatError::SplatsTruncated {
            section: index,
            first_missing: first_splat + available / record_len as u64,
            total: header.splat_count,
        }
    })?;
    Ok(Placed {
        section: Section {
            splat_count,
            sh_degree,
            record_len,
            buckets,
            records,
        },
        storage: data_base + records_len - base,
    })
}
