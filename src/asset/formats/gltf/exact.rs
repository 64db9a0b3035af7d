//! bevy_splat's exact attributes (`_BEVY_SPLAT_*`, application-specific semantics as
//! glTF 2.0 §3.7.2.1 allows: "MUST start with an underscore"). The spec's linear scale
//! and opacity and its unit quaternions cannot carry every trained value back bit for
//! bit, so the writer adds the trained values beside them. They are trusted only
//! where they still agree with the spec attributes, so a file another tool edited
//! (changing SCALE, keeping the stale exact values) reads as that tool meant.

use super::activation::{linear_scale, sigmoid};

/// Relative agreement of a recomputed value with the spec value beside it: loose
/// enough for another platform's `exp`, tight enough to catch any real edit.
const TOLERANCE: f32 = 1e-5;

fn agrees(recomputed: f32, stored: f32) -> bool {
    if recomputed.is_nan() || stored.is_nan() {
        return recomputed.is_nan() && stored.is_nan();
    }
    recomputed == stored || (recomputed - stored).abs() <= TOLERANCE * stored.abs().max(1e-30)
}

/// Whether every exact log scale reproduces its linear SCALE (`linear`: 3 per splat,
/// or 1 for a SCALAR accessor, which the writer never emits).
pub(crate) fn log_scales_agree(exact: &[f32], linear: &[f32]) -> bool {
    exact.len() == linear.len()
        && exact
            .iter()
            .zip(linear)
            .all(|(&l, &s)| agrees(linear_scale(l), s))
}

/// Whether every exact logit reproduces its OPACITY.
pub(crate) fn logits_agree(exact: &[f32], opacity: &[f32]) -> bool {
    exact.len() == opacity.len()
        && exact
            .iter()
            .zip(opacity)
            .all(|(&x, &o)| agrees(sigmoid(x), o) || (sigmoid(x) - o).abs() <= TOLERANCE)
}

/// Normalises a quaternion as the writer does; zero and non-finite ones pass through.
pub(crate) fn unit(q: [f32; 4]) -> [f32; 4] {
    let norm = q.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        q.map(|v| (f64::from(v) / norm) as f32)
    } else {
        q
    }
}

/// Whether every exact quaternion (x y z w) normalises to its ROTATION.
pub(crate) fn rotations_agree(exact: &[f32], rotation: &[f32]) -> bool {
    exact.len() == rotation.len()
        && exact
            .chunks_exact(4)
            .zip(rotation.chunks_exact(4))
            .all(|(e, r)| {
                let u = unit([e[0], e[1], e[2], e[3]]);
                u.iter()
                    .zip(r)
                    .all(|(&a, &b)| agrees(a, b) || (a - b).abs() <= TOLERANCE)
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_are_caught() {
        let exact = [-4.0f32, 0.5, f32::NAN];
        let linear: Vec<f32> = exact.iter().map(|&l| linear_scale(l)).collect();
        assert!(log_scales_agree(&exact, &linear));
        let mut edited = linear.clone();
        edited[1] *= 1.01;
        assert!(!log_scales_agree(&exact, &edited));
        assert!(logits_agree(&[30.0, -30.0], &[1.0, sigmoid(-30.0)]));
        assert!(!logits_agree(&[0.0], &[0.6]));
        assert!(rotations_agree(
            &[0.0, 0.0, 0.0, 2.0],
            &[0.0, 0.0, 0.0, 1.0]
        ));
        assert!(!rotations_agree(
            &[0.0, 0.0, 1.0, 0.0],
            &[0.0, 0.0, 0.0, 1.0]
        ));
    }
}
