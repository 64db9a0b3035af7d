//! The three PlayCanvas fixtures decode to plausible splats.

use crate::common::*;
use bevy_splat::asset::decoded::{DecodedSplats, SH_C0, sh_stride};
use bevy_splat::asset::formats::sog::{
    DecodeOptions, SogVersion, decode_bundle, decode_bundle_with, is_sog_bundle, is_sog_meta,
    parse_meta,
};

fn check_plausible(name: &str, s: &DecodedSplats, count: usize, degree: u8) {
    assert_eq!(s.len(), count, "{name}: count");
    assert_eq!(s.sh_degree, degree, "{name}: degree");
    assert_eq!(s.sh.len(), count * sh_stride(degree), "{name}: SH length");
    assert_eq!(s.non_finite, 0, "{name}: non-finite splats");
    assert!(
        !s.antialiased,
        "{name}: none of the fixtures is antialiased"
    );
    let stride = sh_stride(degree);
    for (i, g) in s.geometry.iter().enumerate() {
        let norm: f32 = g.rotation.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{name} splat {i}: |q| = {norm}");
        assert!(
            g.position.iter().all(|p| p.abs() < 20.0),
            "{name} splat {i}: {:?}",
            g.position
        );
        assert!(
            g.log_scale.iter().all(|v| (-25.0..3.0).contains(v)),
            "{name} {i}: {:?}",
            g.log_scale
        );
        assert!(
            g.opacity_logit.abs() <= 14.0,
            "{name} {i}: {}",
            g.opacity_logit
        );
        let dc = &s.sh[i * stride..i * stride + 3];
        assert!(
            dc.iter().all(|f| (-3.0..5.0).contains(&(0.5 + SH_C0 * f))),
            "{name} {i}: {dc:?}"
        );
        assert!(
            s.sh[i * stride..(i + 1) * stride]
                .iter()
                .all(|v| v.abs() < 20.0)
        );
    }
}

#[test]
fn angel_bundle_v2_sh0() {
    let bytes = read(fixture("angel.sog"));
    assert!(is_sog_bundle(&bytes));
    let s = decode_bundle(&bytes).expect("angel decodes");
    check_plausible("angel", &s, 71_359, 0);
}

#[test]
fn playbot_unbundled_v2_sh2() {
    let dir = fixture("playbot_lod3_sog");
    let meta_bytes = read(dir.join("meta.json"));
    assert!(is_sog_meta(&meta_bytes));
    let meta = parse_meta(&meta_bytes).expect("meta");
    assert_eq!(meta.version(), SogVersion::V2);
    assert_eq!(meta.count(), 31_000);
    assert_eq!(meta.sh_degree(), Some(2));
    assert_eq!(
        meta.image_files(),
        [
            "means_l.webp",
            "means_u.webp",
            "quats.webp",
            "scales.webp",
            "sh0.webp",
            "shN_centroids.webp",
            "shN_labels.webp"
        ]
    );
    let s = decode_folder(&dir);
    check_plausible("playbot", &s, 31_000, 2);
    // Higher bands carry real, varied data, not a constant fill.
    let rest: Vec<f32> = (0..s.len())
        .flat_map(|i| s.sh[i * 27 + 3..i * 27 + 27].to_vec())
        .collect();
    let nonzero = rest.iter().filter(|v| v.abs() > 1e-3).count();
    assert!(nonzero > rest.len() / 2, "{nonzero} of {}", rest.len());
}

#[test]
fn logo_unbundled_v1_sh0() {
    let dir = fixture("playcanvas_logo_sog_v1");
    let meta_bytes = read(dir.join("meta.json"));
    assert!(is_sog_meta(&meta_bytes));
    let meta = parse_meta(&meta_bytes).expect("meta");
    assert_eq!(meta.version(), SogVersion::V1);
    assert_eq!(meta.count(), 307_128);
    assert_eq!(meta.image_files().len(), 5);
    let s = decode_folder(&dir);
    check_plausible("logo v1", &s, 307_128, 0);
}

#[test]
fn sniffing_tells_sog_from_other_files() {
    let bundle = read(fixture("angel.sog"));
    let meta = read(fixture("playbot_lod3_sog/meta.json"));
    assert!(!is_sog_bundle(&meta));
    assert!(!is_sog_meta(&bundle));
    assert!(!is_sog_meta(
        br#"{"asset": {"version": "2.0"}, "scenes": []}"#
    ));
    assert!(!is_sog_bundle(&zip(&[("other.json", b"{}")])));
    assert!(!is_sog_bundle(b"PK\x03\x04 truncated"));
}

#[test]
fn sequential_and_parallel_decoding_agree() {
    let bundle = read(fixture("angel.sog"));
    let files = folder_files(&fixture("playbot_lod3_sog"));
    let with = |threads| DecodeOptions {
        threads,
        ..DecodeOptions::default()
    };
    let a1 = decode_bundle_with(&bundle, &with(1)).unwrap();
    let p1 = decode_files(&files, &with(1)).unwrap();
    for threads in [2, 7, 0] {
        assert_eq!(decode_bundle_with(&bundle, &with(threads)).unwrap(), a1);
        assert_eq!(decode_files(&files, &with(threads)).unwrap(), p1);
    }
}
