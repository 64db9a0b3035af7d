//! The property encodings of a `.rad` chunk, both ways. Every encoding but `oct88r8`
//! is planar: a property of `dims` components over `n` splats stores component `d` of
//! splat `i` at element `d·n + i`. Quantised encodings carry their range in the
//! property's `min`/`max`.

use half::f16;

/// How one property's values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    F32,
    F16,
    /// f32 split into byte planes (all lowest bytes first): lossless, deflates better.
    F32LeBytes,
    F16LeBytes,
    /// `u8` over `min..=max`.
    R8,
    /// `R8`, each stored as its difference from the previous splat's (wrapping, per
    /// component, from 0 at the chunk's start).
    R8Delta,
    /// `i8` over `-max..=max` (±127).
    S8,
    S8Delta,
    /// A linear scale as `u8`: 0 for zero (or `ln ≤ -30`), else `1 + ln` over
    /// `min..=max` in 254 steps.
    Ln0R8,
    /// A linear scale's logarithm as f16.
    LnF16,
    /// A quaternion as an octahedral axis (two bytes) and an angle (one), 3 bytes a
    /// splat, interleaved.
    Oct88R8,
    U16,
    U32,
}

impl Encoding {
    /// The encoding a file names, if this reader knows it.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "f32" => Self::F32,
            "f16" => Self::F16,
            "f32_lebytes" => Self::F32LeBytes,
            "f16_lebytes" => Self::F16LeBytes,
            "r8" => Self::R8,
            "r8_delta" => Self::R8Delta,
            "s8" => Self::S8,
            "s8_delta" => Self::S8Delta,
            "ln_0r8" => Self::Ln0R8,
            "ln_f16" => Self::LnF16,
            "oct88r8" => Self::Oct88R8,
            "u16" => Self::U16,
            "u32" => Self::U32,
            _ => return None,
        })
    }

    /// Its name in a file.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F16 => "f16",
            Self::F32LeBytes => "f32_lebytes",
            Self::F16LeBytes => "f16_lebytes",
            Self::R8 => "r8",
            Self::R8Delta => "r8_delta",
            Self::S8 => "s8",
            Self::S8Delta => "s8_delta",
            Self::Ln0R8 => "ln_0r8",
            Self::LnF16 => "ln_f16",
            Self::Oct88R8 => "oct88r8",
            Self::U16 => "u16",
            Self::U32 => "u32",
        }
    }

    /// Bytes per component of one splat.
    pub fn bytes_per_value(self) -> u64 {
        match self {
            Self::F32 | Self::F32LeBytes | Self::U32 => 4,
            Self::F16 | Self::F16LeBytes | Self::LnF16 | Self::U16 => 2,
            _ => 1,
        }
    }

    /// Whether the values are quantised over a `min` (`max` is needed by all of them).
    pub fn needs_min(self) -> bool {
        matches!(self, Self::R8 | Self::R8Delta | Self::Ln0R8)
    }

    /// Whether the values are quantised over a range.
    pub fn needs_max(self) -> bool {
        self.needs_min() || matches!(self, Self::S8 | Self::S8Delta)
    }
}

/// The code `Ln0R8` stores for zero; its logarithm stands for any `ln ≤ ZERO_LN`.
pub const ZERO_LN: f32 = -30.0;

/// `data` (exactly `n · dims · bytes_per_value` bytes) as f32 values, planar. For the
/// scale encodings the values are linear scales. `Oct88R8` and the integer encodings
/// are not float encodings: see [`decode_quaternions`], [`decode_u32`].
pub fn decode_floats(
    encoding: Encoding,
    data: &[u8],
    n: usize,
    dims: usize,
    min: f32,
    max: f32,
) -> Vec<f32> {
    let len = n * dims;
    match encoding {
        Encoding::F32 => data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Encoding::F16 => data.chunks_exact(2).map(half_at).collect(),
        Encoding::LnF16 => data.chunks_exact(2).map(|b| half_at(b).exp()).collect(),
        Encoding::F32LeBytes => (0..len)
            .map(|e| f32::from_le_bytes(std::array::from_fn(|b| data[b * len + e])))
            .collect(),
        Encoding::F16LeBytes => (0..len)
            .map(|e| f16::from_le_bytes([data[e], data[len + e]]).to_f32())
            .collect(),
        Encoding::R8 => data.iter().map(|&q| unorm(q, min, max)).collect(),
        Encoding::R8Delta => undelta(data, n)
            .into_iter()
            .map(|q| unorm(q, min, max))
            .collect(),
        Encoding::S8 => data.iter().map(|&q| snorm(q, max)).collect(),
        Encoding::S8Delta => undelta(data, n)
            .into_iter()
            .map(|q| snorm(q, max))
            .collect(),
        Encoding::Ln0R8 => {
            let step = (max - min) / 254.0;
            data.iter()
                .map(|&q| match q {
                    0 => 0.0,
                    q => (min + f32::from(q - 1) * step).exp(),
                })
                .collect()
        }
        Encoding::Oct88R8 | Encoding::U16 | Encoding::U32 => vec![0.0; len],
    }
}

/// Unsigned integers (`U16` or `U32`), one component.
pub fn decode_u32(encoding: Encoding, data: &[u8]) -> Vec<u32> {
    match encoding {
        Encoding::U16 => data
            .chunks_exact(2)
            .map(|b| u32::from(u16::from_le_bytes([b[0], b[1]])))
            .collect(),
        _ => data
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    }
}

/// `Oct88R8` quaternions, `[x, y, z, w]` with `w ≥ 0`.
pub fn decode_quaternions(data: &[u8]) -> Vec<[f32; 4]> {
    data.chunks_exact(3)
        .map(|b| {
            let x = f32::from(b[0]) / 255.0 * 2.0 - 1.0;
            let y = f32::from(b[1]) / 255.0 * 2.0 - 1.0;
            let z = 1.0 - x.abs() - y.abs();
            // The octahedron's lower half is folded over its upper.
            let t = (-z).max(0.0);
            let x = if x >= 0.0 { x - t } else { x + t };
            let y = if y >= 0.0 { y - t } else { y + t };
            let length = (x * x + y * y + z * z).sqrt();
            let half = f32::from(b[2]) / 255.0 * std::f32::consts::FRAC_PI_2;
            let s = half.sin() / length;
            [x * s, y * s, z * s, half.cos()]
        })
        .collect()
}

fn half_at(b: &[u8]) -> f32 {
    f16::from_le_bytes([b[0], b[1]]).to_f32()
}

fn unorm(q: u8, min: f32, max: f32) -> f32 {
    f32::from(q) / 255.0 * (max - min) + min
}

fn snorm(q: u8, max: f32) -> f32 {
    f32::from(q as i8) / 127.0 * max
}

/// Planar deltas back to values: per component, a running wrapping sum.
fn undelta(data: &[u8], n: usize) -> Vec<u8> {
    let mut out = data.to_vec();
    for component in out.chunks_mut(n.max(1)) {
        let mut previous = 0u8;
        for value in component {
            previous = previous.wrapping_add(*value);
            *value = previous;
        }
    }
    out
}

/// Planar values as `encoding`'s bytes (the writer's side; quantised encodings clamp
/// to their range).
pub fn encode_floats(encoding: Encoding, values: &[f32], n: usize, min: f32, max: f32) -> Vec<u8> {
    let len = values.len();
    match encoding {
        Encoding::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        Encoding::F16 => values
            .iter()
            .flat_map(|&v| f16::from_f32(v).to_le_bytes())
            .collect(),
        Encoding::LnF16 => values
            .iter()
            .flat_map(|&v| f16::from_f32(v.ln()).to_le_bytes())
            .collect(),
        Encoding::F32LeBytes => (0..4)
            .flat_map(|b| values.iter().map(move |v| v.to_le_bytes()[b]))
            .collect(),
        Encoding::F16LeBytes => (0..2)
            .flat_map(|b| {
                values
                    .iter()
                    .map(move |&v| f16::from_f32(v).to_le_bytes()[b])
            })
            .collect(),
        Encoding::R8 | Encoding::R8Delta => {
            let codes: Vec<u8> = values
                .iter()
                .map(|&v| quantise((v - min) / (max - min) * 255.0, 0.0, 255.0) as u8)
                .collect();
            delta_if(encoding == Encoding::R8Delta, codes, n)
        }
        Encoding::S8 | Encoding::S8Delta => {
            let codes: Vec<u8> = values
                .iter()
                .map(|&v| quantise(v / max * 127.0, -127.0, 127.0) as i8 as u8)
                .collect();
            delta_if(encoding == Encoding::S8Delta, codes, n)
        }
        Encoding::Ln0R8 => values
            .iter()
            .map(|&v| {
                let ln = v.ln();
                if v <= 0.0 || ln <= ZERO_LN {
                    0
                } else {
                    1 + quantise((ln - min) / (max - min) * 254.0, 0.0, 254.0) as u8
                }
            })
            .collect(),
        Encoding::U16 | Encoding::U32 | Encoding::Oct88R8 => vec![0; len],
    }
}

/// Integers as `U16` (values above 65,535 saturate; the writer checks first) or `U32`.
pub fn encode_u32(encoding: Encoding, values: &[u32]) -> Vec<u8> {
    match encoding {
        Encoding::U16 => values
            .iter()
            .flat_map(|&v| u16::try_from(v).unwrap_or(u16::MAX).to_le_bytes())
            .collect(),
        _ => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

/// `[x, y, z, w]` quaternions (any length, any sign) as `Oct88R8`.
pub fn encode_quaternions(quaternions: &[[f32; 4]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(quaternions.len() * 3);
    for q in quaternions {
        let length = q.iter().map(|v| v * v).sum::<f32>().sqrt();
        let [x, y, z, w] = if length > 0.0 && length.is_finite() {
            let sign = if q[3] < 0.0 { -1.0 } else { 1.0 };
            q.map(|v| v * sign / length)
        } else {
            [0.0, 0.0, 0.0, 1.0]
        };
        let angle = 2.0 * w.clamp(0.0, 1.0).acos();
        let s = (angle / 2.0).sin();
        let axis = if s.abs() < 1e-6 {
            [1.0, 0.0, 0.0]
        } else {
            [x / s, y / s, z / s]
        };
        let norm = axis[0].abs() + axis[1].abs() + axis[2].abs();
        let (mut u, mut v) = (axis[0] / norm, axis[1] / norm);
        if axis[2] < 0.0 {
            let sign = |a: f32| if a >= 0.0 { 1.0 } else { -1.0 };
            (u, v) = ((1.0 - v.abs()) * sign(u), (1.0 - u.abs()) * sign(v));
        }
        out.push(quantise((u + 1.0) / 2.0 * 255.0, 0.0, 255.0) as u8);
        out.push(quantise((v + 1.0) / 2.0 * 255.0, 0.0, 255.0) as u8);
        out.push(quantise(angle / std::f32::consts::PI * 255.0, 0.0, 255.0) as u8);
    }
    out
}

/// Rounds into `lo..=hi`; NaN lands on `lo`.
fn quantise(v: f32, lo: f32, hi: f32) -> f32 {
    if v.is_nan() {
        lo
    } else {
        v.clamp(lo, hi).round()
    }
}

fn delta_if(delta: bool, mut codes: Vec<u8>, n: usize) -> Vec<u8> {
    if delta {
        for component in codes.chunks_mut(n.max(1)) {
            let mut previous = 0u8;
            for code in component {
                let value = *code;
                *code = value.wrapping_sub(previous);
                previous = value;
            }
        }
    }
    codes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_float_encoding_round_trips_within_its_step() {
        let n = 5;
        let values = [0.0f32, 0.25, 0.5, 0.75, 1.0, -0.5, 0.1, 0.9, 0.3, 0.6];
        for (encoding, step) in [
            (Encoding::F32, 0.0),
            (Encoding::F32LeBytes, 0.0),
            (Encoding::F16, 1e-3),
            (Encoding::F16LeBytes, 1e-3),
            (Encoding::R8, 1.5 / 255.0),
            (Encoding::R8Delta, 1.5 / 255.0),
            (Encoding::S8, 1.0 / 127.0),
            (Encoding::S8Delta, 1.0 / 127.0),
        ] {
            let bytes = encode_floats(encoding, &values, n, -0.5, 1.0);
            assert_eq!(
                bytes.len() as u64,
                values.len() as u64 * encoding.bytes_per_value()
            );
            let back = decode_floats(encoding, &bytes, n, 2, -0.5, 1.0);
            for (a, b) in values.iter().zip(&back) {
                assert!((a - b).abs() <= step, "{encoding:?}: {a} came back as {b}");
            }
        }
    }

    #[test]
    fn log_scales_keep_zero_and_their_step() {
        let scales = [0.0f32, 1e-20, 0.001, 0.5, 3.0];
        let bytes = encode_floats(Encoding::Ln0R8, &scales, 5, -12.0, 9.0);
        assert_eq!(&bytes[..2], &[0, 0]);
        let back = decode_floats(Encoding::Ln0R8, &bytes, 5, 1, -12.0, 9.0);
        for (a, b) in scales[2..].iter().zip(&back[2..]) {
            assert!(
                (a.ln() - b.ln()).abs() <= 21.0 / 254.0 / 2.0 + 1e-5,
                "{a} -> {b}"
            );
        }
        let bytes = encode_floats(Encoding::LnF16, &scales[2..], 3, 0.0, 0.0);
        let back = decode_floats(Encoding::LnF16, &bytes, 3, 1, 0.0, 0.0);
        for (a, b) in scales[2..].iter().zip(&back) {
            assert!((a / b - 1.0).abs() < 2e-3, "{a} -> {b}");
        }
    }

    #[test]
    fn octahedral_quaternions_round_trip_to_the_same_rotation() {
        let quaternions = [
            [0.0, 0.0, 0.0, 1.0],
            [0.3, -0.5, 0.1, -0.8],
            [-0.6, 0.2, -0.7, 0.3],
            [0.0, 0.0, -1.0, 0.0],
        ];
        let back = decode_quaternions(&encode_quaternions(&quaternions));
        for (q, r) in quaternions.iter().zip(&back) {
            let length = q.iter().map(|v| v * v).sum::<f32>().sqrt();
            // q and -q are one rotation: compare |q·r|.
            let dot: f32 = q.iter().zip(r).map(|(a, b)| a * b / length).sum();
            assert!(dot.abs() > 0.995, "{q:?} -> {r:?}");
            // w = cos of at most π/2: never below zero but for rounding.
            assert!(r[3] >= -1e-6);
        }
    }
}
