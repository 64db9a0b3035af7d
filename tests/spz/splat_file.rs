//! The `.splat` decoder on a real capture, checked against the PLY that was converted
//! from the same file.

use crate::common::ply::Ply;
use crate::common::{MaxError, data, normalised, read, sigmoid};
use bevy_splat::asset::decoded::SH_C0;
use bevy_splat::asset::formats::splat::{self, SplatFileError};

#[test]
fn seal_matches_its_ply_conversion() {
    let bytes = read(data("formats/seal.splat"));
    let d = splat::decode(&bytes).unwrap();
    assert_eq!(d.len(), 101_780);
    assert_eq!((d.sh_degree, d.sh.len()), (0, 3 * 101_780));
    assert!(!d.antialiased);
    assert_eq!(d.non_finite, 0);

    let ply = Ply::parse(&read(data("seal_sh0.ply")));
    assert_eq!(ply.count, d.len());
    let (mut pos, mut scale, mut colour, mut alpha, mut rot) =
        <(MaxError, MaxError, MaxError, MaxError, MaxError)>::default();
    for (i, g) in d.geometry.iter().enumerate() {
        let update = |e: &mut MaxError, a: f32, b: f32| e.update((a - b).abs(), i);
        for (a, b) in g.position.iter().zip(ply.position(i)) {
            update(&mut pos, *a, b);
        }
        for (a, b) in g.log_scale.iter().zip(ply.log_scale(i)) {
            update(&mut scale, *a, b);
        }
        for c in 0..3 {
            let ours = 0.5 + SH_C0 * d.sh[3 * i + c];
            update(&mut colour, ours, 0.5 + SH_C0 * ply.dc(i)[c]);
        }
        // The converter clamped alpha 255 to 254.5/255; this decoder clamps it to
        // 1 - 1e-6 (and 0 to 1e-6), so only the interior bytes compare.
        let alpha_byte = bytes[32 * i + 27];
        if (1..=254).contains(&alpha_byte) {
            update(
                &mut alpha,
                sigmoid(g.opacity_logit),
                sigmoid(ply.get(i, "opacity")),
            );
        } else {
            assert!(g.opacity_logit.abs() > 13.0 && g.opacity_logit.is_finite());
        }
        let q = normalised(ply.rotation(i));
        let dot: f32 = g.rotation.iter().zip(q).map(|(a, b)| a * b).sum();
        rot.update(1.0 - dot.abs(), i);
        let n: f32 = g.rotation.iter().map(|c| c * c).sum();
        assert!((n - 1.0).abs() < 1e-5);
    }
    println!(
        "seal.splat vs seal_sh0.ply: position {:.2e}, log-scale {:.2e}, colour {:.2e}, \
         alpha {:.2e}, 1-|q.q'| {:.2e}",
        pos.value, scale.value, colour.value, alpha.value, rot.value
    );
    assert!(pos.value <= 1e-6, "{pos:?}");
    assert!(scale.value <= 1e-5, "{scale:?}");
    // The converter's colour and alpha are the same bytes over 255.
    assert!(colour.value <= 1e-5, "{colour:?}");
    assert!(alpha.value <= 1e-5, "{alpha:?}");
    assert!(rot.value <= 1e-6, "{rot:?}");
}

#[test]
fn length_errors_name_the_remainder() {
    let bytes = read(data("formats/seal.splat"));
    let e = splat::decode(&bytes[..bytes.len() - 5]).unwrap_err();
    assert_eq!(
        e,
        SplatFileError::BadLength {
            len: bytes.len() - 5,
            remainder: 27
        }
    );
    assert!(e.to_string().contains("27 bytes left over"));
    assert_eq!(splat::decode(&[]), Err(SplatFileError::Empty));
}
