//! Turns the six packed SPZ attribute arrays into `DecodedSplats` in the RDF frame.
//!
//! The loops walk fixed-size chunks (`as_chunks`), so they carry no bounds checks, and
//! byte-valued fields go through 256-entry tables so no transcendental runs per splat.

use super::axes::{RUB_TO_RDF_SH_SIGNS, rub_to_rdf};
use super::error::{Attribute, Section, SpzError};
use super::header::{Layout, PositionEncoding, RotationEncoding};
use super::rotation;
use crate::asset::decoded::{DecodedSplats, SplatGeometry, opacity_logit, sh_stride};

/// SPZ maps the DC colour f_dc onto a byte as 0.5 + 0.15 · f_dc, wider than the 0..1
/// colour range so slightly over- and under-exposed colours survive.
const COLOR_SCALE: f32 = 0.15;

/// The highest band bevy_splat renders; a degree-4 file loads bands 0–3.
const MAX_LOADED_SH_DEGREE: u8 = 3;

/// The packed arrays, borrowed from one gzip payload or from six zstd streams.
pub(crate) struct Packed<'a> {
    pub positions: &'a [u8],
    pub alphas: &'a [u8],
    pub colors: &'a [u8],
    pub scales: &'a [u8],
    pub rotations: &'a [u8],
    pub sh: &'a [u8],
}

impl<'a> Packed<'a> {
    fn get(&self, attribute: Attribute) -> &'a [u8] {
        match attribute {
            Attribute::Positions => self.positions,
            Attribute::Alphas => self.alphas,
            Attribute::Colors => self.colors,
            Attribute::Scales => self.scales,
            Attribute::Rotations => self.rotations,
            Attribute::Sh => self.sh,
        }
    }
}

fn table(f: impl Fn(f32) -> f32) -> [f32; 256] {
    std::array::from_fn(|b| f(b as f32))
}

fn alpha_logit(byte: f32) -> f32 {
    opacity_logit(byte / 255.0)
}

/// The SH degree a file of `stored` degree loads as.
pub(crate) fn loaded_sh_degree(stored: u8) -> u8 {
    stored.min(MAX_LOADED_SH_DEGREE)
}

pub(crate) fn unpack(layout: &Layout, packed: &Packed<'_>) -> Result<DecodedSplats, SpzError> {
    for attribute in Attribute::ALL {
        let expected = layout.stream_len(attribute);
        let got = packed.get(attribute).len() as u64;
        if got != expected {
            return Err(SpzError::Truncated {
                section: Section::Attribute(attribute),
                expected,
                got,
            });
        }
    }
    let geometry = match (layout.positions, layout.rotations) {
        (PositionEncoding::Fixed24, RotationEncoding::SmallestThree) => {
            let step = fixed_point_step(layout.fractional_bits);
            geometry(
                packed,
                |p: &[u8; 9]| fixed24(p, step),
                rotation::smallest_three,
            )
        }
        (PositionEncoding::Fixed24, RotationEncoding::FirstThree) => {
            let step = fixed_point_step(layout.fractional_bits);
            geometry(
                packed,
                |p: &[u8; 9]| fixed24(p, step),
                rotation::first_three,
            )
        }
        (PositionEncoding::Half, RotationEncoding::SmallestThree) => {
            geometry(packed, half3, rotation::smallest_three)
        }
        (PositionEncoding::Half, RotationEncoding::FirstThree) => {
            geometry(packed, half3, rotation::first_three)
        }
    };
    let sh_degree = loaded_sh_degree(layout.stored_sh_degree);
    let sh = decode_sh(sh_degree, layout.stored_sh_degree, packed);
    // Every value but a v1 half-float position comes from a finite table or a
    // normalised quaternion, so only positions can be NaN or infinite: this counts
    // what `DecodedSplats::from_parts` would, without rescanning every float.
    let non_finite = match layout.positions {
        PositionEncoding::Fixed24 => 0,
        PositionEncoding::Half => geometry
            .iter()
            .filter(|g| !g.position.iter().all(|c| c.is_finite()))
            .count(),
    };
    Ok(DecodedSplats {
        geometry,
        sh_degree,
        sh,
        non_finite,
        antialiased: layout.antialiased,
    })
}

/// 2^-bits, exact in f64 for every u8; past 2^-149 it flushes to zero in f32.
fn fixed_point_step(fractional_bits: u8) -> f32 {
    0.5f64.powi(i32::from(fractional_bits)) as f32
}

/// Three 24-bit little-endian two's-complement values; placing each in the top of an
/// i32 and shifting back sign-extends it.
#[inline(always)]
fn fixed24(p: &[u8; 9], step: f32) -> [f32; 3] {
    let value = |a: u8, b: u8, c: u8| (i32::from_le_bytes([0, a, b, c]) >> 8) as f32 * step;
    [
        value(p[0], p[1], p[2]),
        value(p[3], p[4], p[5]),
        value(p[6], p[7], p[8]),
    ]
}

#[inline(always)]
fn half3(p: &[u8; 6]) -> [f32; 3] {
    let half = |lo: u8, hi: u8| half::f16::from_le_bytes([lo, hi]).to_f32();
    [half(p[0], p[1]), half(p[2], p[3]), half(p[4], p[5])]
}

/// One pass over the four geometry arrays, so each output splat is written once.
fn geometry<const P: usize, const R: usize>(
    packed: &Packed<'_>,
    position: impl Fn(&[u8; P]) -> [f32; 3],
    rotation: impl Fn([u8; R]) -> [f32; 4],
) -> Vec<SplatGeometry> {
    let logits = table(alpha_logit);
    // Scales are stored as (ln s + 10) · 16.
    let log_scales = table(|b| b / 16.0 - 10.0);
    packed
        .positions
        .as_chunks::<P>()
        .0
        .iter()
        .zip(packed.alphas)
        .zip(packed.scales.as_chunks::<3>().0)
        .zip(packed.rotations.as_chunks::<R>().0)
        .map(|(((p, &a), s), r)| {
            let (position, rotation) = rub_to_rdf(position(p), rotation(*r));
            SplatGeometry {
                position,
                opacity_logit: logits[a as usize],
                rotation,
                log_scale: s.map(|b| log_scales[b as usize]),
                _pad: 0.0,
            }
        })
        .collect()
}

/// f_dc from the colour bytes, then the kept rest coefficients from the SH bytes.
fn decode_sh(degree: u8, stored_degree: u8, packed: &Packed<'_>) -> Vec<f32> {
    let count = packed.alphas.len();
    let mut sh = Vec::with_capacity(count * sh_stride(degree));
    let colors = packed.colors.as_chunks::<3>().0;
    let stored = packed.sh;
    match (degree, stored_degree) {
        (1, _) => sh_bands::<9, 9>(&mut sh, colors, stored),
        (2, _) => sh_bands::<24, 24>(&mut sh, colors, stored),
        (3, 3) => sh_bands::<45, 45>(&mut sh, colors, stored),
        (3, _) => sh_bands::<45, 72>(&mut sh, colors, stored),
        _ => {
            let dc = dc_table();
            sh.extend(colors.iter().flat_map(|c| c.map(|b| dc[b as usize])));
        }
    }
    sh
}

fn dc_table() -> [f32; 256] {
    table(|b| (b / 255.0 - 0.5) / COLOR_SCALE)
}

/// SPZ's SH bytes are, per splat, coefficient-major with the channel fastest
/// (k1 r g b, k2 r g b, …): our order after the DC triple, so the first `KEPT` of each
/// splat's `STORED` bytes copy across. A byte b means (b − 128) / 128; the per-value
/// factor ±1/128 folds in the axis sign, is exact, and lets the loop vectorise.
fn sh_bands<const KEPT: usize, const STORED: usize>(
    out: &mut Vec<f32>,
    colors: &[[u8; 3]],
    stored: &[u8],
) {
    let dc = dc_table();
    let factors: [f32; KEPT] =
        std::array::from_fn(|i| RUB_TO_RDF_SH_SIGNS.get(i / 3).copied().unwrap_or(1.0) / 128.0);
    for (c, s) in colors.iter().zip(stored.as_chunks::<STORED>().0) {
        out.extend(c.map(|b| dc[b as usize]));
        if let Some(kept) = s.first_chunk::<KEPT>() {
            out.extend(
                kept.iter()
                    .zip(&factors)
                    .map(|(&b, &f)| (f32::from(b) - 128.0) * f),
            );
        }
    }
}
