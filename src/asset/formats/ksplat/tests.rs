//! Header parsing and record decoding on small files built here, byte by byte.

use super::*;
use crate::asset::decoded::{SH_C0, sh_stride};
use half::f16;

/// One section of a file under construction.
struct Sec {
    degree: u16,
    count: u32,
    records: Vec<u8>,
    buckets: Option<BucketSpec>,
}

/// Bucket size, full buckets, partial buckets' lengths, every bucket's centre.
type BucketSpec = (u32, u32, Vec<u32>, Vec<[f32; 3]>);

struct File {
    level: u16,
    sh_range: [f32; 2],
    sections: Vec<Sec>,
}

fn put(out: &mut [u8], at: usize, bytes: &[u8]) {
    out[at..at + bytes.len()].copy_from_slice(bytes);
}

impl File {
    fn bytes(&self) -> Vec<u8> {
        let total: u32 = self.sections.iter().map(|s| s.count).sum();
        let n = self.sections.len() as u32;
        let mut out = vec![0u8; 4096 + 1024 * self.sections.len()];
        out[1] = 1;
        for (at, v) in [(4, n), (8, n), (12, total), (16, total)] {
            put(&mut out, at, &v.to_le_bytes());
        }
        put(&mut out, 20, &self.level.to_le_bytes());
        put(&mut out, 36, &self.sh_range[0].to_le_bytes());
        put(&mut out, 40, &self.sh_range[1].to_le_bytes());
        for (i, s) in self.sections.iter().enumerate() {
            let h = 4096 + 1024 * i;
            put(&mut out, h, &s.count.to_le_bytes());
            put(&mut out, h + 4, &s.count.to_le_bytes());
            put(&mut out, h + 40, &s.degree.to_le_bytes());
            let mut data = Vec::new();
            if let Some((size, full, partial, centres)) = &s.buckets {
                put(&mut out, h + 8, &size.to_le_bytes());
                put(&mut out, h + 12, &(centres.len() as u32).to_le_bytes());
                put(&mut out, h + 16, &5.0f32.to_le_bytes());
                put(&mut out, h + 20, &12u16.to_le_bytes());
                put(&mut out, h + 24, &32767u32.to_le_bytes());
                put(&mut out, h + 32, &full.to_le_bytes());
                put(&mut out, h + 36, &(partial.len() as u32).to_le_bytes());
                partial.iter().for_each(|l| data.extend(l.to_le_bytes()));
                centres
                    .iter()
                    .flatten()
                    .for_each(|c| data.extend(c.to_le_bytes()));
            }
            data.extend(&s.records);
            put(&mut out, h + 28, &(data.len() as u32).to_le_bytes());
            out.extend(data);
        }
        out
    }
}

fn f32s(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn halves(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| f16::from_f32(*v).to_bits().to_le_bytes())
        .collect()
}

/// A level-0 record; `sh` in file order.
fn record0(
    position: [f32; 3],
    scale: [f32; 3],
    rot: [f32; 4],
    rgba: [u8; 4],
    sh: &[f32],
) -> Vec<u8> {
    let mut r = f32s(&position);
    r.extend(f32s(&scale));
    r.extend(f32s(&rot));
    r.extend(rgba);
    r.extend(f32s(sh));
    r
}

/// A level-1/2 record: quantised centre, f16 scale and rotation, `sh` as given.
fn record_half(q: [u16; 3], scale: [f32; 3], rot: [f32; 4], rgba: [u8; 4], sh: &[u8]) -> Vec<u8> {
    let mut r: Vec<u8> = q.iter().flat_map(|v| v.to_le_bytes()).collect();
    r.extend(halves(&scale));
    r.extend(halves(&rot));
    r.extend(rgba);
    r.extend(sh);
    r
}

/// Two level-0 splats of degree 2, SH component `i` of splat `s` = s + i / 100.
fn level0_file() -> File {
    let sh = |s: usize| {
        (0..24)
            .map(|i| s as f32 + i as f32 / 100.0)
            .collect::<Vec<_>>()
    };
    let mut records = record0(
        [1.0, -2.0, 3.5],
        [0.5, 1.0, 2.0],
        [1.0, 0.0, 0.0, 0.0],
        [255, 128, 0, 255],
        &sh(0),
    );
    records.extend(record0(
        [0.0; 3],
        [0.0, 1e-3, 1.0],
        [0.5, 0.5, 0.5, 0.5],
        [0, 0, 0, 0],
        &sh(1),
    ));
    File {
        level: 0,
        sh_range: [-1.5, 1.5],
        sections: vec![Sec {
            degree: 2,
            count: 2,
            records,
            buckets: None,
        }],
    }
}

/// Five level-1 splats of degree 1: two full buckets of 2, one partial bucket of 1.
fn level1_file(level: u16) -> File {
    let mut records = Vec::new();
    for i in 0..5u16 {
        let sh: Vec<u8> = if level == 1 {
            halves(&(0..9).map(|c| c as f32 / 8.0).collect::<Vec<_>>())
        } else {
            (0..9).map(|c| c * 30).collect()
        };
        records.extend(record_half(
            [32767, 32767 + i, 0],
            [0.25, 0.5, 1.0],
            [1.0, 0.0, 0.0, 0.0],
            [10, 20, 30, 40],
            &sh,
        ));
    }
    File {
        level,
        sh_range: [-1.0, 2.0],
        sections: vec![Sec {
            degree: 1,
            count: 5,
            records,
            buckets: Some((
                2,
                2,
                vec![1],
                vec![[1.0, 2.0, 3.0], [10.0, 20.0, 30.0], [-5.0, 0.0, 5.0]],
            )),
        }],
    }
}

#[test]
fn level0_fields_and_sh_order() {
    let bytes = level0_file().bytes();
    assert!(is_ksplat(&bytes));
    let d = decode(&bytes).unwrap();
    assert_eq!((d.len(), d.sh_degree, d.non_finite), (2, 2, 0));
    let g = d.geometry[0];
    assert_eq!(g.position, [1.0, -2.0, 3.5]);
    assert_eq!(g.log_scale, [0.5f32.ln(), 0.0, 2.0f32.ln()]);
    assert_eq!(g.rotation, [1.0, 0.0, 0.0, 0.0]);
    assert!(g.opacity_logit > 13.0);
    assert_eq!(d.geometry[1].rotation, [0.5; 4]);
    assert!(d.geometry[1].opacity_logit < -13.0);
    // A zero scale has a finite floor below any f16 or normal f32 scale.
    let floor = d.geometry[1].log_scale[0];
    assert_eq!(floor, f32::MIN_POSITIVE.ln());
    let stride = sh_stride(2);
    let colour = |k: usize| 0.5 + SH_C0 * d.sh[k];
    assert!((colour(0) - 1.0).abs() < 1e-6 && colour(2).abs() < 1e-6);
    // Crate slot (coefficient k, channel c) ← file component: band 1 is
    // R1 R2 R3 G1 G2 G3 B1 B2 B3, band 2 R4..R8 G4..G8 B4..B8.
    let rest = |s: usize, k: usize, c: usize| d.sh[s * stride + 3 * k + c];
    let file = |s: usize, i: usize| s as f32 + i as f32 / 100.0;
    assert_eq!(rest(0, 1, 0), file(0, 0));
    assert_eq!(rest(0, 1, 1), file(0, 3));
    assert_eq!(rest(0, 3, 2), file(0, 8));
    assert_eq!(rest(1, 4, 0), file(1, 9));
    assert_eq!(rest(1, 4, 1), file(1, 14));
    assert_eq!(rest(1, 8, 2), file(1, 23));
}

#[test]
fn level1_centres_follow_the_buckets() {
    let bytes = level1_file(1).bytes();
    let d = decode(&bytes).unwrap();
    assert_eq!((d.len(), d.sh_degree), (5, 1));
    let step = 2.5f64 / 32767.0;
    let expected_centre = [
        [1.0, 2.0, 3.0],
        [1.0, 2.0, 3.0],
        [10.0, 20.0, 30.0],
        [10.0, 20.0, 30.0],
        [-5.0, 0.0, 5.0],
    ];
    for (i, (g, c)) in d.geometry.iter().zip(expected_centre).enumerate() {
        let want = [
            c[0] as f32,
            (i as f64 * step + c[1]) as f32,
            (-32767.0 * step + c[2]) as f32,
        ];
        assert_eq!(g.position, want, "splat {i}");
        assert_eq!(g.log_scale, [0.25f32.ln(), 0.5f32.ln(), 0.0]);
    }
    // f16 SH, band 1 in file order R1 R2 R3 G1 ...: component c = c / 8.
    assert_eq!(
        d.sh[3..12],
        [0.0, 3.0, 6.0, 1.0, 4.0, 7.0, 2.0, 5.0, 8.0].map(|c: f32| c / 8.0)
    );
}

#[test]
fn level2_sh_bytes_use_the_header_range() {
    let d = decode(&level1_file(2).bytes()).unwrap();
    let v = |u: f64| (u / 255.0 * 3.0 - 1.0) as f32;
    assert_eq!(d.sh[3], v(0.0));
    assert_eq!(d.sh[4], v(90.0));
    assert_eq!(d.sh[11], v(240.0));
    // A stored 0 means the default ±1.5 (JavaScript's `value || 1.5`).
    let mut file = level1_file(2);
    file.sh_range = [0.0, 0.0];
    let d = decode(&file.bytes()).unwrap();
    assert_eq!(d.sh[3], -1.5);
    assert_eq!(d.sh[11], (240.0 / 255.0 * 3.0 - 1.5f64) as f32);
}

#[test]
fn sections_of_different_degrees_load_at_the_lowest() {
    let mut file = level0_file();
    let one = record0([7.0; 3], [1.0; 3], [1.0, 0.0, 0.0, 0.0], [0; 4], &[0.5; 9]);
    file.sections.push(Sec {
        degree: 1,
        count: 1,
        records: one,
        buckets: None,
    });
    let d = decode(&file.bytes()).unwrap();
    assert_eq!((d.len(), d.sh_degree), (3, 1));
    assert_eq!(d.geometry[2].position, [7.0; 3]);
    assert_eq!(d.sh[2 * 12 + 3..], [0.5; 9]);
    assert_eq!(d.sh[3..6], [0.0, 0.03, 0.06]);
}

fn error(bytes: &[u8]) -> KsplatError {
    assert!(!is_ksplat(bytes));
    decode(bytes).unwrap_err()
}

fn with(bytes: &[u8], at: usize, value: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    put(&mut b, at, value);
    b
}

#[test]
fn main_header_rejections() {
    let good = level1_file(1).bytes();
    assert_eq!(error(&good[..4095]), KsplatError::TooShort { len: 4095 });
    assert_eq!(error(&[]), KsplatError::TooShort { len: 0 });
    for (major, minor) in [(0, 0), (1, 1), (255, 0)] {
        assert_eq!(
            error(&with(&good, 0, &[major, minor])),
            KsplatError::UnsupportedVersion { major, minor }
        );
    }
    // A later minor version of 0.x has the same layout.
    assert!(is_ksplat(&with(&good, 1, &[2])));
    assert_eq!(
        error(&with(&good, 20, &3u16.to_le_bytes())),
        KsplatError::UnknownCompressionLevel(3)
    );
    assert_eq!(
        error(&with(
            &with(&good, 4, &0u32.to_le_bytes()),
            8,
            &0u32.to_le_bytes()
        )),
        KsplatError::NoSections
    );
    assert_eq!(
        error(&with(&good, 8, &0u32.to_le_bytes())),
        KsplatError::HeaderCountsDiffer {
            counted: Counted::Sections,
            loaded: 0,
            max: 1
        }
    );
    assert_eq!(
        error(&with(&good, 16, &4u32.to_le_bytes())),
        KsplatError::HeaderCountsDiffer {
            counted: Counted::Splats,
            loaded: 4,
            max: 5
        }
    );
    // Huge section counts are refused before anything is allocated for them.
    let huge = with(
        &with(&good, 4, &u32::MAX.to_le_bytes()),
        8,
        &u32::MAX.to_le_bytes(),
    );
    assert!(matches!(
        error(&huge),
        KsplatError::SectionTruncated {
            section: 1,
            part: SectionPart::Headers,
            ..
        }
    ));
    // Splat totals that disagree with the sections.
    let both = |n: u32| with(&with(&good, 12, &n.to_le_bytes()), 16, &n.to_le_bytes());
    assert_eq!(
        error(&both(6)),
        KsplatError::SplatCountMismatch {
            in_header: 6,
            in_sections: 5
        }
    );
}

#[test]
fn section_header_rejections() {
    let good = level1_file(1).bytes();
    let s = 4096;
    assert_eq!(
        error(&with(&good, s, &4u32.to_le_bytes())),
        KsplatError::SectionCountsDiffer {
            section: 0,
            loaded: 4,
            max: 5
        }
    );
    assert_eq!(
        error(&with(&good, s + 40, &3u16.to_le_bytes())),
        KsplatError::UnsupportedShDegree {
            section: 0,
            degree: 3
        }
    );
    let buckets = |problem| KsplatError::Buckets {
        section: 0,
        problem,
    };
    assert_eq!(
        error(&with(&good, s + 20, &16u16.to_le_bytes())),
        buckets(BucketProblem::StorageSize(16))
    );
    assert_eq!(
        error(&with(&good, s + 32, &1u32.to_le_bytes())),
        buckets(BucketProblem::Counts {
            full: 1,
            partial: 1,
            total: 3
        })
    );
    assert_eq!(
        error(&with(&good, s + 8, &3u32.to_le_bytes())),
        buckets(BucketProblem::Splats {
            in_buckets: 7,
            in_section: 5
        })
    );
    // A partial length that would take the walk past the records.
    assert_eq!(
        error(&with(&good, 5120, &u32::MAX.to_le_bytes())),
        buckets(BucketProblem::Splats {
            in_buckets: 4 + u64::from(u32::MAX),
            in_section: 5
        })
    );
    assert!(matches!(
        error(&with(&good, s + 16, &f32::INFINITY.to_le_bytes())),
        KsplatError::Buckets { problem: BucketProblem::BlockSize(v), .. } if v.is_infinite()
    ));
    // Bucket tables beyond the file.
    assert!(matches!(
        error(&with(&good, s + 36, &u32::MAX.to_le_bytes())),
        KsplatError::SectionTruncated {
            section: 0,
            part: SectionPart::BucketLengths,
            ..
        }
    ));
    assert!(matches!(
        error(&with(&good, s + 12, &u32::MAX.to_le_bytes())),
        KsplatError::SectionTruncated {
            section: 0,
            part: SectionPart::BucketCentres,
            ..
        }
    ));
    // The stored storage size is not trusted (progressive buffers write 0 there).
    assert!(is_ksplat(&with(&good, s + 28, &0u32.to_le_bytes())));
}

#[test]
fn truncation_and_trailing_bytes() {
    let good = level1_file(1).bytes();
    // 42 bytes per record after 4096 + 1024 + 4 + 36 bytes of headers and tables.
    let data = 4096 + 1024 + 4 + 36;
    assert_eq!(good.len(), data + 5 * 42);
    for (cut, first_missing) in [(data + 42 * 4 + 41, 4), (data + 42, 1), (data, 0)] {
        assert_eq!(
            error(&good[..cut]),
            KsplatError::SplatsTruncated {
                section: 0,
                first_missing,
                total: 5
            }
        );
    }
    assert!(matches!(
        error(&good[..data - 1]),
        KsplatError::SectionTruncated {
            part: SectionPart::BucketCentres,
            ..
        }
    ));
    assert!(matches!(
        error(&good[..5000]),
        KsplatError::SectionTruncated {
            section: 0,
            part: SectionPart::Headers,
            ..
        }
    ));
    let mut long = good.clone();
    long.push(0);
    assert_eq!(error(&long), KsplatError::TrailingBytes { extra: 1 });
}

#[test]
fn level2_sh_range_must_be_finite_and_ordered() {
    for range in [[f32::NEG_INFINITY, 1.0], [2.0, 1.0]] {
        let mut file = level1_file(2);
        file.sh_range = range;
        assert!(matches!(
            error(&file.bytes()),
            KsplatError::BadShRange { .. }
        ));
    }
    // Level 1 does not use the range.
    let mut file = level1_file(1);
    file.sh_range = [2.0, 1.0];
    assert!(decode(&file.bytes()).is_ok());
}

#[test]
fn non_finite_values_are_counted_not_refused() {
    let mut file = level0_file();
    file.sections[0].records[0..4].copy_from_slice(&f32::NAN.to_le_bytes());
    let d = decode(&file.bytes()).unwrap();
    assert_eq!(d.non_finite, 1);
    assert!(d.geometry[0].position[0].is_nan());
}

#[test]
fn errors_read_well() {
    let e = KsplatError::SplatsTruncated {
        section: 0,
        first_missing: 4,
        total: 5,
    };
    assert_eq!(
        e.to_string(),
        "file is truncated in section 0: splat 4 of 5 and later are missing"
    );
    let e = KsplatError::Buckets {
        section: 2,
        problem: BucketProblem::Counts {
            full: 1,
            partial: 1,
            total: 3,
        },
    };
    assert_eq!(
        e.to_string(),
        "section 2: 1 full and 1 partially filled buckets, but a bucket count of 3"
    );
}
