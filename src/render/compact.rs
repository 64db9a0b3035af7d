//! The compact GPU layout ([`SplatStorage::Compact`](crate::SplatStorage)): each splat
//! quantised into 32 bytes of geometry plus one byte per higher-order SH coefficient,
//! decoded by the preprocess (`passes/preprocess_compact.wgsl`).
//!
//! Geometry, eight words per splat (`CompactSplat` in WGSL):
//! - 0..3: position, f32 (a splat's place is what the eye forgives least);
//! - 3: rotation as the "smallest three": the index of the largest |component| of the
//!   unit quaternion (2 bits, that component made positive) and the other three in 10
//!   bits each over [−1/√2, 1/√2];
//! - 4, 5: the log-scales and the opacity logit as f16;
//! - 6, 7: the DC colour coefficients as f16, and the scale of the splat's own higher
//!   SH coefficients (f16, their largest magnitude).
//!
//! SH beyond DC: one signed byte per coefficient relative to the splat's scale, four
//! per word (`unpack4x8snorm`), each splat starting on a whole word. A per-splat scale
//! keeps the step fine for the many splats whose view-dependent colour is faint, and an
//! outlier splat coarsens only itself.
//!
//! A splat the GPU would cull as invalid (non-finite position, rotation of zero or
//! non-finite length, a log-scale that is NaN or +∞, any non-finite SH coefficient) is
//! encoded with a NaN position, which the preprocess culls the same way.

use half::f16;

use crate::asset::SplatGeometry;

/// 32-bit words of compact geometry per splat.
pub const COMPACT_GEOMETRY_WORDS: usize = 8;

/// Most a 10-bit field holds.
const TEN_BITS: f32 = 1023.0;

/// Words of compact SH per splat for `sh_stride` floats (the three DC floats live in
/// the geometry).
pub fn compact_sh_words(sh_stride: usize) -> usize {
    sh_stride.saturating_sub(3).div_ceil(4)
}

/// The compact geometry and SH words of `geometry` with `sh_stride` SH floats each.
pub fn encode_compact(
    geometry: &[SplatGeometry],
    sh: &[f32],
    sh_stride: usize,
) -> (Vec<u32>, Vec<u32>) {
    let sh_words = compact_sh_words(sh_stride);
    let mut packed_geometry = Vec::with_capacity(geometry.len() * COMPACT_GEOMETRY_WORDS);
    let mut packed_sh = Vec::with_capacity(geometry.len() * sh_words);
    for (index, splat) in geometry.iter().enumerate() {
        let coefficients = &sh[index * sh_stride..(index + 1) * sh_stride];
        let words = encode_splat(splat, coefficients);
        packed_geometry.extend_from_slice(&words.geometry);
        packed_sh.extend(pack_rest(coefficients, words.rest_scale, sh_words));
    }
    (packed_geometry, packed_sh)
}

struct EncodedSplat {
    geometry: [u32; COMPACT_GEOMETRY_WORDS],
    rest_scale: f32,
}

fn half_bits(value: f32) -> u32 {
    u32::from(f16::from_f32(value).to_bits())
}

fn halves(low: f32, high: f32) -> u32 {
    half_bits(low) | (half_bits(high) << 16)
}

/// A log-scale the GPU draws: finite, or −∞ (a scale of zero).
fn drawable_log_scale(value: f32) -> bool {
    value.is_finite() || value == f32::NEG_INFINITY
}

fn encode_splat(splat: &SplatGeometry, coefficients: &[f32]) -> EncodedSplat {
    let rotation = smallest_three(splat.rotation);
    let valid = splat.position.iter().all(|v| v.is_finite())
        && splat.log_scale.iter().all(|&v| drawable_log_scale(v))
        && coefficients.iter().all(|v| v.is_finite())
        && rotation.is_some();
    let position = if valid { splat.position } else { [f32::NAN; 3] };
    let rest = coefficients.get(3..).unwrap_or(&[]);
    let largest = rest.iter().fold(0.0_f32, |m, v| m.max(v.abs()));
    // The scale the GPU reads back, so that quantising uses exactly it; never so small
    // that f16 flushes it to zero while coefficients remain.
    let rest_scale = f16::from_f32(largest.min(f16::MAX.to_f32()))
        .to_f32()
        .max(if largest > 0.0 {
            f16::MIN_POSITIVE_SUBNORMAL.to_f32()
        } else {
            0.0
        });
    let dc = |channel: usize| coefficients.get(channel).copied().unwrap_or(0.0);
    let [sx, sy, sz] = splat.log_scale;
    EncodedSplat {
        geometry: [
            position[0].to_bits(),
            position[1].to_bits(),
            position[2].to_bits(),
            rotation.unwrap_or(0),
            halves(sx, sy),
            halves(sz, splat.opacity_logit),
            halves(dc(0), dc(1)),
            halves(dc(2), rest_scale),
        ],
        rest_scale,
    }
}

/// The unit quaternion (w, x, y, z) of `rotation` as 2 + 3 × 10 bits, or `None` where
/// it has no direction (zero or non-finite length).
fn smallest_three(rotation: [f32; 4]) -> Option<u32> {
    let q = rotation.map(f64::from);
    let norm = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    if !(norm > 0.0 && norm.is_finite()) {
        return None;
    }
    let mut largest = 0;
    for i in 1..4 {
        if q[i].abs() > q[largest].abs() {
            largest = i;
        }
    }
    // q and −q are the same rotation: make the dropped component positive.
    let sign = if q[largest] < 0.0 { -1.0 } else { 1.0 };
    let mut word = largest as u32;
    let mut shift = 2;
    for (i, component) in q.iter().enumerate() {
        if i == largest {
            continue;
        }
        let unit = (sign * component / norm) * std::f64::consts::SQRT_2;
        let level = (((unit + 1.0) * 0.5) as f32 * TEN_BITS)
            .round()
            .clamp(0.0, TEN_BITS);
        word |= (level as u32) << shift;
        shift += 10;
    }
    Some(word)
}

/// The SH coefficients past DC as signed bytes of `scale`, four per word.
fn pack_rest(coefficients: &[f32], scale: f32, words: usize) -> impl Iterator<Item = u32> {
    let rest = coefficients.get(3..).unwrap_or(&[]);
    (0..words).map(move |w| {
        (0..4).fold(0u32, |word, byte| {
            let value = rest.get(4 * w + byte).copied().unwrap_or(0.0);
            let level = if scale > 0.0 && value.is_finite() {
                (value / scale * 127.0).round().clamp(-127.0, 127.0) as i8
            } else {
                0
            };
            word | (u32::from(level as u8) << (8 * byte))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // The decoders below follow `preprocess_compact.wgsl`.
    fn decode_rotation(word: u32) -> [f32; 4] {
        let largest = (word & 3) as usize;
        let mut q = [0.0_f32; 4];
        let mut shift = 2;
        let mut sum = 0.0;
        for (i, slot) in q.iter_mut().enumerate() {
            if i == largest {
                continue;
            }
            let level = ((word >> shift) & 1023) as f32;
            *slot = (level / TEN_BITS * 2.0 - 1.0) * std::f32::consts::FRAC_1_SQRT_2;
            sum += *slot * *slot;
            shift += 10;
        }
        q[largest] = (1.0 - sum).max(0.0).sqrt();
        q
    }

    fn decode_half(word: u32, high: bool) -> f32 {
        f16::from_bits((if high { word >> 16 } else { word }) as u16).to_f32()
    }

    fn decode_rest(words: &[u32], scale: f32, count: usize) -> Vec<f32> {
        (0..count)
            .map(|i| {
                let byte = (words[i / 4] >> (8 * (i % 4))) as u8 as i8;
                (f32::from(byte) / 127.0).max(-1.0) * scale
            })
            .collect()
    }

    fn splat(rotation: [f32; 4]) -> SplatGeometry {
        SplatGeometry {
            position: [1.5, -2.25, 3.0],
            opacity_logit: 0.75,
            rotation,
            log_scale: [-4.0, -3.5, f32::NEG_INFINITY],
            _pad: 0.0,
        }
    }

    #[test]
    fn rotations_come_back_within_a_thousandth() {
        let rotations = [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, -2.0],
            [0.3, -0.5, 0.7, 0.1],
            [-0.9, 0.2, 0.1, -0.3],
            [0.5, 0.5, 0.5, 0.5],
        ];
        for rotation in rotations {
            let word = smallest_three(rotation).expect("a rotation with a direction");
            let back = decode_rotation(word);
            let norm = rotation.iter().map(|v| v * v).sum::<f32>().sqrt();
            let unit = rotation.map(|v| v / norm);
            // q and −q agree: compare |⟨q, q'⟩| with 1.
            let dot: f32 = unit.iter().zip(back).map(|(a, b)| a * b).sum();
            assert!((dot.abs() - 1.0).abs() < 1e-5, "{rotation:?} → {back:?}");
            for (a, b) in unit.iter().zip(back) {
                assert!(
                    (a.abs() - b.abs()).abs() < 1.5e-3,
                    "{rotation:?} → {back:?}"
                );
            }
        }
    }

    #[test]
    fn compact_words_decode_to_the_splat() {
        let coefficients: Vec<f32> = (0..48).map(|i| (i as f32 - 20.0) * 0.01).collect();
        let (geometry, sh) = encode_compact(&[splat([0.3, -0.5, 0.7, 0.1])], &coefficients, 48);
        assert_eq!(geometry.len(), COMPACT_GEOMETRY_WORDS);
        assert_eq!(sh.len(), 12);
        assert_eq!(f32::from_bits(geometry[0]), 1.5);
        assert_eq!(f32::from_bits(geometry[2]), 3.0);
        assert_eq!(decode_half(geometry[4], false), -4.0);
        assert_eq!(decode_half(geometry[5], false), f32::NEG_INFINITY);
        assert_eq!(decode_half(geometry[5], true), 0.75);
        assert!((decode_half(geometry[6], false) - coefficients[0]).abs() < 1e-4);
        let scale = decode_half(geometry[7], true);
        assert!((scale - 0.27).abs() < 1e-3, "{scale}");
        for (a, b) in decode_rest(&sh, scale, 45).iter().zip(&coefficients[3..]) {
            assert!((a - b).abs() <= scale / 254.0 + 1e-6, "{a} against {b}");
        }
    }

    #[test]
    fn invalid_splats_get_a_position_the_gpu_culls() {
        let zero_rotation = splat([0.0; 4]);
        let mut nan_scale = splat([1.0, 0.0, 0.0, 0.0]);
        nan_scale.log_scale[1] = f32::NAN;
        let mut far = splat([1.0, 0.0, 0.0, 0.0]);
        far.position[0] = f32::INFINITY;
        for bad in [zero_rotation, nan_scale, far] {
            let (geometry, _) = encode_compact(&[bad], &[0.1, 0.2, 0.3], 3);
            assert!(f32::from_bits(geometry[0]).is_nan());
        }
        let (geometry, _) =
            encode_compact(&[splat([1.0, 0.0, 0.0, 0.0])], &[0.1, f32::NAN, 0.3], 3);
        assert!(f32::from_bits(geometry[0]).is_nan());
    }

    #[test]
    fn degree_zero_has_no_sh_words_and_a_zero_scale() {
        let (geometry, sh) = encode_compact(&[splat([1.0, 0.0, 0.0, 0.0])], &[0.1, 0.2, 0.3], 3);
        assert!(sh.is_empty());
        assert_eq!(decode_half(geometry[7], true), 0.0);
        assert_eq!(compact_sh_words(12), 3);
        assert_eq!(compact_sh_words(27), 6);
    }
}
