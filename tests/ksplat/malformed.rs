//! Real files broken on purpose: truncated anywhere, header fields changed, other
//! formats' files. Each gets its own error, and `is_ksplat` agrees with `decode`.

use crate::common::*;
use bevy_splat::asset::formats::ksplat::{
    BucketProblem, Counted, KsplatError, SectionPart, decode, is_ksplat,
};

fn err(bytes: &[u8]) -> KsplatError {
    assert!(!is_ksplat(bytes));
    decode(bytes).expect_err("decodes")
}

fn with_u32(bytes: &[u8], at: usize, value: u32) -> Vec<u8> {
    let mut b = bytes.to_vec();
    set_u32(&mut b, at, value);
    b
}

fn with_bytes(bytes: &[u8], at: usize, value: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + value.len()].copy_from_slice(value);
    b
}

/// Every prefix of a file is refused, with the part where it ends.
#[test]
fn every_truncation_is_refused() {
    for fixture in [&FIXTURES[1], &FIXTURES[4]] {
        let bytes = fixture.bytes();
        let data = bytes.len() - fixture.splats * record_len(fixture);
        let record = record_len(fixture);
        for len in 0..bytes.len() {
            let e = decode(&bytes[..len]).expect_err("a prefix decodes");
            let ok = match e {
                KsplatError::TooShort { len: l } => len < 4096 && l == len,
                KsplatError::SectionTruncated {
                    part: SectionPart::Headers,
                    section: 0,
                    ..
                } => (4096..5120).contains(&len),
                KsplatError::SectionTruncated { section: 0, .. } => (5120..data).contains(&len),
                KsplatError::SplatsTruncated {
                    section: 0,
                    first_missing,
                    total,
                } => {
                    len >= data
                        && first_missing == ((len - data) / record) as u64
                        && total as usize == fixture.splats
                }
                _ => false,
            };
            assert!(ok, "{} cut at {len}: {e:?}", fixture.name);
        }
    }
}

fn record_len(fixture: &Fixture) -> usize {
    let sh = [0, 9, 24][fixture.sh_degree as usize];
    match fixture.level {
        0 => 44 + 4 * sh,
        1 => 24 + 2 * sh,
        _ => 24 + sh,
    }
}

#[test]
fn a_long_file_is_refused() {
    let mut bytes = FIXTURES[2].bytes();
    bytes.extend([0; 7]);
    assert_eq!(err(&bytes), KsplatError::TrailingBytes { extra: 7 });
}

#[test]
fn main_header_fields() {
    let bytes = FIXTURES[2].bytes();
    for version in [[0u8, 0], [1, 1], [2, 0]] {
        assert!(matches!(
            err(&with_bytes(&bytes, at::VERSION, &version)),
            KsplatError::UnsupportedVersion { .. }
        ));
    }
    assert!(is_ksplat(&with_bytes(&bytes, at::VERSION, &[0, 9])));
    assert_eq!(
        err(&with_bytes(&bytes, at::LEVEL, &[7, 0])),
        KsplatError::UnknownCompressionLevel(7)
    );
    assert_eq!(
        err(&with_u32(&bytes, at::SPLATS, 4000)),
        KsplatError::HeaderCountsDiffer {
            counted: Counted::Splats,
            loaded: 4000,
            max: 4681
        }
    );
    assert_eq!(
        err(&with_u32(&bytes, at::SECTIONS, 2)),
        KsplatError::HeaderCountsDiffer {
            counted: Counted::Sections,
            loaded: 2,
            max: 1
        }
    );
    let both = |b: &[u8], at1, at2, v| with_u32(&with_u32(b, at1, v), at2, v);
    assert_eq!(
        err(&both(&bytes, at::SECTIONS, at::MAX_SECTIONS, 0)),
        KsplatError::NoSections
    );
    // A second section header would overlap the first section's data, which then
    // does not add up.
    assert!(decode(&both(&bytes, at::SECTIONS, at::MAX_SECTIONS, 2)).is_err());
    assert!(matches!(
        err(&both(&bytes, at::SECTIONS, at::MAX_SECTIONS, 1 << 30)),
        KsplatError::SectionTruncated {
            part: SectionPart::Headers,
            ..
        }
    ));
    assert_eq!(
        err(&both(&bytes, at::SPLATS, at::MAX_SPLATS, u32::MAX)),
        KsplatError::SplatCountMismatch {
            in_header: u32::MAX,
            in_sections: 4681
        }
    );
}

#[test]
fn compression_level_changes() {
    // Level 2 without SH has level 1's layout: the angel decodes the same.
    let angel = FIXTURES[0].bytes();
    let as_level2 = with_bytes(&angel, at::LEVEL, &[2, 0]);
    assert_eq!(decode(&as_level2).unwrap(), decode(&angel).unwrap());
    // Other changes alter the record size, which no longer fits the file.
    let fruit = FIXTURES[4].bytes();
    for level in [0, 1] {
        assert!(matches!(
            err(&with_bytes(&fruit, at::LEVEL, &[level, 0])),
            KsplatError::SplatsTruncated { .. }
        ));
    }
    let level1 = FIXTURES[3].bytes();
    assert!(matches!(
        err(&with_bytes(&level1, at::LEVEL, &[2, 0])),
        KsplatError::TrailingBytes { .. }
    ));
}

#[test]
fn section_header_fields() {
    let bytes = FIXTURES[3].bytes();
    let buckets = |problem| KsplatError::Buckets {
        section: 0,
        problem,
    };
    assert_eq!(
        err(&with_u32(&bytes, at::S_SPLATS, 1)),
        KsplatError::SectionCountsDiffer {
            section: 0,
            loaded: 1,
            max: 4681
        }
    );
    assert_eq!(
        err(&with_bytes(&bytes, at::S_DEGREE, &[3, 0])),
        KsplatError::UnsupportedShDegree {
            section: 0,
            degree: 3
        }
    );
    // Degree 1 makes the records 42 bytes instead of 72.
    assert!(matches!(
        err(&with_bytes(&bytes, at::S_DEGREE, &[1, 0])),
        KsplatError::TrailingBytes { .. }
    ));
    assert_eq!(
        err(&with_bytes(&bytes, at::S_ENTRY, &[16, 0])),
        buckets(BucketProblem::StorageSize(16))
    );
    assert_eq!(
        err(&with_u32(&bytes, at::S_FULL, 17)),
        buckets(BucketProblem::Counts {
            full: 17,
            partial: 1,
            total: 19
        })
    );
    assert_eq!(
        err(&with_u32(&bytes, at::S_BUCKET_SIZE, 255)),
        buckets(BucketProblem::Splats {
            in_buckets: 18 * 255 + 73,
            in_section: 4681
        })
    );
    // The partial bucket's length, first thing after the section header.
    assert_eq!(
        err(&with_u32(&bytes, at::DATA, 74)),
        buckets(BucketProblem::Splats {
            in_buckets: 4682,
            in_section: 4681
        })
    );
    assert!(matches!(
        err(&with_u32(&bytes, at::S_PARTIAL, u32::MAX)),
        KsplatError::SectionTruncated {
            part: SectionPart::BucketLengths,
            ..
        }
    ));
    assert!(matches!(
        err(&with_u32(&bytes, at::S_BUCKETS, 1 << 31)),
        KsplatError::SectionTruncated {
            part: SectionPart::BucketCentres,
            ..
        }
    ));
    assert!(matches!(
        err(&with_bytes(&bytes, at::S_BLOCK, &f32::NAN.to_le_bytes())),
        KsplatError::Buckets {
            problem: BucketProblem::BlockSize(_),
            ..
        }
    ));
    // Fields the readers work out again or default are not trusted.
    assert!(is_ksplat(&with_u32(&bytes, at::S_STORAGE, 0)));
    let default_range = with_u32(&bytes, at::S_RANGE, 0);
    assert_eq!(decode(&default_range).unwrap(), decode(&bytes).unwrap());
}

#[test]
fn level2_sh_range() {
    let bytes = FIXTURES[5].bytes();
    let ours = decode(&bytes).unwrap();
    // Stored zeros stand for ∓1.5, the library's `value || default`.
    let zeros = with_bytes(&bytes, at::SH_MIN, &[0; 8]);
    let wide = with_bytes(
        &with_bytes(&bytes, at::SH_MIN, &(-1.5f32).to_le_bytes()),
        at::SH_MAX,
        &1.5f32.to_le_bytes(),
    );
    let from_zeros = decode(&zeros).unwrap();
    assert_eq!(from_zeros, decode(&wide).unwrap());
    assert_ne!(from_zeros.sh, ours.sh);
    assert_eq!(from_zeros.geometry, ours.geometry);
    assert!(matches!(
        err(&with_bytes(
            &bytes,
            at::SH_MAX,
            &f32::INFINITY.to_le_bytes()
        )),
        KsplatError::BadShRange { .. }
    ));
    assert!(matches!(
        err(&with_bytes(&bytes, at::SH_MAX, &(-1.0f32).to_le_bytes())),
        KsplatError::BadShRange { .. }
    ));
}

#[test]
fn bad_bucket_centres_are_counted_not_refused() {
    let bytes = FIXTURES[2].bytes();
    // Bucket 0's centre: its 256 splats come out NaN, and are counted.
    let centres = at::DATA + 4;
    let d = decode(&with_bytes(&bytes, centres, &f32::NAN.to_le_bytes())).unwrap();
    assert_eq!(d.non_finite, 256);
    assert!(d.geometry[..256].iter().all(|g| g.position[0].is_nan()));
}

/// No other format's file passes for a `.ksplat`.
#[test]
fn other_formats_are_not_ksplat() {
    let names = [
        "angel_sh0.ply",
        "fruit_drops_sh3.ply",
        "train_3pts_sh3.ply",
        "formats/seal.splat",
        "formats/angel.sog",
        "formats/angel.compressed.ply",
        "formats/tower_v2.spz",
        "formats/unitcube_v2.spz",
        "spz/fruit_drops_sh3_v4.spz",
        "formats/unit_sh_legacy.glb",
        "ksplat/fruit.order.json",
    ];
    for name in names {
        assert!(!is_ksplat(&read(data(name))), "{name}");
    }
    for len in [0, 1, 4095, 4096, 5120, 1 << 16] {
        assert!(!is_ksplat(&vec![0; len]));
        let mut v01 = vec![0; len];
        if len > 1 {
            v01[1] = 1;
        }
        assert!(!is_ksplat(&v01), "{len}");
    }
}
