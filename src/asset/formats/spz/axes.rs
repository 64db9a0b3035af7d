//! SPZ stores splats in the RUB frame (x right, y up, z back); bevy_splat's decoders all
//! hand over the PLY/OpenCV RDF frame (x right, y down, z forward). The two differ by a
//! 180° turn about X, (x, y, z) → (x, −y, −z), a proper rotation, so every quantity maps
//! by a sign per component and nothing mixes.

/// Signs of the 15 non-DC real-SH basis functions (bands 1–3, Inria's f_rest order)
/// under (x, y, z) → (x, −y, −z). Each basis function is a polynomial whose monomials
/// share one parity in y and in z, so its sign is (−1)^(deg_y + deg_z):
/// band 1: y, z, x; band 2: xy, yz, 3z²−1, xz, x²−y²;
/// band 3: y(3x²−y²), xyz, y(5z²−1), z(5z²−3), x(5z²−1), z(x²−y²), x(x²−3y²).
/// Niantic's `coordinateConverter(RUB, RDF)` produces the same signs (its `flipSh` with
/// x = 1, y = −1, z = −1).
pub(crate) const RUB_TO_RDF_SH_SIGNS: [f32; 15] = [
    -1.0, -1.0, 1.0, // band 1
    -1.0, 1.0, 1.0, -1.0, 1.0, // band 2
    -1.0, 1.0, -1.0, -1.0, 1.0, -1.0, 1.0, // band 3
];

/// Takes a position and a w, x, y, z rotation from SPZ's RUB frame to RDF.
///
/// The rotation is conjugated by the 180° turn about X, R q R⁻¹ with R = (0, 1, 0, 0),
/// which keeps w and x and negates y and z.
#[inline(always)]
pub(crate) fn rub_to_rdf(position: [f32; 3], rotation: [f32; 4]) -> ([f32; 3], [f32; 4]) {
    let [px, py, pz] = position;
    let [w, x, y, z] = rotation;
    ([px, -py, -pz], [w, x, -y, -z])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inria's `eval_sh` (gaussian-splatting/utils/sh_utils.py) for one channel, bands 1–3.
    fn eval_rest(c: &[f32; 15], d: [f32; 3]) -> f32 {
        let [x, y, z] = d;
        let (xx, yy, zz) = (x * x, y * y, z * z);
        let c1 = 0.488_602_5;
        let c2 = [
            1.092_548_4,
            -1.092_548_4,
            0.315_391_57,
            -1.092_548_4,
            0.546_274_2,
        ];
        let c3 = [
            -0.590_043_6,
            2.890_611_4,
            -0.457_045_8,
            0.373_176_33,
            -0.457_045_8,
            1.445_305_7,
            -0.590_043_6,
        ];
        let basis = [
            -c1 * y,
            c1 * z,
            -c1 * x,
            c2[0] * x * y,
            c2[1] * y * z,
            c2[2] * (2.0 * zz - xx - yy),
            c2[3] * x * z,
            c2[4] * (xx - yy),
            c3[0] * y * (3.0 * xx - yy),
            c3[1] * x * y * z,
            c3[2] * y * (4.0 * zz - xx - yy),
            c3[3] * z * (2.0 * zz - 3.0 * xx - 3.0 * yy),
            c3[4] * x * (4.0 * zz - xx - yy),
            c3[5] * z * (xx - yy),
            c3[6] * x * (xx - 3.0 * yy),
        ];
        basis.iter().zip(c).map(|(b, c)| b * c).sum()
    }

    fn xorshift(state: &mut u32) -> f32 {
        *state ^= *state << 13;
        *state ^= *state >> 17;
        *state ^= *state << 5;
        (*state as f32 / u32::MAX as f32) * 2.0 - 1.0
    }

    #[test]
    fn sh_signs_preserve_radiance_along_the_turned_direction() {
        let mut s = 0x9e37_79b9;
        for _ in 0..200 {
            let coeffs: [f32; 15] = std::array::from_fn(|_| xorshift(&mut s));
            let flipped: [f32; 15] = std::array::from_fn(|k| coeffs[k] * RUB_TO_RDF_SH_SIGNS[k]);
            let d = [xorshift(&mut s), xorshift(&mut s), xorshift(&mut s)];
            let (d_rdf, _) = rub_to_rdf(d, [1.0, 0.0, 0.0, 0.0]);
            let a = eval_rest(&coeffs, d);
            let b = eval_rest(&flipped, d_rdf);
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
    }

    #[test]
    fn signs_match_niantic_flip_table() {
        // Niantic's flipSh for bands 1–3 names, per coefficient, the axes whose flip
        // negates it: y, z, x, xy, yz, -, xz, -, y, xyz, y, z, x, z, x.
        let axes = [
            "y", "z", "x", "xy", "yz", "", "xz", "", "y", "xyz", "y", "z", "x", "z", "x",
        ];
        for (k, a) in axes.iter().enumerate() {
            let sign = a.chars().filter(|c| *c != 'x').count() % 2;
            let expected = if sign == 1 { -1.0 } else { 1.0 };
            assert_eq!(RUB_TO_RDF_SH_SIGNS[k], expected, "coefficient {k}");
        }
    }

    /// v' = q v q*, with q = (w, x, y, z).
    fn rotate(q: [f32; 4], v: [f32; 3]) -> [f32; 3] {
        let [w, x, y, z] = q;
        let t = [
            2.0 * (y * v[2] - z * v[1]),
            2.0 * (z * v[0] - x * v[2]),
            2.0 * (x * v[1] - y * v[0]),
        ];
        [
            v[0] + w * t[0] + (y * t[2] - z * t[1]),
            v[1] + w * t[1] + (z * t[0] - x * t[2]),
            v[2] + w * t[2] + (x * t[1] - y * t[0]),
        ]
    }

    #[test]
    fn rotation_commutes_with_the_frame_change() {
        let mut s = 12345;
        for _ in 0..200 {
            let raw = [
                xorshift(&mut s),
                xorshift(&mut s),
                xorshift(&mut s),
                xorshift(&mut s),
            ];
            let n = raw.iter().map(|c| c * c).sum::<f32>().sqrt();
            let q = raw.map(|c| c / n);
            let v = [xorshift(&mut s), xorshift(&mut s), xorshift(&mut s)];
            let (v_rdf, q_rdf) = rub_to_rdf(v, q);
            let (expected, _) = rub_to_rdf(rotate(q, v), q);
            let got = rotate(q_rdf, v_rdf);
            for i in 0..3 {
                assert!((got[i] - expected[i]).abs() < 1e-5);
            }
        }
    }
}
