//! The texel layout, checked on hand-set bytes of a synthetic scene.

use crate::common::*;
use bevy_splat::asset::decoded::sh_stride;
use bevy_splat::asset::formats::sog::{DecodeOptions, parse_meta};
use serde_json::json;

fn set(image: &mut [u8], texel: usize, rgba: [u8; 4]) {
    image[texel * 4..texel * 4 + 4].copy_from_slice(&rgba);
}

/// The synthetic codebook: entry i is (i − 128) / 32.
fn book(i: u8) -> f32 {
    (f32::from(i) - 128.0) / 32.0
}

#[test]
fn texel_i_is_splat_i_row_major() {
    let mut s = Synthetic::random(20, 0, 21);
    // Texel 9 is row 1, column 1 of an 8-wide image.
    set(&mut s.scales, 9, [1, 2, 3, 255]);
    set(&mut s.scales, 10, [200, 100, 50, 255]);
    let d = decode_files(&s.files(), &DecodeOptions::default()).unwrap();
    assert_eq!(d.geometry[9].log_scale, [book(1), book(2), book(3)]);
    assert_eq!(d.geometry[10].log_scale, [book(200), book(100), book(50)]);
}

#[test]
fn positions_are_16_bit_low_high_then_log_transformed() {
    let mut s = Synthetic::random(8, 0, 22);
    // means mins/maxs are [-1, -2, -0.5] .. [1, 0.5, 2] in the synthetic meta.json.
    set(&mut s.means_l, 0, [0x00, 0xff, 0x34, 255]);
    set(&mut s.means_u, 0, [0x00, 0xff, 0x12, 255]);
    let d = decode_files(&s.files(), &DecodeOptions::default()).unwrap();
    let p = d.geometry[0].position;
    let inv = |v: f64| (v.signum() * v.abs().exp_m1()) as f32;
    let z = -0.5 + 2.5 * f64::from(0x1234u16) / 65535.0;
    let expected = [inv(-1.0), inv(0.5), inv(z)];
    for a in 0..3 {
        assert!((p[a] - expected[a]).abs() < 1e-6, "{p:?} vs {expected:?}");
    }
}

#[test]
fn quaternion_tag_names_the_dropped_component_in_wxyz_order() {
    let mut s = Synthetic::random(8, 0, 23);
    // Three small components of +0.5/√2·… : byte 255 → +1/√2, 0 → −1/√2, 128 → ~0.
    set(&mut s.quats, 0, [128, 128, 128, 252]);
    set(&mut s.quats, 1, [255, 128, 128, 253]);
    set(&mut s.quats, 2, [128, 0, 128, 254]);
    set(&mut s.quats, 3, [128, 128, 255, 255]);
    set(&mut s.quats, 4, [1, 2, 3, 17]);
    let d = decode_files(&s.files(), &DecodeOptions::default()).unwrap();
    let r = |i: usize| d.geometry[i].rotation;
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let near = |a: [f32; 4], b: [f32; 4]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 0.01);
    assert!(near(r(0), [1.0, 0.0, 0.0, 0.0]), "{:?}", r(0));
    // tag 253: x was dropped; stored are w, y, z.
    assert!(near(r(1), [h, h, 0.0, 0.0]), "{:?}", r(1));
    // tag 254: y dropped; stored w, x, z.
    assert!(near(r(2), [0.0, -h, h, 0.0]), "{:?}", r(2));
    // tag 255: z dropped; stored w, x, y.
    assert!(near(r(3), [0.0, 0.0, h, h]), "{:?}", r(3));
    // An invalid tag reads as identity, as in PlayCanvas's readers.
    assert_eq!(r(4), [1.0, 0.0, 0.0, 0.0]);
}

#[test]
fn v2_colour_is_f_dc_from_the_codebook_and_alpha_is_sigmoid_opacity() {
    let mut s = Synthetic::random(8, 0, 24);
    set(&mut s.sh0, 0, [0, 128, 255, 255]);
    set(&mut s.sh0, 1, [10, 20, 30, 0]);
    set(&mut s.sh0, 2, [10, 20, 30, 51]);
    let d = decode_files(&s.files(), &DecodeOptions::default()).unwrap();
    assert_eq!(&d.sh[0..3], &[book(0), book(128), book(255)]);
    assert_eq!(&d.sh[3..6], &[book(10), book(20), book(30)]);
    let logit = |a: f64| (a / (1.0 - a)).ln() as f32;
    assert!((d.geometry[0].opacity_logit - logit(1.0 - 1e-6)).abs() < 1e-3);
    assert!((d.geometry[1].opacity_logit - logit(1e-6)).abs() < 1e-3);
    assert!((d.geometry[2].opacity_logit - logit(0.2)).abs() < 1e-5);
}

#[test]
fn sh_palette_entry_texels_hold_one_coefficient_each_in_rgb() {
    for bands in 1..=3u8 {
        let mut s = Synthetic::random(16, bands, 25);
        let coeffs = [0, 3, 8, 15][bands as usize];
        // Splat 5 uses palette entry 70: row 1, slot 6 of the centroid image.
        set(
            s.sh_n.as_mut().unwrap().3.as_mut_slice(),
            5,
            [70, 0, 0, 255],
        );
        let centroids = &mut s.sh_n.as_mut().unwrap().2;
        let row_width = 64 * coeffs;
        for k in 0..coeffs {
            let texel = row_width + 6 * coeffs + k;
            set(
                centroids,
                texel,
                [k as u8, 100 + k as u8, 200 + k as u8, 255],
            );
        }
        let d = decode_files(&s.files(), &DecodeOptions::default()).unwrap();
        let stride = sh_stride(bands);
        let splat = &d.sh[5 * stride..6 * stride];
        for k in 0..coeffs {
            let c = &splat[3 * (1 + k)..3 * (2 + k)];
            assert_eq!(
                c,
                [book(k as u8), book(100 + k as u8), book(200 + k as u8)],
                "bands {bands} k {k}"
            );
        }
    }
}

#[test]
fn antialiasing_is_read_from_model_or_antialias() {
    let s = Synthetic::random(8, 0, 26);
    for (key, value, expected) in [
        ("model", json!("antialiased"), true),
        ("model", json!("2dgs"), false),
        ("antialias", json!(true), true),
        ("antialias", json!(false), false),
    ] {
        let mut meta = s.meta_json();
        meta[key] = value;
        let files = s.files_with_meta(&meta);
        assert_eq!(
            parse_meta(&files["meta.json"]).unwrap().antialiased(),
            expected,
            "{key}"
        );
        assert_eq!(
            decode_files(&files, &DecodeOptions::default())
                .unwrap()
                .antialiased,
            expected
        );
    }
}

#[test]
fn null_first_codebook_entry_is_extrapolated_like_the_engine() {
    let mut s = Synthetic::random(8, 0, 27);
    set(&mut s.scales, 0, [0, 1, 255, 255]);
    let mut meta = s.meta_json();
    meta["scales"]["codebook"][0] = serde_json::Value::Null;
    let d = decode_files(&s.files_with_meta(&meta), &DecodeOptions::default()).unwrap();
    let first = book(1) + (book(1) - book(255)) / 255.0;
    assert!((d.geometry[0].log_scale[0] - first).abs() < 1e-6);
    assert_eq!(d.non_finite, 0);
    // Any other null is NaN, and its splats are counted as non-finite.
    meta["scales"]["codebook"][1] = serde_json::Value::Null;
    let d = decode_files(&s.files_with_meta(&meta), &DecodeOptions::default()).unwrap();
    assert!(d.geometry[0].log_scale[1].is_nan());
    assert!(d.non_finite >= 1);
}
