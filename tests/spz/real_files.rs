//! Real SPZ files written by other tools: the tower scan (v2, SH 3), JSpz's unit cube
//! (v2, SH 0) and Cesium's UnitSH buffer (v3, SH 3, stray bytes after the member).

use crate::common::sh_stride;
use crate::common::{data, read};
use bevy_splat::asset::decoded::DecodedSplats;
use bevy_splat::asset::formats::spz::{self, SpzError};

fn check_sane(d: &DecodedSplats) {
    assert_eq!(d.sh.len(), d.len() * sh_stride(d.sh_degree));
    assert_eq!(d.non_finite, 0);
    for (i, g) in d.geometry.iter().enumerate() {
        let n: f32 = g.rotation.iter().map(|c| c * c).sum();
        assert!((n - 1.0).abs() < 1e-5, "splat {i}: |q|^2 = {n}");
        // SPZ log scales are (byte / 16) - 10: within [-10, 5.94].
        assert!(g.log_scale.iter().all(|s| (-10.0..=6.0).contains(s)));
        assert!(g.opacity_logit.abs() < 14.0);
    }
    assert!(d.sh.iter().all(|v| v.abs() <= 3.4));
}

#[test]
fn tower_v2() {
    let bytes = read(data("formats/tower_v2.spz"));
    assert!(spz::is_spz(&bytes));
    let (d, info) = spz::decode_with_info(&bytes).unwrap();
    assert_eq!(d.len(), 73_172);
    assert_eq!(d.sh_degree, 3);
    assert_eq!(info.version, 2);
    assert_eq!(info.fractional_bits, 12);
    assert!(!info.antialiased && !d.antialiased);
    assert!(!info.dropped_sh_bands());
    check_sane(&d);
    // A building scan: metres-scale extent, and splats a few centimetres across.
    let mut log_scales: Vec<f32> = d.geometry.iter().flat_map(|g| g.log_scale).collect();
    log_scales.sort_by(f32::total_cmp);
    let median = log_scales[log_scales.len() / 2].exp();
    assert!((0.001..0.5).contains(&median), "median scale {median}");
    // The rest bands carry signal (not all zero).
    assert!(
        d.sh.chunks(48)
            .any(|s| s[3..].iter().any(|v| v.abs() > 0.05))
    );
}

#[test]
fn unit_cube_v2() {
    let bytes = read(data("formats/unitcube_v2.spz"));
    let (d, info) = spz::decode_with_info(&bytes).unwrap();
    assert_eq!(d.len(), 20);
    assert_eq!(d.sh_degree, 0);
    assert_eq!(info.version, 2);
    check_sane(&d);
    for g in &d.geometry {
        println!("{:?}", g.position);
    }
    // JSpz's "unit cube" is 10 units wide: its 8 corners and 12 edge midpoints, at
    // 0, 5 or 10 on each axis of SPZ's frame, so at 0, -5 or -10 on y and z once turned
    // to RDF.
    let (mut corners, mut midpoints) = (0, 0);
    for g in &d.geometry {
        let [x, y, z] = g.position;
        let on_grid = |v: f32, s: f32| {
            [0.0, 5.0 * s, 10.0 * s]
                .iter()
                .any(|g| (v - g).abs() < 1e-3)
        };
        assert!(
            on_grid(x, 1.0) && on_grid(y, -1.0) && on_grid(z, -1.0),
            "{:?}",
            g.position
        );
        match g
            .position
            .iter()
            .filter(|c| (c.abs() - 5.0).abs() < 1e-3)
            .count()
        {
            0 => corners += 1,
            1 => midpoints += 1,
            _ => panic!("not on a cube edge: {:?}", g.position),
        }
    }
    assert_eq!((corners, midpoints), (8, 12));
}

#[test]
fn unit_sh_v3_with_trailing_bytes() {
    let bytes = read(data("formats/unit_sh_legacy_gltf/UnitSH_legacy_data.bin"));
    assert_eq!(bytes.len(), 124);
    assert_eq!(&bytes[121..], &[0x1f, 0x8b, 0x08]);
    assert!(spz::is_spz(&bytes));
    let (d, info) = spz::decode_with_info(&bytes).unwrap();
    assert_eq!(info.version, 3);
    assert_eq!(d.len(), 9);
    assert_eq!(d.sh_degree, 3);
    check_sane(&d);
    // Cesium's UnitSH: the 8 corners of a 100-unit cube, plus one splat at the centre
    // that carries the SH signal.
    let corners = d
        .geometry
        .iter()
        .filter(|g| g.position.iter().all(|c| (c.abs() - 50.0).abs() < 1e-3));
    assert_eq!(corners.count(), 8);
    let centre = d
        .geometry
        .iter()
        .position(|g| g.position.iter().all(|c| c.abs() < 1e-3));
    let centre = centre.expect("a splat at the origin");
    let sh = &d.sh[centre * 48..(centre + 1) * 48];
    assert!(sh[3..].iter().any(|v| v.abs() > 0.5), "{sh:?}");
}

#[test]
fn trailing_garbage_after_the_member_is_ignored() {
    let clean = read(data("formats/unitcube_v2.spz"));
    let expected = spz::decode(&clean).unwrap();
    for junk in [
        &[0x1f, 0x8b, 0x08][..],
        &[0u8; 100],
        b"garbage that is not gzip",
    ] {
        let mut bytes = clean.clone();
        bytes.extend_from_slice(junk);
        assert_eq!(spz::decode(&bytes).unwrap(), expected);
    }
    // A whole second member is ignored too.
    let mut twice = clean.clone();
    twice.extend_from_slice(&clean);
    assert_eq!(spz::decode(&twice).unwrap(), expected);
}

#[test]
fn not_spz_is_recognised() {
    assert!(!spz::is_spz(b""));
    assert!(!spz::is_spz(b"ply\nformat"));
    assert!(!spz::is_spz(&crate::common::encode::gzip(
        b"PK\x03\x04 a zip, gzipped"
    )));
    assert!(spz::is_spz(b"NGSP"));
    assert_eq!(
        spz::decode(b"ply\n"),
        Err(SpzError::UnrecognizedContainer {
            found: b"ply\n".to_vec()
        })
    );
}
