//! Colour spaces. bevy_splat renders SH colours as sRGB-encoded display values, the
//! convention of Inria's training code; `KHR_gaussian_splatting` also allows
//! `lin_rec709_display`, whose reconstructed colours are linear BT.709.
//!
//! For a linear file the DC term is converted exactly: the colour
//! `0.5 + C0 · f_dc` is sRGB-encoded and turned back into a coefficient. The higher
//! bands are scaled, per channel, by the slope of the sRGB encoding at that DC colour:
//! the first-order (tangent) approximation of encoding the view-dependent colour, exact
//! where the view-dependent part is small. Blending in sRGB rather than linear space
//! stays an approximation either way: the spec asks for blending before the transfer
//! function, which a display-space renderer cannot do.

use crate::asset::decoded::SH_C0;

/// The colour space a primitive declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ColorSpace {
    /// `srgb_rec709_display`: what bevy_splat renders; values kept as they are.
    SrgbRec709Display,
    /// `lin_rec709_display`: converted to sRGB on load.
    LinRec709Display,
}

pub(crate) const SRGB: &str = "srgb_rec709_display";
pub(crate) const LINEAR: &str = "lin_rec709_display";

/// The colour space `name` stands for; an unknown or missing name is read as sRGB,
/// the Inria convention the training tools follow (and what Cesium defaults to).
pub(crate) fn parse(name: Option<&str>) -> ColorSpace {
    match name {
        Some(LINEAR) => ColorSpace::LinRec709Display,
        _ => ColorSpace::SrgbRec709Display,
    }
}

/// The sRGB transfer function, extended past 0..1: the linear segment continues below
/// zero and the power segment above one, so out-of-gamut SH colours keep their order.
pub(crate) fn srgb_encode(linear: f64) -> f64 {
    if linear <= 0.003_130_8 {
        12.92 * linear
    } else {
        1.055 * linear.powf(1.0 / 2.4) - 0.055
    }
}

/// The inverse of [`srgb_encode`].
pub(crate) fn srgb_decode(encoded: f64) -> f64 {
    if encoded <= 0.040_45 {
        encoded / 12.92
    } else {
        ((encoded + 0.055) / 1.055).powf(2.4)
    }
}

/// d(srgb_encode)/d(linear).
fn srgb_slope(linear: f64) -> f64 {
    if linear <= 0.003_130_8 {
        12.92
    } else {
        1.055 / 2.4 * linear.powf(1.0 / 2.4 - 1.0)
    }
}

fn c0() -> f64 {
    f64::from(SH_C0)
}

/// Re-expresses one splat's SH (coefficient-major, channel-minor) from linear to
/// sRGB-encoded display colour.
pub(crate) fn linear_sh_to_srgb(sh: &mut [f32]) {
    for channel in 0..3.min(sh.len()) {
        let dc = f64::from(sh[channel]);
        let linear = 0.5 + c0() * dc;
        let slope = srgb_slope(linear);
        sh[channel] = ((srgb_encode(linear) - 0.5) / c0()) as f32;
        for rest in sh.iter_mut().skip(3 + channel).step_by(3) {
            *rest = (f64::from(*rest) * slope) as f32;
        }
    }
}

/// The DC coefficient whose colour is the display value `display` (0.5 + C0 · f_dc).
pub(crate) fn dc_from_display(display: f32) -> f32 {
    ((f64::from(display) - 0.5) / c0()) as f32
}

/// The display value (0.5 + C0 · f_dc, in the file's colour space) of one COLOR_0
/// channel. The ratified spec's COLOR_0 is linear, as all glTF vertex colours are, and
/// was clamped to 0..1: "if the color space is srgb_rec709_display, the clamped values
/// would have to be decoded from sRGB to linear", so `srgb_was_decoded` encodes it
/// back. A linear file's COLOR_0 is its linear colour itself, and the drafts (no
/// `colorSpace`) stored display values: both are taken as they are.
pub(crate) fn color0_display(value: f32, srgb_was_decoded: bool) -> f32 {
    if srgb_was_decoded {
        srgb_encode(f64::from(value).clamp(0.0, 1.0)) as f32
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_function_round_trips() {
        for i in -10..=30 {
            let x = f64::from(i) / 20.0;
            assert!((srgb_decode(srgb_encode(x)) - x).abs() < 1e-12, "{x}");
        }
        assert!((srgb_encode(0.5) - 0.735_356_983).abs() < 1e-8);
    }

    #[test]
    fn dc_converts_exactly() {
        let mut sh = [0.1, -1.0, 1.5];
        linear_sh_to_srgb(&mut sh);
        for (orig, new) in [0.1f64, -1.0, 1.5].iter().zip(sh) {
            let want = srgb_encode(0.5 + c0() * orig);
            let got = 0.5 + c0() * f64::from(new);
            assert!((want - got).abs() < 1e-6, "{want} {got}");
        }
    }

    /// The view-dependent colour of a linear file, sRGB-encoded, against the converted
    /// coefficients' colour: the error is second order in the band-1 amplitude.
    #[test]
    fn rest_bands_follow_the_tangent() {
        for amplitude in [0.01f64, 0.02] {
            let dc = 0.3f64;
            let mut sh = [dc as f32, 0.0, 0.0, amplitude as f32, 0.0, 0.0];
            linear_sh_to_srgb(&mut sh);
            // Band-1 coefficient 0 along direction y = -1: basis -0.4886 * y.
            let basis = 0.488_602_511_902_919_9;
            let linear = 0.5 + c0() * dc + basis * amplitude;
            let want = srgb_encode(linear);
            let got = 0.5 + c0() * f64::from(sh[0]) + basis * f64::from(sh[3]);
            let err = (want - got).abs();
            assert!(err < 2.0 * amplitude * amplitude, "{amplitude}: {err}");
        }
    }

    #[test]
    fn color0_of_the_spec_inverts() {
        // An sRGB file's writer: linear = decode(clamp(0.5 + C0 dc)).
        let dc = 0.7f32;
        let linear = srgb_decode(0.5 + c0() * f64::from(dc)) as f32;
        assert!((dc_from_display(color0_display(linear, true)) - dc).abs() < 1e-5);
        assert_eq!(color0_display(0.25, false), 0.25);
    }
}
