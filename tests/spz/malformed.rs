//! Broken, forged and hand-built SPZ files: each failure is its named error, and the
//! versions no writer here produces (v1, flags, extensions) decode as specified.

use crate::common::encode::{arrays, gzip, legacy_header, ngsp_header, v4_file};
use crate::common::{data, gunzip, read, read_fixture};
use bevy_splat::asset::formats::spz::{
    self, ADOBE_COORDINATE_SYSTEM, Attribute, Container, MAX_POINTS, Section, SpzError, TocProblem,
};

fn err(bytes: &[u8]) -> SpzError {
    spz::decode(bytes).expect_err("should fail")
}

#[test]
fn empty_and_unrecognised() {
    assert_eq!(err(&[]), SpzError::Empty);
    assert_eq!(
        err(b"\x1f"),
        SpzError::UnrecognizedContainer { found: vec![0x1f] }
    );
    assert!(matches!(
        err(b"PK\x03\x04rest"),
        SpzError::UnrecognizedContainer { .. }
    ));
}

#[test]
fn bad_magic_inside_gzip() {
    let mut body = legacy_header(2, 1, 0, 12, 0);
    body[..4].copy_from_slice(b"XGSP");
    body.extend_from_slice(&[0; 19]);
    assert_eq!(
        err(&gzip(&body)),
        SpzError::BadMagic {
            found: u32::from_le_bytes(*b"XGSP")
        }
    );
}

#[test]
fn unsupported_versions() {
    for version in [0, 5, 99] {
        let body = legacy_header(version, 1, 0, 12, 0);
        assert_eq!(
            err(&gzip(&body)),
            SpzError::UnsupportedVersion {
                version,
                container: Container::Gzip
            }
        );
    }
    // A raw NGSP header must be v4: v2 and v3 live inside gzip.
    for version in [2, 3, 5] {
        let bytes = ngsp_header(version, 1, 0, 0, 5, 32);
        assert_eq!(
            err(&bytes),
            SpzError::UnsupportedVersion {
                version,
                container: Container::Ngsp
            }
        );
    }
}

#[test]
fn sh_degree_5() {
    assert_eq!(
        err(&gzip(&legacy_header(2, 1, 5, 12, 0))),
        SpzError::ShDegreeOutOfRange(5)
    );
    assert_eq!(
        err(&ngsp_header(4, 1, 5, 0, 6, 32)),
        SpzError::ShDegreeOutOfRange(5)
    );
}

#[test]
fn huge_point_counts() {
    let too_many = MAX_POINTS + 1;
    assert_eq!(
        err(&gzip(&legacy_header(2, too_many, 0, 12, 0))),
        SpzError::TooManyPoints {
            num_points: too_many,
            max: MAX_POINTS
        }
    );
    assert_eq!(
        err(&gzip(&legacy_header(2, u32::MAX, 3, 12, 0))),
        SpzError::TooManyPoints {
            num_points: u32::MAX,
            max: MAX_POINTS
        }
    );
    // Within the cap, but no 40-byte gzip member expands to 5 GB.
    let bytes = gzip(&legacy_header(2, MAX_POINTS, 0, 12, 0));
    assert!(matches!(
        err(&bytes),
        SpzError::CountExceedsData {
            num_points: MAX_POINTS,
            ..
        }
    ));
    // v4: a TOC that agrees with the forged count still cannot hold it.
    let n = MAX_POINTS;
    let sizes = [9u64, 1, 3, 3, 4].map(|b| b * u64::from(n));
    let mut v4 = ngsp_header(4, n, 0, 0, 5, 32);
    for size in sizes {
        v4.extend_from_slice(&10u64.to_le_bytes());
        v4.extend_from_slice(&size.to_le_bytes());
    }
    v4.extend_from_slice(&[0; 50]);
    assert!(matches!(err(&v4), SpzError::CountExceedsData { .. }));
}

#[test]
fn gzip_bomb_stops_at_the_claimed_size() {
    use crate::common::encode::gzip_best;
    // 64 MiB of zeros compress to ~65 kB, about deflate's limit of 1032:1.
    let actual = 64usize << 20;
    let zeros = |n: u32| {
        let mut body = legacy_header(2, n, 0, 12, 0);
        body.resize(16 + actual, 0);
        gzip_best(&body)
    };
    // Claiming more than the member could ever expand to fails before inflating.
    let claim = zeros(1 << 22);
    assert!(claim.len() < 100_000, "{}", claim.len());
    assert!(matches!(
        err(&claim),
        SpzError::CountExceedsData {
            num_points: 4_194_304,
            ..
        }
    ));
    // A claim just inside that bound inflates only the 64 MiB that exist, then reports
    // the shortfall.
    let n = ((claim.len() as u64 * 1032 - 16) / 19 - 1000) as u32;
    assert!(u64::from(n) * 19 > actual as u64);
    match err(&zeros(n)) {
        SpzError::Truncated {
            section: Section::Attribute(_),
            expected,
            got,
        } => assert_eq!((expected, got), (u64::from(n) * 19, actual as u64)),
        e => panic!("{e:?}"),
    }
    // And a member that expands past its claim is read only as far as the claim.
    let mut small = legacy_header(2, 1, 0, 12, 0);
    small.extend_from_slice(&[0; 19]);
    small.resize(16 + actual, 0);
    let d = spz::decode(&gzip_best(&small)).unwrap();
    assert_eq!(d.len(), 1);
}

#[test]
fn gzip_garbage() {
    let mut bytes = vec![0x1f, 0x8b];
    let mut rng = crate::common::XorShift(7);
    bytes.extend((0..200).map(|_| rng.next() as u8));
    assert!(
        matches!(err(&bytes), SpzError::Gzip(_)),
        "{:?}",
        err(&bytes)
    );
    // A valid gzip header followed by a corrupt deflate stream.
    let mut good = read(data("formats/tower_v2.spz"));
    for b in &mut good[1000..1100] {
        *b = !*b;
    }
    assert!(matches!(err(&good), SpzError::Gzip(_)), "{:?}", err(&good));
}

#[test]
fn crc_mismatch_is_a_gzip_error() {
    let mut bytes = read(data("formats/unitcube_v2.spz"));
    let crc_at = bytes.len() - 8;
    bytes[crc_at] ^= 0xff;
    assert!(matches!(err(&bytes), SpzError::Gzip(m) if m.contains("checksum")));
}

fn assert_truncations(bytes: &[u8], header_len: u64, gzip: bool) {
    let n = bytes.len();
    // Below 4 bytes a raw NGSP file is not recognisable yet; gzip's magic is 2 bytes.
    let first = if gzip { 2 } else { 4 };
    for cut in [
        first,
        5,
        12,
        31,
        40,
        n / 3,
        n / 2,
        n - 20,
        n - 9,
        n - 4,
        n - 1,
    ] {
        let e = err(&bytes[..cut]);
        let ok = match &e {
            SpzError::Truncated {
                section: Section::Header,
                expected,
                ..
            } => *expected == header_len,
            SpzError::Truncated { expected, got, .. } => got < expected,
            SpzError::GzipTrailerMissing { .. } => gzip && cut > n - 20,
            _ => false,
        };
        assert!(ok, "cut at {cut} of {n}: {e:?}");
    }
}

#[test]
fn truncated_v2_v3() {
    for name in ["fruit_drops_sh3_v2.spz", "fruit_drops_sh3_v3.spz"] {
        let bytes = read_fixture(name);
        assert_truncations(&bytes, 16, true);
        let n = bytes.len();
        assert!(matches!(
            err(&bytes[..n / 2]),
            SpzError::Truncated {
                section: Section::Attribute(_),
                ..
            }
        ));
        assert!(matches!(
            err(&bytes[..n - 4]),
            SpzError::GzipTrailerMissing { .. }
        ));
    }
    // A whole member whose header claims more splats than it holds.
    let mut body = gunzip(&read(data("formats/unitcube_v2.spz")));
    body[8..12].copy_from_slice(&21u32.to_le_bytes());
    assert_eq!(
        err(&gzip(&body)),
        SpzError::Truncated {
            section: Section::Attribute(Attribute::Rotations),
            expected: 21 * 19,
            got: 20 * 19,
        }
    );
}

#[test]
fn truncated_v4() {
    let bytes = read_fixture("fruit_drops_sh3_v4.spz");
    assert_truncations(&bytes, 32, false);
    assert_eq!(
        err(&bytes[..40]),
        SpzError::Truncated {
            section: Section::Toc,
            expected: 96,
            got: 8
        }
    );
    let n = bytes.len();
    assert!(matches!(
        err(&bytes[..n - 1]),
        SpzError::Truncated {
            section: Section::Attribute(Attribute::Sh),
            ..
        }
    ));
}

fn with_u32(bytes: &[u8], at: usize, value: u32) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + 4].copy_from_slice(&value.to_le_bytes());
    b
}

#[test]
fn v4_table_of_contents_problems() {
    let bytes = read_fixture("fruit_drops_sh3_v4.spz");
    let len = bytes.len() as u64;
    assert_eq!(
        err(&with_u32(&bytes, 16, 1_000_000)),
        SpzError::TocInconsistent(TocProblem::OutsideFile {
            toc_end: 1_000_096,
            file_len: len
        })
    );
    assert_eq!(
        err(&with_u32(&bytes, 16, 8)),
        SpzError::TocInconsistent(TocProblem::OffsetInsideHeader { offset: 8 })
    );
    let mut streams = bytes.clone();
    streams[15] = 5;
    assert_eq!(
        err(&streams),
        SpzError::TocInconsistent(TocProblem::StreamCount {
            found: 5,
            expected: 6
        })
    );
    // Second entry (alphas): its uncompressed size.
    let mut size = bytes.clone();
    size[32 + 16 + 8..32 + 16 + 16].copy_from_slice(&4720u64.to_le_bytes());
    assert_eq!(
        err(&size),
        SpzError::TocInconsistent(TocProblem::StreamSize {
            attribute: Attribute::Alphas,
            found: 4720,
            expected: 4721
        })
    );
    // A compressed size running past the end.
    let mut past = bytes.clone();
    past[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        err(&past),
        SpzError::Truncated {
            section: Section::Attribute(Attribute::Positions),
            ..
        }
    ));
    // Garbage where the positions frame should be.
    let mut frame = bytes.clone();
    for b in &mut frame[128..140] {
        *b = 0xa5;
    }
    assert!(matches!(
        err(&frame),
        SpzError::Zstd {
            attribute: Attribute::Positions,
            ..
        }
    ));
}

#[test]
fn v4_frame_larger_than_declared() {
    let [p, _, c, s, r, _] = arrays(3, 0, 4);
    let four_alphas = [1u8, 2, 3, 4];
    let mut bytes = v4_file(3, 0, 0, &[&p, &four_alphas, &c, &s, &r], &[]);
    // The TOC now declares the 3 alphas the header implies; the frame holds 4.
    bytes[32 + 16 + 8..32 + 16 + 16].copy_from_slice(&3u64.to_le_bytes());
    assert!(matches!(
        err(&bytes),
        SpzError::Zstd {
            attribute: Attribute::Alphas,
            ..
        }
    ));
}

#[test]
fn synthetic_v4_with_flags_and_extensions() {
    let [p, a, c, s, r, sh] = arrays(5, 2, 4);
    let mut ext = Vec::new();
    ext.extend_from_slice(&ADOBE_COORDINATE_SYSTEM.to_le_bytes());
    ext.extend_from_slice(&4u32.to_le_bytes());
    ext.extend_from_slice(&4u32.to_le_bytes());
    let bytes = v4_file(5, 2, 0x3, &[&p, &a, &c, &s, &r, &sh], &ext);
    let (d, info) = spz::decode_with_info(&bytes).unwrap();
    assert_eq!((d.len(), d.sh_degree), (5, 2));
    assert!(d.antialiased && info.antialiased && info.has_extensions);
    assert_eq!(info.extension_types, vec![ADOBE_COORDINATE_SYSTEM]);
    // The same arrays as a v3 gzip payload with the records after the SH decode alike.
    let mut body = legacy_header(3, 5, 2, 12, 0x3);
    for part in [&p, &a, &c, &s, &r, &sh] {
        body.extend_from_slice(part);
    }
    body.extend_from_slice(&ext);
    let (d3, info3) = spz::decode_with_info(&gzip(&body)).unwrap();
    assert_eq!(d3, d);
    assert_eq!(info3.extension_types, info.extension_types);
}

#[test]
fn zero_splats() {
    let d = spz::decode(&gzip(&legacy_header(2, 0, 3, 12, 0))).unwrap();
    assert!(d.is_empty());
    let d = spz::decode(&ngsp_header(4, 0, 3, 0, 0, 32)).unwrap();
    assert!(d.is_empty());
}

/// A v1 file: v2's payload with half-float positions instead of 24-bit fixed point.
#[test]
fn version_1_half_float_positions() {
    let v2_bytes = read_fixture("fruit_drops_sh3_v2.spz");
    let v2 = spz::decode(&v2_bytes).unwrap();
    let body = gunzip(&v2_bytes);
    let n = v2.len();
    let (header, rest) = body.split_at(16);
    let (fixed, others) = rest.split_at(n * 9);
    let mut v1 = header.to_vec();
    v1[4..8].copy_from_slice(&1u32.to_le_bytes());
    for p in fixed.chunks_exact(9) {
        for c in p.chunks_exact(3) {
            let value = (i32::from_le_bytes([0, c[0], c[1], c[2]]) >> 8) as f32 / 4096.0;
            v1.extend_from_slice(&half::f16::from_f32(value).to_le_bytes());
        }
    }
    v1.extend_from_slice(others);
    let (d1, info) = spz::decode_with_info(&gzip(&v1)).unwrap();
    assert_eq!(info.version, 1);
    assert_eq!(d1.len(), n);
    for (a, b) in d1.geometry.iter().zip(&v2.geometry) {
        for (x, y) in a.position.iter().zip(b.position) {
            // Half floats keep 11 significant bits.
            assert!((x - y).abs() <= y.abs() / 2048.0 + 1e-7, "{x} vs {y}");
        }
        assert_eq!(a.rotation, b.rotation);
        assert_eq!(a.log_scale, b.log_scale);
        assert_eq!(a.opacity_logit, b.opacity_logit);
    }
    assert_eq!(d1.sh, v2.sh);
    assert_eq!(d1.non_finite, 0);
}

/// Half floats can hold infinities and NaNs; those splats load and are counted.
#[test]
fn version_1_non_finite_positions_are_counted() {
    let mut parts = arrays(4, 1, 3);
    parts[0] = vec![0; 4 * 6];
    parts[0][0..2].copy_from_slice(&half::f16::INFINITY.to_le_bytes());
    parts[0][8..10].copy_from_slice(&half::f16::NAN.to_le_bytes());
    let mut body = legacy_header(1, 4, 1, 0, 0);
    for p in &parts {
        body.extend_from_slice(p);
    }
    let d = spz::decode(&gzip(&body)).unwrap();
    assert_eq!(d.non_finite, 2);
    let rebuilt = bevy_splat::asset::decoded::DecodedSplats::from_parts(
        d.geometry.clone(),
        d.sh.clone(),
        d.sh_degree,
        d.antialiased,
    );
    assert_eq!(rebuilt.non_finite, 2);
}
