//! PlayCanvas compressed PLY: the real angel file against the same scan decoded to an
//! Inria PLY by another tool, and synthetic files (colour bounds, SH bytes, big-endian)
//! packed here by an encoder written from the format's description.

use bevy_splat::asset::SplatGeometry;
use bevy_splat::asset::formats::ply::{PlyError, decode};

use super::{data, load};

const SH_C0: f32 = 0.282_094_8;

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

fn unit(q: [f32; 4]) -> [f32; 4] {
    let n = q.iter().map(|v| v * v).sum::<f32>().sqrt();
    q.map(|v| v / n)
}

/// 1 − |q·q'|: 0 for the same rotation, whatever the sign.
fn rotation_gap(a: [f32; 4], b: [f32; 4]) -> f32 {
    let (a, b) = (unit(a), unit(b));
    1.0 - a.iter().zip(&b).map(|(x, y)| x * y).sum::<f32>().abs()
}

#[test]
fn the_angel_matches_its_inria_decoding_within_one_step() {
    let packed = load("formats/angel.compressed.ply");
    let plain = load("angel_sh0.ply");
    assert_eq!(packed.len(), 71_377);
    assert_eq!(packed.len(), plain.len());
    assert_eq!(packed.sh_degree, 0);
    assert_eq!(packed.non_finite, 0);
    // Steps are per 256-splat chunk: its extent over 2047 (or 1023 for y) levels.
    let mut worst = [0.0f32; 5];
    for (chunk, (ours, theirs)) in packed
        .geometry
        .chunks(256)
        .zip(plain.geometry.chunks(256))
        .enumerate()
    {
        let extent = |f: &dyn Fn(&SplatGeometry) -> f32| {
            let (lo, hi) = theirs
                .iter()
                .map(f)
                .fold((f32::MAX, f32::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
            hi - lo
        };
        let levels = [2047.0, 1023.0, 2047.0];
        for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
            for (axis, levels) in levels.iter().enumerate() {
                let step = extent(&|g| g.position[axis]) / levels + 1e-6;
                let err = (a.position[axis] - b.position[axis]).abs() / step;
                worst[0] = worst[0].max(err);
                assert!(
                    err <= 1.0,
                    "chunk {chunk} splat {i} position {axis}: {err} steps"
                );
                let step = extent(&|g| g.log_scale[axis]) / levels + 1e-5;
                let err = (a.log_scale[axis] - b.log_scale[axis]).abs() / step;
                worst[1] = worst[1].max(err);
                assert!(
                    err <= 1.0,
                    "chunk {chunk} splat {i} scale {axis}: {err} steps"
                );
            }
            let alpha = (sigmoid(a.opacity_logit) - sigmoid(b.opacity_logit)).abs() * 255.0;
            worst[2] = worst[2].max(alpha);
            assert!(alpha <= 1.0, "chunk {chunk} splat {i}: alpha {alpha} steps");
            // 10 bits over ±√½ per component.
            let gap = rotation_gap(a.rotation, b.rotation);
            worst[3] = worst[3].max(gap);
            assert!(gap < 2e-5, "chunk {chunk} splat {i}: rotation gap {gap}");
        }
    }
    for (a, b) in packed.sh.iter().zip(&plain.sh) {
        let err = (a - b).abs() * SH_C0 * 255.0;
        worst[4] = worst[4].max(err);
        assert!(err <= 1.0, "colour {err} steps");
    }
    println!(
        "worst error in steps: position {:.3}, log-scale {:.3}, alpha {:.3}, \
         rotation 1-|q.q'| {:.2e}, colour {:.3}",
        worst[0], worst[1], worst[2], worst[3], worst[4]
    );
}

/// The bits of `t` in 0..=1 as an unsigned `bits`-bit integer, as the encoder rounds.
fn quantise(t: f32, bits: u32) -> u32 {
    let max = ((1u32 << bits) - 1) as f32;
    (t.clamp(0.0, 1.0) * max + 0.5) as u32
}

struct Synthetic {
    positions: Vec<[f32; 3]>,
    colour_bounds: bool,
    sh_degree: u8,
    big_endian: bool,
}

/// A compressed PLY of `s.positions` (two chunks when more than 256), each splat's
/// other fields a function of its index, SH bytes counting up.
fn write_compressed(s: &Synthetic) -> Vec<u8> {
    let n = s.positions.len();
    let chunks = n.div_ceil(256);
    let rest = match s.sh_degree {
        0 => 0,
        1 => 9,
        2 => 24,
        _ => 45,
    };
    let mut header = format!(
        "ply\nformat {} 1.0\ncomment synthetic\nelement chunk {chunks}\n",
        if s.big_endian {
            "binary_big_endian"
        } else {
            "binary_little_endian"
        }
    );
    let mut chunk_props: Vec<&str> = vec![
        "min_x",
        "min_y",
        "min_z",
        "max_x",
        "max_y",
        "max_z",
        "min_scale_x",
        "min_scale_y",
        "min_scale_z",
        "max_scale_x",
        "max_scale_y",
        "max_scale_z",
    ];
    if s.colour_bounds {
        chunk_props.extend(["min_r", "min_g", "min_b", "max_r", "max_g", "max_b"]);
    }
    for p in &chunk_props {
        header += &format!("property float {p}\n");
    }
    header += &format!("element vertex {n}\n");
    for p in [
        "packed_position",
        "packed_rotation",
        "packed_scale",
        "packed_color",
    ] {
        header += &format!("property uint {p}\n");
    }
    if rest > 0 {
        header += &format!("element sh {n}\n");
        for j in 0..rest {
            header += &format!("property uchar f_rest_{j}\n");
        }
    }
    header += "end_header\n";
    let mut out = header.into_bytes();
    let f32s = |out: &mut Vec<u8>, v: f32| {
        out.extend(if s.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        })
    };
    for c in 0..chunks {
        let members = &s.positions[c * 256..((c + 1) * 256).min(n)];
        let lo = [0, 1, 2].map(|a| members.iter().map(|p| p[a]).fold(f32::MAX, f32::min));
        let hi = [0, 1, 2].map(|a| members.iter().map(|p| p[a]).fold(f32::MIN, f32::max));
        for v in lo.iter().chain(&hi) {
            f32s(&mut out, *v);
        }
        for v in [-6.0, -5.0, -4.0, -1.0, -2.0, 0.0] {
            f32s(&mut out, v);
        }
        if s.colour_bounds {
            for v in [0.1, 0.2, -0.5, 0.9, 1.0, 1.5] {
                f32s(&mut out, v);
            }
        }
    }
    let u32s = |out: &mut Vec<u8>, v: u32| {
        out.extend(if s.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        })
    };
    for (i, p) in s.positions.iter().enumerate() {
        let c = i / 256;
        let members = &s.positions[c * 256..((c + 1) * 256).min(n)];
        let t = [0, 1, 2].map(|a| {
            let lo = members.iter().map(|p| p[a]).fold(f32::MAX, f32::min);
            let hi = members.iter().map(|p| p[a]).fold(f32::MIN, f32::max);
            if hi > lo {
                (p[a] - lo) / (hi - lo)
            } else {
                0.0
            }
        });
        let position = quantise(t[0], 11) << 21 | quantise(t[1], 10) << 11 | quantise(t[2], 11);
        let largest = (i % 4) as u32;
        let rotation = largest << 30 | (400 + i as u32 % 200) << 20 | 300 << 10 | 700;
        let scale = (i as u32 % 2048) << 21 | 512 << 11 | 2047;
        let colour = (i as u32 % 256) << 24 | 128 << 16 | 255 << 8 | (255 - i as u32 % 256);
        for word in [position, rotation, scale, colour] {
            u32s(&mut out, word);
        }
    }
    for i in 0..n {
        for j in 0..rest {
            out.push(((i + j) % 256) as u8);
        }
    }
    out
}

fn sh_value(byte: usize) -> f32 {
    let t = match byte {
        0 => 0.0,
        255 => 1.0,
        n => (n as f32 + 0.5) / 256.0,
    };
    (t - 0.5) * 8.0
}

#[test]
fn synthetic_files_decode_as_packed() {
    let positions: Vec<[f32; 3]> = (0..300)
        .map(|i| {
            let t = i as f32;
            [t.sin() * 3.0, (t * 0.37).cos(), t * 0.01 - 1.0]
        })
        .collect();
    for (colour_bounds, sh_degree, big_endian) in [
        (false, 0, false),
        (true, 3, false),
        (true, 1, true),
        (false, 2, true),
    ] {
        let s = Synthetic {
            positions: positions.clone(),
            colour_bounds,
            sh_degree,
            big_endian,
        };
        let what =
            format!("colour bounds {colour_bounds}, SH {sh_degree}, big-endian {big_endian}");
        let d = decode(&write_compressed(&s)).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(d.len(), 300, "{what}");
        assert_eq!(d.sh_degree, sh_degree, "{what}");
        let stride = d.sh_stride();
        let rest = stride / 3 - 1;
        for (i, g) in d.geometry.iter().enumerate() {
            for a in 0..3 {
                let members = &positions[i / 256 * 256..((i / 256 + 1) * 256).min(300)];
                let lo = members.iter().map(|p| p[a]).fold(f32::MAX, f32::min);
                let hi = members.iter().map(|p| p[a]).fold(f32::MIN, f32::max);
                let levels = if a == 1 { 1023.0 } else { 2047.0 };
                let step = (hi - lo) / levels;
                assert!(
                    (g.position[a] - positions[i][a]).abs() <= 0.5 * step + 1e-6,
                    "{what}"
                );
            }
            // Scale: x runs over the chunk's −6..−1 range, y is 512/1023 of −5..−2, z = 0.
            let tx = (i % 2048) as f32 / 2047.0;
            assert!((g.log_scale[0] - (-6.0 + 5.0 * tx)).abs() < 1e-5, "{what}");
            assert!((g.log_scale[1] - (-5.0 + 3.0 * 512.0 / 1023.0)).abs() < 1e-5);
            assert!((g.log_scale[2] - 0.0).abs() < 1e-6);
            // The largest rotation component sits where the index says.
            let largest = i % 4;
            let q = g.rotation;
            let biggest = (0..4).max_by(|&a, &b| q[a].abs().total_cmp(&q[b].abs()));
            assert_eq!(biggest, Some(largest), "{what}: splat {i} {q:?}");
            assert!((q.iter().map(|v| v * v).sum::<f32>() - 1.0).abs() < 1e-5);
            // Colour and opacity.
            let r = (i % 256) as f32 / 255.0;
            let (r, g_, b) = if colour_bounds {
                (0.1 + 0.8 * r, 0.2 + 0.8 * 128.0 / 255.0, -0.5 + 2.0)
            } else {
                (r, 128.0 / 255.0, 1.0)
            };
            let dc = &d.sh[i * stride..i * stride + 3];
            for (got, want) in dc.iter().zip([r, g_, b]) {
                assert!(
                    (got * SH_C0 + 0.5 - want).abs() < 1e-5,
                    "{what}: {got} vs {want}"
                );
            }
            let alpha = (255 - i % 256) as f32 / 255.0;
            let want = alpha.clamp(1e-6, 1.0 - 1e-6);
            assert!((sigmoid(g.opacity_logit) - want).abs() < 1e-5, "{what}");
            assert!(g.opacity_logit.is_finite());
            // Rest coefficients: f_rest_j channel-major, stored coefficient-major.
            for j in 0..3 * rest {
                let (channel, k) = (j / rest, 1 + j % rest);
                assert_eq!(d.sh[i * stride + 3 * k + channel], sh_value((i + j) % 256));
            }
        }
    }
}

#[test]
fn malformed_compressed_files_name_their_problem() {
    let positions: Vec<[f32; 3]> = (0..10).map(|i| [i as f32, 0.0, 1.0]).collect();
    let s = Synthetic {
        positions,
        colour_bounds: false,
        sh_degree: 1,
        big_endian: false,
    };
    let good = write_compressed(&s);
    let text_end = good.windows(11).position(|w| w == b"end_header\n").unwrap() + 11;
    let edits = |pairs: &[(&str, &str)]| {
        let mut header = String::from_utf8(good[..text_end].to_vec()).unwrap();
        for (from, to) in pairs {
            header = header.replacen(from, to, 1);
        }
        let mut out = header.into_bytes();
        out.extend_from_slice(&good[text_end..]);
        out
    };
    let edit = |from: &str, to: &str| edits(&[(from, to)]);
    assert_eq!(
        decode(&edit("element chunk 1", "element chunk 2")),
        Err(PlyError::CompressedChunkCount {
            chunks: 2,
            vertices: 10,
            expected: 1
        })
    );
    assert_eq!(
        decode(&edit(
            "property uint packed_scale",
            "property float packed_scale"
        )),
        Err(PlyError::CompressedType {
            property: "vertex.packed_scale".into(),
            expected: "uint",
            found: "float"
        })
    );
    assert_eq!(
        decode(&edit("property float max_scale_z\n", "")),
        Err(PlyError::MissingProperty("chunk.max_scale_z".into()))
    );
    assert_eq!(
        decode(&edit("element sh 10", "element sh 9")),
        Err(PlyError::CompressedShCount {
            sh: 9,
            vertices: 10
        })
    );
    assert_eq!(
        decode(&edit("binary_little_endian", "ascii")),
        Err(PlyError::CompressedAscii)
    );
    let huge = decode(&edit("element vertex 10", "element vertex 4000000000"));
    assert!(
        matches!(huge, Err(PlyError::CompressedShCount { .. })),
        "{huge:?}"
    );
    let huge = decode(&edits(&[
        ("element chunk 1", "element chunk 15625000"),
        ("element vertex 10", "element vertex 4000000000"),
        ("element sh 10", "element sh 4000000000"),
    ]));
    assert!(
        matches!(huge, Err(PlyError::TooManyVertices { .. })),
        "{huge:?}"
    );
    // Every cut of the body is an error, never a panic.
    for cut in (text_end..good.len()).step_by(7) {
        assert!(
            matches!(decode(&good[..cut]), Err(PlyError::Truncated { .. })),
            "cut at {cut}: {:?}",
            decode(&good[..cut]).map(|d| d.len())
        );
    }
    // The real file, cut anywhere, too.
    let real = data("formats/angel.compressed.ply");
    for cut in (0..real.len()).step_by(real.len() / 97) {
        assert!(decode(&real[..cut]).is_err(), "cut at {cut}");
    }
}
