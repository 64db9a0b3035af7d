//! Field by field against GaussianSplats3D's own decoding of the same files (its
//! `SplatBuffer` getters, sampled in `<name>.library.json`). The decoder does the
//! library's arithmetic (f64 where JavaScript works in f64, rounded once), so every
//! field must match exactly.

use crate::common::*;
use bevy_splat::asset::decoded::{f_dc_from_colour, opacity_logit, sh_stride};
use bevy_splat::asset::formats::ksplat;
use serde_json::Value;

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn compare(fixture: &Fixture) -> Worst {
    let ours = fixture.decode();
    let lib = fixture.library();
    assert_eq!(ours.len(), fixture.splats, "{}", fixture.name);
    assert_eq!(ours.len() as u64, lib["splat_count"].as_u64().unwrap());
    assert_eq!(
        u64::from(ours.sh_degree),
        lib["sh_degree"].as_u64().unwrap()
    );
    assert_eq!(ours.sh_degree, fixture.sh_degree);
    assert_eq!(ours.non_finite, 0);
    assert!(!ours.antialiased);
    let header = &lib["header"];
    assert_eq!(
        header["compressionLevel"].as_u64(),
        Some(u64::from(fixture.level))
    );
    let order = fixture.order();
    let stride = sh_stride(ours.sh_degree);

    let mut worst = Worst::default();
    let splats = lib["splats"].as_array().expect("splats");
    assert!(splats.len() >= 40, "{}: samples", fixture.name);
    for s in splats {
        let i = s["index"].as_u64().unwrap() as usize;
        assert_eq!(
            s["ply_index"].as_u64(),
            Some(order[i] as u64),
            "order of {i}"
        );
        let g = &ours.geometry[i];
        let centre = floats(&s["center"]);
        for (&p, c) in g.position.iter().zip(centre) {
            // The library hands back f64; ours is that value rounded to f32.
            worst.note(
                "centre (rounded)",
                (f64::from(p) - f64::from(c as f32)).abs(),
                i,
            );
            worst.note("centre (vs f64)", (f64::from(p) - c).abs(), i);
        }
        for (a, linear) in floats(&s["scale"]).into_iter().enumerate() {
            let expected = if linear == 0.0 {
                zero_scale_log()
            } else {
                linear.ln() as f32
            };
            worst.note("log scale", f64::from((g.log_scale[a] - expected).abs()), i);
        }
        for (a, q) in floats(&s["rotation_wxyz"]).into_iter().enumerate() {
            // At level 0 the library's quaternion picks up f64 noise (~1e-16).
            worst.note(
                "rotation (rounded)",
                (f64::from(g.rotation[a]) - f64::from(q as f32)).abs(),
                i,
            );
            worst.note("rotation (vs f64)", (f64::from(g.rotation[a]) - q).abs(), i);
        }
        let rgba = floats(&s["rgba"]);
        for (c, byte) in rgba[..3].iter().enumerate() {
            let dc = f_dc_from_colour(*byte as f32 / 255.0);
            worst.note("f_dc", f64::from((ours.sh[i * stride + c] - dc).abs()), i);
        }
        let logit = opacity_logit(rgba[3] as f32 / 255.0);
        worst.note(
            "opacity logit",
            f64::from((g.opacity_logit - logit).abs()),
            i,
        );
        if stride > 3 {
            // [R, G, B] per coefficient k = 1..8, as the crate stores them.
            let rest: Vec<f64> = s["sh_rest_rgb"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(floats)
                .collect();
            assert_eq!(rest.len(), stride - 3);
            for (j, v) in rest.iter().enumerate() {
                let ours_v = ours.sh[i * stride + 3 + j];
                worst.note(
                    "SH rest (rounded)",
                    (f64::from(ours_v) - f64::from(*v as f32)).abs(),
                    i,
                );
                worst.note("SH rest (vs f64)", (f64::from(ours_v) - v).abs(), i);
            }
        }
    }
    worst.print(fixture.name, "library");
    worst
}

/// Everything the library hands back, exactly (after rounding its f64 to f32).
fn assert_exact(fixture: &Fixture) {
    let worst = compare(fixture);
    for field in [
        "centre (rounded)",
        "log scale",
        "rotation (rounded)",
        "f_dc",
        "opacity logit",
        "SH rest (rounded)",
    ] {
        assert_eq!(worst.get(field), 0.0, "{}: {field}", fixture.name);
    }
    // f32 rounding of the library's f64 results: half an f32 ulp at these magnitudes
    // (centres within ±8, SH within ±2).
    assert!(worst.get("centre (vs f64)") <= 4.8e-7, "{}", fixture.name);
    assert!(worst.get("SH rest (vs f64)") <= 6e-8, "{}", fixture.name);
    assert!(worst.get("rotation (vs f64)") <= 1e-15, "{}", fixture.name);
}

#[test]
fn angel_level1_matches_the_library() {
    assert_exact(&FIXTURES[0]);
}

#[test]
fn fruit_level0_sh2_matches_the_library() {
    assert_exact(&FIXTURES[1]);
}

#[test]
fn fruit_level1_matches_the_library() {
    assert_exact(&FIXTURES[2]);
    assert_exact(&FIXTURES[3]);
}

#[test]
fn fruit_level2_matches_the_library() {
    assert_exact(&FIXTURES[4]);
    assert_exact(&FIXTURES[5]);
}

/// The header and section fields the library parsed, against what the file makes us
/// infer (counts, layout, the SH range level 2 uses).
#[test]
fn headers_agree_with_the_library() {
    for fixture in &FIXTURES {
        let bytes = fixture.bytes();
        assert!(ksplat::is_ksplat(&bytes), "{}", fixture.name);
        let lib = fixture.library();
        let section = &lib["sections"][0];
        assert_eq!(lib["sections"].as_array().unwrap().len(), 1);
        let data_base = section["dataBase"].as_u64().unwrap();
        let bytes_per_splat = section["bytesPerSplat"].as_u64().unwrap();
        assert_eq!(
            bytes.len() as u64,
            data_base + bytes_per_splat * fixture.splats as u64
        );
        // Level 0 has no bucket table; the others one centre per bucket and one
        // length per partial bucket before the records.
        let buckets = section["bucketCount"].as_u64().unwrap();
        let partial = section["partiallyFilledBucketCount"].as_u64().unwrap();
        assert_eq!(
            data_base,
            4096 + 1024 + 12 * buckets + 4 * partial,
            "{}",
            fixture.name
        );
        assert_eq!(buckets == 0, fixture.level == 0);
    }
}
