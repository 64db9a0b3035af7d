//! An independent check against the same scan: angel.sog against angel_sh0.ply.
//!
//! The SOG was authored turned 180° about Z, so a SOG splat sits at the PLY splat's
//! position with x and y negated and is rotated by q_sog = Rz(180°)·q_ply. The SOG has
//! 18 fewer splats, reordered, so each SOG splat is matched to its nearest PLY splat
//! (grid hash), then every field is compared in units of SOG's quantisation step.

use std::collections::HashMap;

use crate::common::*;
use bevy_splat::asset::formats::sog::decode_bundle;

const PLY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/angel_sh0.ply");
/// The compressed PLY that angel_sh0.ply was decoded from: its chunk table gives the
/// PLY's own quantisation step for every splat.
const COMPRESSED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/formats/angel.compressed.ply"
);

/// Per-splat quantisation steps of the compressed PLY: positions and log-scales are
/// 11/10/11-bit fractions of their 256-splat chunk's range.
struct CompressedSteps {
    position: Vec<[f64; 3]>,
    scale: Vec<[f64; 3]>,
}

fn compressed_steps(count: usize) -> CompressedSteps {
    let bytes = read(COMPRESSED);
    let end = b"end_header\n";
    let start = bytes.windows(end.len()).position(|w| w == end).unwrap() + end.len();
    let header = std::str::from_utf8(&bytes[..start]).unwrap();
    assert!(
        header.contains("element chunk 279\nproperty float min_x"),
        "chunk table first"
    );
    let chunk = |c: usize| -> [f64; 12] {
        std::array::from_fn(|k| {
            let o = start + (c * 12 + k) * 4;
            f64::from(f32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()))
        })
    };
    let levels = [2047.0, 1023.0, 2047.0];
    let (mut position, mut scale) = (Vec::new(), Vec::new());
    for i in 0..count {
        let c = chunk(i / 256);
        position.push(std::array::from_fn(|a| (c[3 + a] - c[a]) / levels[a]));
        scale.push(std::array::from_fn(|a| (c[9 + a] - c[6 + a]) / levels[a]));
    }
    CompressedSteps { position, scale }
}

/// Hamilton product of w, x, y, z quaternions.
fn mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

fn log_transform(x: f64) -> f64 {
    x.signum() * x.abs().ln_1p()
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The gap between the two codebook entries that bracket `v` (or to the nearest end).
fn codebook_step(book: &[f64], v: f64) -> f64 {
    match book.iter().position(|&c| c > v) {
        Some(0) => book[0] - v,
        Some(k) => book[k] - book[k - 1],
        None => v - book[book.len() - 1],
    }
}

/// Errors in units of one quantisation step, summarised.
#[derive(Default)]
struct Steps(Vec<f64>);

impl Steps {
    fn report(&mut self, field: &str) -> f64 {
        self.0.sort_by(f64::total_cmp);
        let q = |p: f64| self.0[((self.0.len() - 1) as f64 * p) as usize];
        let within = self.0.iter().filter(|&&e| e <= 1.0).count() as f64 / self.0.len() as f64;
        println!(
            "{field:<10} error/step: median {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}  (≤ 1 step: {:.3}%)",
            q(0.5),
            q(0.99),
            q(0.999),
            q(1.0),
            100.0 * within
        );
        q(1.0)
    }
}

const FIELDS: [&str; 5] = ["position", "log scale", "f_dc", "opacity", "rotation"];

#[test]
fn angel_sog_matches_angel_ply_within_quantisation() {
    let bundle = read(fixture("angel.sog"));
    let sog = decode_bundle(&bundle).expect("angel.sog");
    let meta_bytes = unzip(&bundle)
        .into_iter()
        .find(|(n, _)| n == "meta.json")
        .unwrap()
        .1;
    let meta: serde_json::Value = serde_json::from_slice(&meta_bytes).unwrap();
    let floats = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let (mins, maxs) = (
        floats(&meta["means"]["mins"]),
        floats(&meta["means"]["maxs"]),
    );
    let scale_book = floats(&meta["scales"]["codebook"]);
    let colour_book = floats(&meta["sh0"]["codebook"]);

    let ply = Ply::read(std::path::Path::new(PLY));
    assert_eq!(ply.count, 71_377);
    assert_eq!(sog.len(), 71_359);
    let cply = compressed_steps(ply.count);
    let col = |n: &str| -> Vec<f64> { ply.column(n).into_iter().map(f64::from).collect() };
    let [x, y, z] = ["x", "y", "z"].map(col);
    let rot = ["rot_0", "rot_1", "rot_2", "rot_3"].map(col);
    let scale = ["scale_0", "scale_1", "scale_2"].map(col);
    let dc = ["f_dc_0", "f_dc_1", "f_dc_2"].map(col);
    let opacity = col("opacity");

    // PLY positions and rotations in the SOG's frame.
    let turned: Vec<[f64; 3]> = (0..ply.count).map(|i| [-x[i], -y[i], z[i]]).collect();
    let rz180 = [0.0, 0.0, 0.0, 1.0];
    let turned_rot: Vec<[f64; 4]> = (0..ply.count)
        .map(|i| {
            let q = mul(rz180, [rot[0][i], rot[1][i], rot[2][i], rot[3][i]]);
            let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
            q.map(|v| v / n)
        })
        .collect();

    // Each field's error against PLY splat j, in units of its bound: one SOG step (its
    // writer truncates, so a full step) plus half a compressed-PLY step (that writer
    // rounds). Also the same error in SOG steps alone.
    let sog_step_colour = |v: f64| codebook_step(&colour_book, v).max(1e-9);
    let sog_step_scale = |v: f64| codebook_step(&scale_book, v).max(1e-9);
    let quat_sog = std::f64::consts::SQRT_2 / 255.0;
    let quat_ply = 0.5 * std::f64::consts::SQRT_2 / 1023.0;
    let errors = |i: usize, j: usize| -> ([f64; 5], [f64; 5]) {
        let g = &sog.geometry[i];
        let (mut bound, mut sog_only) = ([0.0f64; 5], [0.0f64; 5]);
        let mut note = |f: usize, err: f64, sog_step: f64, ply_step: f64| {
            bound[f] = bound[f].max(err / (sog_step + ply_step));
            sog_only[f] = sog_only[f].max(err / sog_step);
        };
        for a in 0..3 {
            // One 16-bit step of the log-transformed range, mapped back through
            // d/dv [sign(v)(e^|v| − 1)] = e^|v|.
            let v = log_transform(turned[j][a]);
            let step = (maxs[a] - mins[a]) / 65535.0 * v.abs().exp();
            let p = f64::from(g.position[a]);
            // angel.sog's colours are exactly the 256 levels of an 8-bit source, but its
            // positions sit on another chunk lattice than this compressed PLY's: both
            // were quantised from one original, by half a step of chunks that differ.
            // So the PLY side allows a whole compressed step here.
            note(0, (p - turned[j][a]).abs(), step, cply.position[j][a]);
            let s = f64::from(g.log_scale[a]);
            note(
                1,
                (s - scale[a][j]).abs(),
                sog_step_scale(scale[a][j]),
                0.5 * cply.scale[j][a],
            );
            let c = f64::from(sog.sh[i * 3 + a]);
            let colour_ply = 0.5 / (255.0 * f64::from(bevy_splat::asset::decoded::SH_C0));
            note(
                2,
                (c - dc[a][j]).abs(),
                sog_step_colour(dc[a][j]),
                colour_ply,
            );
        }
        // Alpha: a truncated byte in SOG, a rounded byte in the compressed PLY.
        let alpha = sigmoid(f64::from(g.opacity_logit));
        note(
            3,
            (alpha - sigmoid(opacity[j])).abs(),
            1.0 / 255.0,
            0.5 / 255.0,
        );
        let ours = g.rotation.map(f64::from);
        let q = turned_rot[j];
        let sign = if (0..4).map(|k| q[k] * ours[k]).sum::<f64>() < 0.0 {
            -1.0
        } else {
            1.0
        };
        let worst = (0..4)
            .map(|k| (sign * q[k] - ours[k]).abs())
            .fold(0.0, f64::max);
        note(4, worst, quat_sog, quat_ply);
        (bound, sog_only)
    };

    let cell = 0.004;
    let key = |p: [f64; 3]| p.map(|v| (v / cell).floor() as i64);
    let mut grid: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
    for (j, p) in turned.iter().enumerate() {
        grid.entry(key(*p)).or_default().push(j);
    }
    let neighbours = |p: [f64; 3]| -> Vec<(usize, f64)> {
        let k = key(p);
        let mut found = Vec::new();
        for d in 0..27i64 {
            let cell = [k[0] + d % 3 - 1, k[1] + d / 3 % 3 - 1, k[2] + d / 9 - 1];
            for &j in grid.get(&cell).into_iter().flatten() {
                let d2: f64 = (0..3).map(|a| (turned[j][a] - p[a]).powi(2)).sum();
                found.push((j, d2.sqrt()));
            }
        }
        found
    };

    let mut nearest_err: [Steps; 5] = Default::default();
    let mut best_err: [Steps; 5] = Default::default();
    let mut best_sog: [Steps; 5] = Default::default();
    let (mut distances, mut moved) = (Vec::new(), 0);
    let mut used = vec![0u32; ply.count];
    let mut transparent = 0;
    for i in 0..sog.len() {
        // Alpha byte 0: the SOG keeps splats that the PLY's source had dropped or
        // changed; they are invisible, so they are counted, not compared.
        if sog.geometry[i].opacity_logit < -13.0 {
            transparent += 1;
            continue;
        }
        let p = sog.geometry[i].position.map(f64::from);
        let found = neighbours(p);
        let &(near, d) = found
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("a PLY splat within 4 mm");
        distances.push(d);
        // Nearest by position alone can pick a neighbour when two splats sit closer
        // than the quantisation; among those within 4 mm, keep the one that agrees
        // best on every field (smallest worst error).
        let score = |j: usize| errors(i, j).0.into_iter().fold(0.0, f64::max);
        let best = found
            .iter()
            .map(|&(j, _)| j)
            .min_by(|&a, &b| score(a).total_cmp(&score(b)))
            .unwrap();
        moved += usize::from(best != near);
        used[best] += 1;
        let (near_b, _) = errors(i, near);
        let (b, s) = errors(i, best);
        for f in 0..5 {
            nearest_err[f].0.push(near_b[f]);
            best_err[f].0.push(b[f]);
            best_sog[f].0.push(s[f]);
        }
    }
    distances.sort_by(f64::total_cmp);
    let shared = used.iter().filter(|&&u| u > 1).count();
    let never = used.iter().filter(|&&u| u == 0).count();
    println!(
        "{} SOG splats ({transparent} fully transparent, not compared); nearest PLY splat at median {:.2e} m, max {:.2e} m; best-agreeing \
         candidate differs from the nearest for {moved}; PLY splats matched twice {shared}, never {never}",
        sog.len(),
        distances[distances.len() / 2],
        distances[distances.len() - 1],
    );
    println!(
        "-- nearest by position, error / bound (SOG step + ½ compressed-PLY step; position: + 1 step):"
    );
    for f in 0..5 {
        nearest_err[f].report(FIELDS[f]);
    }
    println!("-- SOG step alone, best-agreeing candidate:");
    for f in 0..5 {
        best_sog[f].report(FIELDS[f]);
    }
    println!("-- best-agreeing candidate, error / bound:");
    let worst: Vec<f64> = (0..5).map(|f| best_err[f].report(FIELDS[f])).collect();

    let within = |f: usize, limit: f64| {
        let all = &best_err[f].0;
        all.iter().filter(|&&e| e <= limit).count() as f64 / all.len() as f64
    };
    // Colour, scale and opacity agree within one SOG step plus half a PLY step for
    // every visible splat. Positions and rotations carry the other lattice's error
    // too; the shares and maxima below are the measured ones (FIXTURES.md), rounded.
    assert!(
        worst[1] <= 1.001 && worst[2] <= 1.001 && worst[3] <= 1.001,
        "{worst:?}"
    );
    assert!(within(0, 1.001) > 0.90 && worst[0] <= 8.0, "position");
    // The rebuilt largest component inherits the others' errors (up to 3× for a
    // largest component ≥ ½).
    assert!(within(4, 1.001) > 0.98 && worst[4] <= 3.0, "rotation");
    assert!(transparent <= 200, "{transparent} transparent");
    assert!(
        shared == 0 && never == transparent + 18,
        "shared {shared}, never {never}"
    );
}
