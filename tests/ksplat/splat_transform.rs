//! Against PlayCanvas splat-transform 2.7.1's independent `.ksplat` reader
//! (`readKsplat`), sampled in `<name>.splat_transform.ply`: every ⌊n/400⌋-th row and
//! the last, with its record index.
//!
//! splat-transform stores its f64 results as f32 and writes a zero scale as a log of
//! −10 (ours is the log of the smallest normal f32); its colour and opacity follow the
//! same formulas as the crate's, in f64.

use crate::common::*;
use bevy_splat::asset::decoded::sh_stride;

fn compare(fixture: &Fixture) -> Worst {
    let ours = fixture.decode();
    let theirs = fixture.splat_transform();
    let per_channel = theirs.rest_per_channel();
    let stride = sh_stride(ours.sh_degree);
    assert_eq!(per_channel, (stride - 3) / 3, "{}", fixture.name);
    assert!(theirs.count > 400, "{}: rows", fixture.name);

    let mut worst = Worst::default();
    let mut zero_scales = 0;
    for row in 0..theirs.count {
        let i = theirs.get(row, "index") as usize;
        let g = &ours.geometry[i];
        let d = |a: f32, b: f32| f64::from((a - b).abs());
        for (ours_p, theirs_p) in g.position.iter().zip(theirs.position(row)) {
            worst.note("position", d(*ours_p, theirs_p), i);
        }
        for (ours_s, theirs_s) in g.log_scale.iter().zip(theirs.log_scale(row)) {
            if theirs_s == -10.0 && *ours_s == zero_scale_log() {
                zero_scales += 1;
                continue;
            }
            worst.note("log scale", d(*ours_s, theirs_s), i);
        }
        for (ours_q, theirs_q) in g.rotation.iter().zip(theirs.rotation(row)) {
            worst.note("rotation", d(*ours_q, theirs_q), i);
        }
        for (c, theirs_dc) in theirs.dc(row).into_iter().enumerate() {
            worst.note("f_dc", d(ours.sh[i * stride + c], theirs_dc), i);
        }
        worst.note(
            "opacity logit",
            d(g.opacity_logit, theirs.get(row, "opacity")),
            i,
        );
        for k in 0..per_channel {
            for c in 0..3 {
                let ours_v = ours.sh[i * stride + 3 * (k + 1) + c];
                worst.note("f_rest", d(ours_v, theirs.rest(row, c, k)), i);
            }
        }
    }
    worst.print(fixture.name, "splat-transform");
    println!(
        "{:>13}  {zero_scales} zero scales (ours: floor, theirs: -10)",
        fixture.name
    );
    // The angel's sample keeps every row with a zero scale (f16 underflow).
    let expected_zeros = if fixture.name == "angel_l1" { 17 } else { 0 };
    assert_eq!(zero_scales, expected_zeros, "{}", fixture.name);
    worst
}

fn assert_agree(fixture: &Fixture) {
    let worst = compare(fixture);
    let name = fixture.name;
    // Both round the same f64 centre to f32 (one-ulp ties aside).
    assert!(worst.get("position") <= 2.4e-7, "{name}");
    // Its log is of the f32 scale in f64 like ours; then both round.
    assert!(worst.get("log scale") <= 1e-6, "{name}");
    assert_eq!(worst.get("rotation"), 0.0, "{name}");
    assert!(worst.get("f_dc") <= 1e-6, "{name}");
    assert!(worst.get("opacity logit") <= 1e-5, "{name}");
    assert!(worst.get("f_rest") <= 6e-8, "{name}");
}

#[test]
fn every_fixture_matches_splat_transform() {
    for fixture in &FIXTURES {
        assert_agree(fixture);
    }
}
