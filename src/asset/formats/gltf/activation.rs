//! Scale and opacity between the file's representation and the trained (pre-activation)
//! values `DecodedSplats` holds.
//!
//! The ratified `KHR_gaussian_splatting` text (Khronos glTF @ 63770cc7, 2026-04) stores
//! linear scales ("Scale values are linear and MUST NOT be negative") and linear
//! opacity in 0..1. Its first merged text (ad9422ac, 2026-01) stored scales in log
//! space (`exp(scale)` gives the size) with signed integer types allowed, and files of
//! that era exist (bevy_gaussian_splatting's conformance fixtures). So the encoding of
//! SCALE is decided per document: see [`ScaleEncoding`].

/// How `KHR_gaussian_splatting:SCALE` values are to be read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScaleEncoding {
    /// Log space when any SCALE accessor of the document has a signed integer type or
    /// a negative value (neither is possible for linear scales, both were allowed in
    /// log space), linear otherwise.
    #[default]
    Auto,
    /// Linear, as the ratified spec says.
    Linear,
    /// Natural logarithms, as the 2026-01 text said.
    Log,
}

/// What one SCALE accessor says about the encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ScaleEvidence {
    pub signed_type: bool,
    pub negative_value: bool,
}

impl ScaleEvidence {
    pub(crate) fn of(signed_type: bool, values: &[f32]) -> Self {
        ScaleEvidence {
            signed_type,
            negative_value: values.iter().any(|v| *v < 0.0),
        }
    }

    pub(crate) fn says_log(self) -> bool {
        self.signed_type || self.negative_value
    }
}

/// The encoding `choice` resolves to, given every SCALE accessor's evidence.
pub(crate) fn resolve(
    choice: ScaleEncoding,
    evidence: impl IntoIterator<Item = ScaleEvidence>,
) -> bool {
    match choice {
        ScaleEncoding::Linear => false,
        ScaleEncoding::Log => true,
        ScaleEncoding::Auto => evidence.into_iter().any(ScaleEvidence::says_log),
    }
}

/// A linear scale's natural log. Zero (allowed: "MUST NOT be negative") maps to the log
/// of the smallest normal float rather than −∞, so the splat stays finite and tiny, and
/// so does a negative scale (invalid); NaN stays NaN so the splat counts as non-finite.
pub(crate) fn log_scale(linear: f32) -> f32 {
    if linear.is_nan() {
        return f32::NAN;
    }
    (f64::from(linear.max(f32::MIN_POSITIVE))).ln() as f32
}

/// The writer's inverse of [`log_scale`].
pub(crate) fn linear_scale(log: f32) -> f32 {
    f64::from(log).exp() as f32
}

/// An opacity's logit (0 and 1 kept finite as every decoder does), and whether the
/// opacity lay outside 0..1 (invalid per spec).
pub(crate) fn opacity_logit(opacity: f32) -> (f32, bool) {
    if opacity.is_nan() {
        return (f32::NAN, true);
    }
    let out_of_range = !(0.0..=1.0).contains(&opacity);
    (crate::asset::decoded::opacity_logit(opacity), out_of_range)
}

/// The writer's inverse of [`opacity_logit`].
pub(crate) fn sigmoid(logit: f32) -> f32 {
    (1.0 / (1.0 + (-f64::from(logit)).exp())) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_decides_auto() {
        let linear = ScaleEvidence::of(false, &[0.0, 0.1, 2.0]);
        let negative = ScaleEvidence::of(false, &[0.1, -4.0]);
        let signed = ScaleEvidence::of(true, &[1.0]);
        assert!(!resolve(ScaleEncoding::Auto, [linear]));
        assert!(resolve(ScaleEncoding::Auto, [linear, negative]));
        assert!(resolve(ScaleEncoding::Auto, [signed]));
        assert!(!resolve(ScaleEncoding::Linear, [negative]));
        assert!(resolve(ScaleEncoding::Log, [linear]));
    }

    #[test]
    fn logit_is_finite_at_the_ends() {
        let (one, bad) = opacity_logit(1.0);
        assert!(one.is_finite() && (one - 13.8155).abs() < 1e-3 && !bad);
        let (zero, _) = opacity_logit(0.0);
        assert_eq!(zero, -one);
        assert_eq!(opacity_logit(0.5).0, 0.0);
        assert!(opacity_logit(1.5).1);
        assert!(opacity_logit(f32::NAN).0.is_nan());
        assert!((sigmoid(opacity_logit(0.25).0) - 0.25).abs() < 1e-7);
    }

    #[test]
    fn zero_scale_stays_finite() {
        assert!(log_scale(0.0).is_finite());
        assert!(log_scale(f32::NAN).is_nan());
        assert_eq!(log_scale(1.0), 0.0);
        assert!((linear_scale(log_scale(0.01)) - 0.01).abs() < 1e-9);
    }
}
