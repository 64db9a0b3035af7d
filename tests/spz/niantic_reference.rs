//! SPZ files written by Niantic's own library from Inria PLYs (see FIXTURES.md), checked
//! two ways: against Niantic's decoding of the same file (its loader, converted to RDF,
//! saved as PLY) to float rounding, and against the source PLY to within each field's
//! quantisation step.

use crate::common::ply::Ply;
use crate::common::sh_stride;
use crate::common::{MaxError, data, normalised, read, read_fixture, sigmoid};
use bevy_splat::asset::decoded::DecodedSplats;
use bevy_splat::asset::formats::spz;

/// SPZ's DC colour byte is 0.5 + 0.15 · f_dc, scaled by 255.
const COLOR_SCALE: f32 = 0.15;

fn rest_value(d: &DecodedSplats, i: usize, channel: usize, k: usize) -> f32 {
    d.sh[i * sh_stride(d.sh_degree) + 3 * (k + 1) + channel]
}

fn dc_value(d: &DecodedSplats, i: usize, channel: usize) -> f32 {
    d.sh[i * sh_stride(d.sh_degree) + channel]
}

/// Ours against Niantic's decoding: the same arithmetic, so float rounding only (their
/// quaternions are not normalised, and their alpha 0/255 logits are infinite).
fn check_against_niantic(name: &str, d: &DecodedSplats, reference: &Ply) {
    assert_eq!(d.len(), reference.count, "{name}");
    let (mut pos, mut dc, mut alpha, mut scale, mut rot, mut rest) = Default::default();
    let kept = sh_stride(d.sh_degree) / 3 - 1;
    for (i, g) in d.geometry.iter().enumerate() {
        let update = |e: &mut MaxError, a: f32, b: f32| e.update((a - b).abs(), i);
        for (a, b) in g.position.iter().zip(reference.position(i)) {
            update(&mut pos, *a, b);
        }
        for c in 0..3 {
            update(&mut dc, dc_value(d, i, c), reference.dc(i)[c]);
        }
        update(
            &mut alpha,
            sigmoid(g.opacity_logit),
            sigmoid(reference.get(i, "opacity")),
        );
        for (a, b) in g.log_scale.iter().zip(reference.log_scale(i)) {
            update(&mut scale, *a, b);
        }
        for (a, b) in g.rotation.iter().zip(normalised(reference.rotation(i))) {
            update(&mut rot, *a, b);
        }
        for c in 0..3 {
            for k in 0..kept {
                update(&mut rest, rest_value(d, i, c, k), reference.rest(i, c, k));
            }
        }
    }
    println!(
        "{name} vs Niantic: position {:.2e}, f_dc {:.2e}, alpha {:.2e}, log-scale {:.2e}, \
         rotation {:.2e}, f_rest {:.2e}",
        pos.value, dc.value, alpha.value, scale.value, rot.value, rest.value
    );
    assert!(pos.value <= 1e-6, "{name} position {pos:?}");
    assert!(dc.value <= 1e-5, "{name} f_dc {dc:?}");
    assert!(alpha.value <= 2e-6, "{name} alpha {alpha:?}");
    assert!(scale.value <= 1e-6, "{name} scale {scale:?}");
    assert!(rot.value <= 1e-5, "{name} rotation {rot:?}");
    assert!(rest.value <= 1e-6, "{name} f_rest {rest:?}");
}

/// Ours against the PLY the file was packed from, within the writer's quantisation.
fn check_against_source(name: &str, d: &DecodedSplats, version: u32, source: &Ply) {
    assert_eq!(d.len(), source.count, "{name}");
    let (mut pos, mut dc, mut alpha, mut scale, mut rot, mut band1, mut band23) = <(
        MaxError,
        MaxError,
        MaxError,
        MaxError,
        MaxError,
        MaxError,
        MaxError,
    )>::default();
    let dc_range = (-0.5 / COLOR_SCALE, 0.5 / COLOR_SCALE);
    let kept = sh_stride(d.sh_degree) / 3 - 1;
    for (i, g) in d.geometry.iter().enumerate() {
        for (a, b) in g.position.iter().zip(source.position(i)) {
            pos.update((a - b).abs() - 1e-6 * b.abs(), i);
        }
        for c in 0..3 {
            let src = source.dc(i)[c].clamp(dc_range.0, dc_range.1);
            dc.update((dc_value(d, i, c) - src).abs(), i);
        }
        let src_alpha = sigmoid(source.get(i, "opacity"));
        alpha.update((sigmoid(g.opacity_logit) - src_alpha).abs(), i);
        for (a, b) in g.log_scale.iter().zip(source.log_scale(i)) {
            scale.update((a - b.clamp(-10.0, 255.0 / 16.0 - 10.0)).abs(), i);
        }
        let q = normalised(source.rotation(i));
        let dot: f32 = g.rotation.iter().zip(q).map(|(a, b)| a * b).sum();
        rot.update(1.0 - dot.abs(), i);
        for c in 0..3 {
            for k in 0..kept {
                let src = source.rest(i, c, k).clamp(-1.0, 127.0 / 128.0);
                let error = (rest_value(d, i, c, k) - src).abs();
                if k < 3 {
                    band1.update(error, i)
                } else {
                    band23.update(error, i)
                }
            }
        }
    }
    println!(
        "{name} vs source: position {:.2e}, f_dc {:.2e}, alpha {:.2e}, log-scale {:.2e}, \
         1-|q.q'| {:.2e}, band-1 SH {:.2e}, band-2/3 SH {:.2e}",
        pos.value, dc.value, alpha.value, scale.value, rot.value, band1.value, band23.value
    );
    // Half a step of each quantiser, plus float slack.
    assert!(pos.value <= 0.5 / 4096.0 + 1e-6, "{name} position {pos:?}");
    assert!(
        dc.value <= 0.5 / (255.0 * COLOR_SCALE) + 1e-5,
        "{name} f_dc {dc:?}"
    );
    assert!(alpha.value <= 0.5 / 255.0 + 1e-6, "{name} alpha {alpha:?}");
    assert!(scale.value <= 0.5 / 16.0 + 1e-5, "{name} scale {scale:?}");
    // v2 keeps x, y, z at 8 bits (error up to 1/255 each) and rebuilds w. Near w = 0
    // that moves |xyz|² by up to 2·√3/255 ≈ 0.0136, so w by up to √0.0136 ≈ 0.12, and
    // 1 − |q·q'| ≈ |Δq|²/2 by up to about 0.008. v3+ stores the three smallest
    // components at 9 bits over ±1/√2.
    let rotation_tolerance = if version >= 3 { 2e-5 } else { 1e-2 };
    assert!(rot.value <= rotation_tolerance, "{name} rotation {rot:?}");
    // Niantic quantises band 1 to 5 bits and bands 2+ to 4 bits: buckets of 8 and 16
    // byte steps, each step 1/128.
    assert!(
        band1.value <= (0.5 + 4.0) / 128.0 + 1e-6,
        "{name} band 1 {band1:?}"
    );
    assert!(
        band23.value <= (0.5 + 8.0) / 128.0 + 1e-6,
        "{name} band 2/3 {band23:?}"
    );
}

fn check(spz_name: &str, version: u32, reference: &str, source: &Ply) -> DecodedSplats {
    let bytes = read_fixture(spz_name);
    assert!(spz::is_spz(&bytes));
    let (d, info) = spz::decode_with_info(&bytes).unwrap();
    assert_eq!(info.version, version, "{spz_name}");
    assert_eq!(d.non_finite, 0);
    // The decoder builds `DecodedSplats` itself; it must agree with the constructor.
    let rebuilt =
        DecodedSplats::from_parts(d.geometry.clone(), d.sh.clone(), d.sh_degree, d.antialiased);
    assert_eq!(rebuilt, d);
    check_against_niantic(spz_name, &d, &Ply::parse(&read_fixture(reference)));
    check_against_source(spz_name, &d, version, source);
    d
}

#[test]
fn fruit_drops_sh3_all_versions() {
    let source = Ply::parse(&read(data("fruit_drops_sh3.ply")));
    let names = [
        (
            "fruit_drops_sh3_v2.spz",
            2,
            "fruit_drops_sh3_v2_niantic.ply.gz",
        ),
        (
            "fruit_drops_sh3_v3.spz",
            3,
            "fruit_drops_sh3_v3v4_niantic.ply.gz",
        ),
        (
            "fruit_drops_sh3_v4.spz",
            4,
            "fruit_drops_sh3_v3v4_niantic.ply.gz",
        ),
    ];
    for (name, version, reference) in names {
        let d = check(name, version, reference, &source);
        assert_eq!((d.len(), d.sh_degree), (4_721, 3));
    }
}

#[test]
fn sh_degree_4_loads_three_bands() {
    let source = Ply::parse(&read_fixture("fruit256_sh4.ply.gz"));
    assert_eq!(source.rest_per_channel(), 24);
    let bytes = read_fixture("fruit256_sh4_v4.spz");
    let (d, info) = spz::decode_with_info(&bytes).unwrap();
    assert_eq!((info.stored_sh_degree, info.loaded_sh_degree), (4, 3));
    assert!(info.dropped_sh_bands());
    assert_eq!(d.sh_degree, 3);
    assert_eq!(d.sh.len(), 256 * 48);
    check_against_niantic(
        "fruit256_sh4_v4.spz",
        &d,
        &Ply::parse(&read_fixture("fruit256_sh4_v4_niantic.ply.gz")),
    );
    check_against_source("fruit256_sh4_v4.spz", &d, 4, &source);
}
