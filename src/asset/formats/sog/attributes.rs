//! Texel bytes to splat values: the inverse of splat-transform's encoders.
//!
//! Every 8-bit channel of both versions is either a codebook index (v2) or a linear
//! step between a minimum and a maximum (v1), so each becomes a 256-entry table once
//! per scene and a splat costs table look-ups only.

use super::meta::{Codebook, ColourCoding, ScaleCoding, ShCoding};
use crate::asset::decoded::opacity_logit;

/// One 8-bit channel's values.
pub(crate) type Lut = [f32; 256];

fn linear_lut(min: f32, max: f32) -> Lut {
    // Same lerp as the engine (min·(1−t) + max·t), which is exact at both ends.
    std::array::from_fn(|i| {
        let t = i as f64 / 255.0;
        (f64::from(min) * (1.0 - t) + f64::from(max) * t) as f32
    })
}

fn codebook_lut(book: &Codebook) -> Lut {
    **book
}

/// Positions: 16 bits per axis (low byte in means_l, high in means_u), linear between
/// the stored range of sign(x)·ln(|x|+1), then that transform undone.
pub(crate) struct Means {
    mins: [f32; 3],
    /// Span of each axis per 16-bit step.
    steps: [f32; 3],
}

impl Means {
    pub fn new(mins: [f64; 3], maxs: [f64; 3]) -> Self {
        Self {
            mins: mins.map(|m| m as f32),
            steps: std::array::from_fn(|a| ((maxs[a] - mins[a]) / 65535.0) as f32),
        }
    }

    /// f32 `exp(|v|) − 1` rather than f64 `exp_m1`, which made positions the costliest
    /// field: its absolute error (~1e-7 of a unit) is far below one 16-bit step
    /// (~2e-5 of the range), even near the origin where `exp − 1` loses relative
    /// precision.
    pub fn decode(&self, low: [u8; 4], high: [u8; 4]) -> [f32; 3] {
        std::array::from_fn(|a| {
            let q = u16::from_le_bytes([low[a], high[a]]);
            let v = self.mins[a] + self.steps[a] * f32::from(q);
            // The log transform spends the 16 bits densely near the origin.
            (v.abs().exp() - 1.0).copysign(v)
        })
    }
}

/// Rotation, w x y z, from smallest-three packing: alpha 252 + i says component i
/// (in w, x, y, z order) was the largest and is rebuilt as the positive square root;
/// RGB hold the other three in order, each `(byte / 255 − 0.5) · √2`. Both versions
/// share this. A tag outside 252..=255 decodes as identity, as PlayCanvas's readers do.
pub(crate) fn rotation(texel: [u8; 4]) -> [f32; 4] {
    let Some(largest) = texel[3]
        .checked_sub(252)
        .map(usize::from)
        .filter(|&i| i < 4)
    else {
        return [1.0, 0.0, 0.0, 0.0];
    };
    let [a, b, c] = [texel[0], texel[1], texel[2]]
        .map(|v| (f32::from(v) / 255.0 - 0.5) * std::f32::consts::SQRT_2);
    let sum = a * a + b * b + c * c;
    let d = (1.0 - sum).max(0.0).sqrt();
    // Built whole rather than by index, which stalled on store forwarding.
    let q = match largest {
        0 => [d, a, b, c],
        1 => [a, d, b, c],
        2 => [a, b, d, c],
        _ => [a, b, c, d],
    };
    if sum <= 1.0 {
        return q;
    }
    // Rounding can make the three small components alone exceed unit length; the
    // largest is then 0 and the rest are scaled back to the unit sphere.
    let norm = sum.sqrt();
    q.map(|v| v / norm)
}

/// Natural-log scales per axis.
pub(crate) struct Scales {
    luts: [Lut; 3],
}

impl Scales {
    pub fn new(coding: &ScaleCoding) -> Self {
        let luts = match coding {
            ScaleCoding::Codebook(book) => [codebook_lut(book); 3],
            ScaleCoding::Linear { mins, maxs } => {
                std::array::from_fn(|a| linear_lut(mins[a], maxs[a]))
            }
        };
        Self { luts }
    }

    pub fn decode(&self, texel: [u8; 4]) -> [f32; 3] {
        std::array::from_fn(|a| self.luts[a][usize::from(texel[a])])
    }
}

/// Inria's f_dc per channel and the opacity logit, from the sh0 image.
pub(crate) struct Colours {
    luts: [Lut; 3],
    opacity: Lut,
}

impl Colours {
    pub fn new(coding: &ColourCoding) -> Self {
        match coding {
            // v2 stores f_dc itself in the codebook and sigmoid(opacity) in alpha.
            ColourCoding::Codebook(book) => Self {
                luts: [codebook_lut(book); 3],
                opacity: std::array::from_fn(|i| opacity_logit(i as f32 / 255.0)),
            },
            // v1 stores the logit itself, linear in alpha.
            ColourCoding::Linear { mins, maxs } => Self {
                luts: std::array::from_fn(|c| linear_lut(mins[c], maxs[c])),
                opacity: linear_lut(mins[3], maxs[3]),
            },
        }
    }

    pub fn decode(&self, texel: [u8; 4]) -> ([f32; 3], f32) {
        let dc = std::array::from_fn(|c| self.luts[c][usize::from(texel[c])]);
        (dc, self.opacity[usize::from(texel[3])])
    }
}

/// The SH palette, expanded to floats once: entry e holds the rest coefficients of
/// bands 1..=bands, coefficient-major (`3 * k + channel`), ready to copy per splat.
///
/// Its image is `64 * coeffs` texels wide with 64 entries per row, entry e's
/// coefficient k at column `(e % 64) * coeffs + k` of row `e / 64`; since the width is
/// exactly 64 entries, that is texel `e * coeffs + k`. Texel RGB are the coefficient's
/// red, green and blue values (Inria's f_rest_{k}, f_rest_{coeffs+k},
/// f_rest_{2·coeffs+k}).
pub(crate) struct Palette {
    coeffs: usize,
    values: Vec<f32>,
}

impl Palette {
    /// `texels` are the centroid image's texels; `declared` is v2's `shN.count`.
    pub fn new(
        texels: impl Iterator<Item = [u8; 4]>,
        total_texels: usize,
        coeffs: usize,
        declared: Option<usize>,
        coding: &ShCoding,
    ) -> Self {
        let lut = match coding {
            ShCoding::Codebook(book) => codebook_lut(book),
            ShCoding::Linear { min, max } => linear_lut(*min, *max),
        };
        let capacity = total_texels / coeffs.max(1);
        let entries = declared.map_or(capacity, |d| d.min(capacity));
        let mut values = Vec::with_capacity(entries * coeffs * 3);
        for texel in texels.take(entries * coeffs) {
            values.extend([texel[0], texel[1], texel[2]].map(|b| lut[usize::from(b)]));
        }
        Self { coeffs, values }
    }

    pub fn entries(&self) -> usize {
        self.values.len() / (3 * self.coeffs).max(1)
    }

    pub fn entry(&self, label: usize) -> Option<&[f32]> {
        let width = 3 * self.coeffs;
        self.values.get(label * width..(label + 1) * width)
    }
}

/// The 16-bit palette index of one splat (red low byte, green high byte).
pub(crate) fn label(texel: [u8; 4]) -> usize {
    usize::from(u16::from_le_bytes([texel[0], texel[1]]))
}
