//! Synthetic clouds with every field exercised.

#![allow(dead_code)]

use super::XorShift;
use bevy_splat::asset::decoded::{DecodedSplats, SplatGeometry, sh_stride};

/// `n` splats of SH `degree`: unnormalised quaternions, log scales from −9 to 2,
/// logits from −30 to 30 (beyond what f32 sigmoid can carry back), SH in −2..2.
pub fn cloud(n: usize, degree: u8, seed: u64) -> DecodedSplats {
    let mut rng = XorShift(seed);
    let geometry = (0..n)
        .map(|_| SplatGeometry {
            position: [rng.signed() * 50.0, rng.signed() * 5.0, rng.signed()],
            opacity_logit: rng.signed() * 30.0,
            rotation: [rng.signed() * 3.0, rng.signed(), rng.signed(), rng.signed()],
            log_scale: [
                rng.signed() * 5.5 - 3.5,
                rng.signed() * 5.5 - 3.5,
                rng.signed() * 5.5 - 3.5,
            ],
            _pad: 0.0,
        })
        .collect();
    let sh = (0..n * sh_stride(degree))
        .map(|_| rng.signed() * 2.0)
        .collect();
    DecodedSplats::from_parts(geometry, sh, degree, false)
}
