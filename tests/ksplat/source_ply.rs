//! Against the PLYs the fixtures were written from, record by record through
//! `<scene>.order.json` (the writer sorts and buckets splats and drops those whose
//! alpha byte is 0). Each field must lie within the step of its level's storage:
//!
//! | field | level 0 | levels 1 and 2 |
//! |---|---|---|
//! | centre | exact (f32) | half a step of 2.5 / 32767 (3.81e-5) about the bucket centre |
//! | scale | f32 of exp(s): ~1e-6 in the log | f16, truncated: < 2^-10 relative (9.77e-4 in the log); below 2^-14 within 2^-24 absolute; 0 for anything below 2^-24 |
//! | rotation | f32 of the normalised source | f16, truncated: one f16 step, 2^-11 |
//! | colour, alpha | bytes: ⌊(0.5 + C0·f_dc)·255⌋, ⌊sigmoid(opacity)·255⌋ | same |
//! | SH | exact (f32) | level 1: one f16 step at the value; level 2: one byte step (max − min) / 255 |
//!
//! Level 2 of release 0.4.7 leaves the last degree-2 component out of its SH range and
//! clamps it into the range, so that one may be off by its distance outside the range
//! too.

use crate::common::*;
use bevy_splat::asset::decoded::{SH_C0, sh_stride};

/// JavaScript's `0.28209479177387814`, the constant the writer used in f64.
const WRITER_C0: f64 = 0.282_094_791_773_878_14;
/// The writer's centre quantisation step: half a 5.0 bucket cell over 32767.
const CENTRE_STEP: f64 = 2.5 / 32767.0;

/// The gap between consecutive f16 values around `v` (normal or subnormal).
fn f16_step(v: f64) -> f64 {
    let exponent = v.abs().max(2f64.powi(-14)).log2().floor();
    2f64.powf(exponent - 10.0)
}

fn colour_byte(f_dc: f32) -> i64 {
    ((0.5 + WRITER_C0 * f64::from(f_dc)) * 255.0)
        .floor()
        .clamp(0.0, 255.0) as i64
}

fn alpha_byte(opacity: f32) -> i64 {
    ((1.0 / (1.0 + (-f64::from(opacity)).exp())) * 255.0)
        .floor()
        .clamp(0.0, 255.0) as i64
}

struct Stats {
    worst: Worst,
    colour_mismatches: usize,
    alpha_mismatches: usize,
}

fn compare(fixture: &Fixture) -> Stats {
    let ours = fixture.decode();
    let source = fixture.source_ply();
    let order = fixture.order();
    assert_eq!(order.len(), ours.len());
    let stride = sh_stride(ours.sh_degree);
    let lib = fixture.library();
    let (sh_min, sh_max) = (
        lib["header"]["minSphericalHarmonicsCoeff"]
            .as_f64()
            .unwrap(),
        lib["header"]["maxSphericalHarmonicsCoeff"]
            .as_f64()
            .unwrap(),
    );
    let byte_step = (sh_max - sh_min) / 255.0;
    let quantised = fixture.level > 0;

    let mut worst = Worst::default();
    let (mut colour_mismatches, mut alpha_mismatches) = (0, 0);
    for (i, &row) in order.iter().enumerate() {
        let g = &ours.geometry[i];
        for (a, p) in source.position(row).into_iter().enumerate() {
            worst.note("centre", (f64::from(g.position[a]) - f64::from(p)).abs(), i);
        }
        let q = source.rotation(row).map(f64::from);
        let norm = q.iter().map(|v| v * v).sum::<f64>().sqrt();
        for (a, v) in q.iter().enumerate() {
            let diff = (f64::from(g.rotation[a]) - v / norm).abs();
            let field = if quantised {
                "rotation (f16 steps)"
            } else {
                "rotation"
            };
            worst.note(
                field,
                if quantised {
                    diff / f16_step(v / norm)
                } else {
                    diff
                },
                i,
            );
        }
        for (a, s) in source.log_scale(row).into_iter().enumerate() {
            let linear = f64::from(s).exp();
            let ours_log = f64::from(g.log_scale[a]);
            if !quantised {
                worst.note("log scale", (ours_log - f64::from(s)).abs(), i);
            } else if g.log_scale[a] == zero_scale_log() {
                worst.note("source scale of a stored 0", linear, i);
            } else if linear >= 2f64.powi(-14) {
                worst.note("log scale (f16 normal)", (ours_log - f64::from(s)).abs(), i);
            } else {
                worst.note("scale (f16 subnormal)", (ours_log.exp() - linear).abs(), i);
            }
        }
        for (c, dc) in source.dc(row).into_iter().enumerate() {
            let byte = ((0.5 + SH_C0 * ours.sh[i * stride + c]) * 255.0).round() as i64;
            colour_mismatches += usize::from(byte != colour_byte(dc));
        }
        let alpha = (255.0 / (1.0 + (-g.opacity_logit).exp())).round() as i64;
        let expected = alpha_byte(source.get(row, "opacity"));
        worst.note("alpha byte", (alpha - expected).abs() as f64, i);
        alpha_mismatches += usize::from(alpha != expected);
        for k in 1..stride / 3 {
            for c in 0..3 {
                let v = f64::from(source.rest(row, c, k - 1));
                let diff = (f64::from(ours.sh[i * stride + 3 * k + c]) - v).abs();
                match fixture.level {
                    0 => worst.note("SH", diff, i),
                    1 => worst.note("SH (f16 steps)", diff / f16_step(v), i),
                    _ if k == 8 && c == 2 => {
                        // The clamped component: beyond the range by `outside`.
                        let outside = (sh_min - v).max(v - sh_max).max(0.0);
                        worst.note(
                            "SH blue 8 (beyond clamp, bytes)",
                            (diff - outside) / byte_step,
                            i,
                        );
                        worst.note("SH blue 8", diff, i);
                    }
                    _ => worst.note("SH (byte steps)", diff / byte_step, i),
                }
            }
        }
    }
    worst.print(fixture.name, "source");
    println!(
        "{:>13}  colour bytes differing: {colour_mismatches}, alpha bytes differing: {alpha_mismatches}",
        fixture.name
    );
    Stats {
        worst,
        colour_mismatches,
        alpha_mismatches,
    }
}

fn assert_within_steps(fixture: &Fixture) {
    let Stats {
        worst,
        colour_mismatches,
        alpha_mismatches,
    } = compare(fixture);
    let name = fixture.name;
    assert_eq!(colour_mismatches, 0, "{name}");
    // The writer's sigmoid ran in JavaScript's exp; a last-bit difference can move a
    // product that lands on a whole number to the byte below.
    assert!(alpha_mismatches <= fixture.splats / 1000, "{name}");
    assert!(worst.get("alpha byte") <= 1.0, "{name}");
    if fixture.level == 0 {
        assert_eq!(worst.get("centre"), 0.0, "{name}");
        assert!(worst.get("rotation") <= 6e-8, "{name}");
        assert!(worst.get("log scale") <= 1e-6, "{name}");
        assert_eq!(worst.get("SH"), 0.0, "{name}");
        return;
    }
    // Half a step, plus the f32 rounding of centres within ±8.
    assert!(worst.get("centre") <= CENTRE_STEP / 2.0 + 4.8e-7, "{name}");
    // f32 rounding before the truncation can round up to the next f16 value.
    assert!(worst.get("rotation (f16 steps)") <= 1.0 + 1e-3, "{name}");
    assert!(worst.get("log scale (f16 normal)") <= 9.8e-4, "{name}");
    assert!(
        worst.get("scale (f16 subnormal)") <= 2f64.powi(-24),
        "{name}"
    );
    assert!(
        worst.get("source scale of a stored 0") < 2f64.powi(-24),
        "{name}"
    );
    match fixture.level {
        1 => assert!(worst.get("SH (f16 steps)") <= 1.0 + 1e-3, "{name}"),
        _ => {
            assert!(worst.get("SH (byte steps)") <= 1.0 + 1e-4, "{name}");
            assert!(
                worst.get("SH blue 8 (beyond clamp, bytes)") <= 1.0 + 1e-4,
                "{name}"
            );
        }
    }
}

#[test]
fn angel_level1_within_its_steps() {
    assert_within_steps(&FIXTURES[0]);
}

#[test]
fn fruit_within_their_steps() {
    for fixture in &FIXTURES[1..] {
        assert_within_steps(fixture);
    }
}

/// The splats missing from the file are exactly those whose alpha byte is 0.
#[test]
fn only_transparent_splats_are_dropped() {
    for fixture in [&FIXTURES[0], &FIXTURES[1]] {
        let source = fixture.source_ply();
        let order = fixture.order();
        let mut kept = vec![false; source.count];
        for &row in &order {
            assert!(!kept[row], "{}: row {row} twice", fixture.name);
            kept[row] = true;
        }
        let dropped: Vec<usize> = (0..source.count).filter(|&r| !kept[r]).collect();
        for &row in &dropped {
            assert_eq!(
                alpha_byte(source.get(row, "opacity")),
                0,
                "{} row {row}",
                fixture.name
            );
        }
        let transparent_kept = order
            .iter()
            .filter(|&&r| alpha_byte(source.get(r, "opacity")) == 0)
            .count();
        assert!(
            transparent_kept <= 1,
            "{}: {transparent_kept}",
            fixture.name
        );
        println!(
            "{}: {} of {} source splats dropped",
            fixture.name,
            dropped.len(),
            source.count
        );
    }
}
