//! The frame of SPZ data inside glTF.
//!
//! The SPZ extensions' text says to pass "a Left-Up-Front (LUF) coordinate system in
//! the SPZ PackOptions or UnpackOptions" (KHR_gaussian_splatting_compression_spz_2
//! README, Conformance). The implementations by the extension's authors do otherwise:
//! CesiumJS (`GltfSpzLoader.js`) and cesium-native (`decodeSpz.cpp`) both unpack with
//! `CoordinateSystem::UNSPECIFIED`, taking the values stored in the SPZ as glTF values
//! with no axis change, and cesium-native's own test file (`SpzSplat/basic.glb`,
//! our `spz2_basic_1splat.glb`) expects its stored position (1, 2, 3) back unchanged.
//! Cesium's tools wrote the files that exist (the legacy tower and UnitSH ones), so
//! this loader follows the implementations: the stored SPZ values are the glTF values.
//!
//! bevy_splat's SPZ decoder hands over the RDF frame (x, −y, −z of the stored RUB
//! values), so that turn is undone here. It is a 180° turn about X, its own inverse.

use crate::asset::decoded::{DecodedSplats, sh_stride};

/// Signs of the 15 non-DC real-SH coefficients (Inria's order) under (x, y, z) →
/// (x, −y, −z): (−1)^(degree in y + degree in z) of each basis polynomial.
/// Band 1: y, z, x; band 2: xy, yz, 3z²−1, xz, x²−y²;
/// band 3: y(3x²−y²), xyz, y(5z²−1), z(5z²−3), x(5z²−1), z(x²−y²), x(x²−3y²).
pub(crate) const TURN_X_SH_SIGNS: [f32; 15] = [
    -1.0, -1.0, 1.0, // band 1
    -1.0, 1.0, 1.0, -1.0, 1.0, // band 2
    -1.0, 1.0, -1.0, -1.0, 1.0, -1.0, 1.0, // band 3
];

/// Turns decoded SPZ splats back from RDF to the frame the SPZ stored, which is the
/// glTF primitive's frame.
pub(crate) fn rdf_to_stored(splats: &mut DecodedSplats) {
    for g in &mut splats.geometry {
        let [x, y, z] = g.position;
        g.position = [x, -y, -z];
        // Conjugating by the turn about X keeps w and x and negates y and z.
        let [w, qx, qy, qz] = g.rotation;
        g.rotation = [w, qx, -qy, -qz];
    }
    let stride = sh_stride(splats.sh_degree);
    if stride > 3 {
        for splat in splats.sh.chunks_exact_mut(stride) {
            for (value, sign) in splat[3..].chunks_exact_mut(3).zip(TURN_X_SH_SIGNS) {
                value.iter_mut().for_each(|v| *v *= sign);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inria's basis functions for bands 1–3 (sh_utils.py `eval_sh`), one channel.
    fn basis(d: [f64; 3]) -> [f64; 15] {
        let [x, y, z] = d;
        let (xx, yy, zz) = (x * x, y * y, z * z);
        [
            -y,
            z,
            -x,
            x * y,
            -y * z,
            2.0 * zz - xx - yy,
            -x * z,
            xx - yy,
            -y * (3.0 * xx - yy),
            x * y * z,
            -y * (4.0 * zz - xx - yy),
            z * (2.0 * zz - 3.0 * xx - 3.0 * yy),
            -x * (4.0 * zz - xx - yy),
            z * (xx - yy),
            -x * (xx - 3.0 * yy),
        ]
    }

    /// Each sign is the factor by which its basis function changes under the turn.
    #[test]
    fn signs_follow_the_basis_functions() {
        for d in [[0.3, -0.5, 0.8], [-0.9, 0.2, 0.4], [0.1, 0.7, -0.7]] {
            let turned = basis([d[0], -d[1], -d[2]]);
            for (k, (a, b)) in basis(d).iter().zip(turned).enumerate() {
                assert!(
                    (a * f64::from(TURN_X_SH_SIGNS[k]) - b).abs() < 1e-12,
                    "coefficient {k}"
                );
            }
        }
    }
}
