//! Node transforms as translation, rotation and scale. A `matrix` is decomposed; the
//! splat spec asks for matrices that decompose into positive scales and a rotation
//! ("Splat rendering with non-decomposable transformation matrices or with negative
//! scale values is undefined"), so anything else is decomposed as well as it goes and
//! reported rather than refused.

/// A node's local transform, glTF conventions: rotation is x, y, z, w.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Trs {
    pub translation: [f32; 3],
    pub rotation: [f32; 4],
    pub scale: [f32; 3],
}

/// How faithfully a matrix became TRS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixFit {
    /// A positive-scale rotation and translation, as the spec asks.
    Exact,
    /// The determinant was negative: one scale is negative (a mirror).
    Mirrored,
    /// The columns were not orthogonal (shear) or the last row was not 0 0 0 1; the
    /// rotation is the nearest one found and the scales the column lengths.
    Sheared,
    /// A column had zero length; its axis keeps the identity rotation.
    Degenerate,
}

/// How far from orthogonal the scaled-out columns may be before the matrix counts as
/// sheared: about what f32 rounding of a composed TRS leaves.
const ORTHOGONALITY_TOLERANCE: f64 = 1e-4;

/// Decomposes a column-major 4×4 matrix.
pub(crate) fn decompose(m: &[f32; 16]) -> (Trs, MatrixFit) {
    let col = |j: usize| [0, 1, 2].map(|i| f64::from(m[4 * j + i]));
    let mut columns = [col(0), col(1), col(2)];
    let mut scale = columns.map(|c| dot(c, c).sqrt());
    let translation = [m[12], m[13], m[14]];

    if scale.contains(&0.0) {
        let trs = Trs {
            translation,
            rotation: [0.0, 0.0, 0.0, 1.0],
            scale: scale.map(|s| s as f32),
        };
        return (trs, MatrixFit::Degenerate);
    }
    let mut fit = MatrixFit::Exact;
    if dot(columns[0], cross(columns[1], columns[2])) < 0.0 {
        scale[0] = -scale[0];
        fit = MatrixFit::Mirrored;
    }
    for (c, s) in columns.iter_mut().zip(scale) {
        *c = c.map(|v| v / s);
    }
    let sheared = [(0, 1), (0, 2), (1, 2)]
        .iter()
        .any(|&(a, b)| dot(columns[a], columns[b]).abs() > ORTHOGONALITY_TOLERANCE);
    let projective = [m[3], m[7], m[11]] != [0.0; 3] || m[15] != 1.0;
    if sheared || projective {
        fit = MatrixFit::Sheared;
    }
    let trs = Trs {
        translation,
        rotation: quaternion_from_columns(columns),
        scale: scale.map(|s| s as f32),
    };
    (trs, fit)
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The unit quaternion (x, y, z, w, with w ≥ 0) of a rotation matrix given by its
/// columns, by Shepperd's method; for a matrix that is not quite a rotation it gives
/// a nearby one, renormalised.
fn quaternion_from_columns(c: [[f64; 3]; 3]) -> [f32; 4] {
    // r(i, j): row i, column j.
    let r = |i: usize, j: usize| c[j][i];
    let trace = r(0, 0) + r(1, 1) + r(2, 2);
    let q = if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        [
            (r(2, 1) - r(1, 2)) / s,
            (r(0, 2) - r(2, 0)) / s,
            (r(1, 0) - r(0, 1)) / s,
            s / 4.0,
        ]
    } else if r(0, 0) > r(1, 1) && r(0, 0) > r(2, 2) {
        let s = (1.0 + r(0, 0) - r(1, 1) - r(2, 2)).sqrt() * 2.0;
        [
            s / 4.0,
            (r(0, 1) + r(1, 0)) / s,
            (r(0, 2) + r(2, 0)) / s,
            (r(2, 1) - r(1, 2)) / s,
        ]
    } else if r(1, 1) > r(2, 2) {
        let s = (1.0 + r(1, 1) - r(0, 0) - r(2, 2)).sqrt() * 2.0;
        [
            (r(0, 1) + r(1, 0)) / s,
            s / 4.0,
            (r(1, 2) + r(2, 1)) / s,
            (r(0, 2) - r(2, 0)) / s,
        ]
    } else {
        let s = (1.0 + r(2, 2) - r(0, 0) - r(1, 1)).sqrt() * 2.0;
        [
            (r(0, 2) + r(2, 0)) / s,
            (r(1, 2) + r(2, 1)) / s,
            s / 4.0,
            (r(1, 0) - r(0, 1)) / s,
        ]
    };
    let norm = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    let sign = if q[3] < 0.0 { -1.0 } else { 1.0 };
    if norm == 0.0 || !norm.is_finite() {
        return [0.0, 0.0, 0.0, 1.0];
    }
    q.map(|v| (sign * v / norm) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
    }

    #[test]
    fn z_up_to_y_up_matrix() {
        // The matrix of Cesium's SPZ files: −90° about X, plus a translation.
        let m = [
            1.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.5, 2.0, 3.0, 1.0,
        ];
        let (trs, fit) = decompose(&m);
        assert_eq!(fit, MatrixFit::Exact);
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert!(
            close(&trs.rotation, &[-h, 0.0, 0.0, h]),
            "{:?}",
            trs.rotation
        );
        assert!(close(&trs.scale, &[1.0; 3]));
        assert_eq!(trs.translation, [1.5, 2.0, 3.0]);
    }

    /// Builds the column-major matrix of a TRS, as glTF composes it (T · R · S).
    fn compose(t: [f32; 3], q: [f32; 4], s: [f32; 3]) -> [f32; 16] {
        let [x, y, z, w] = q;
        let r = [
            [
                1.0 - 2.0 * (y * y + z * z),
                2.0 * (x * y + w * z),
                2.0 * (x * z - w * y),
            ],
            [
                2.0 * (x * y - w * z),
                1.0 - 2.0 * (x * x + z * z),
                2.0 * (y * z + w * x),
            ],
            [
                2.0 * (x * z + w * y),
                2.0 * (y * z - w * x),
                1.0 - 2.0 * (x * x + y * y),
            ],
        ];
        let mut m = [0.0; 16];
        for j in 0..3 {
            for i in 0..3 {
                m[4 * j + i] = r[j][i] * s[j];
            }
        }
        m[12..15].copy_from_slice(&t);
        m[15] = 1.0;
        m
    }

    #[test]
    fn random_trs_round_trips() {
        let mut state = 0x1234_5678u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as f32 / u32::MAX as f32 * 2.0 - 1.0
        };
        for _ in 0..500 {
            let raw = [next(), next(), next(), next()];
            let n = raw.iter().map(|v| v * v).sum::<f32>().sqrt();
            let mut q = raw.map(|v| v / n);
            if q[3] < 0.0 {
                q = q.map(|v| -v);
            }
            let s = [next().abs() + 0.1, next().abs() + 0.1, next().abs() + 0.1];
            let t = [next() * 10.0, next(), next()];
            let (trs, fit) = decompose(&compose(t, q, s));
            assert_eq!(fit, MatrixFit::Exact);
            assert!(
                close(&trs.scale, &s) || trs.scale.iter().zip(s).all(|(a, b)| (a - b).abs() < 1e-5)
            );
            let same = trs
                .rotation
                .iter()
                .zip(q)
                .all(|(a, b)| (a - b).abs() < 1e-4);
            assert!(same, "{:?} vs {:?}", trs.rotation, q);
        }
    }

    #[test]
    fn shear_and_mirror_are_reported() {
        let mut shear = [0.0; 16];
        shear[0] = 1.0;
        shear[4] = 0.5;
        shear[5] = 1.0;
        shear[10] = 1.0;
        shear[15] = 1.0;
        assert_eq!(decompose(&shear).1, MatrixFit::Sheared);
        let mut mirror = [0.0; 16];
        mirror[0] = -2.0;
        mirror[5] = 1.0;
        mirror[10] = 1.0;
        mirror[15] = 1.0;
        let (trs, fit) = decompose(&mirror);
        assert_eq!(fit, MatrixFit::Mirrored);
        assert_eq!(trs.scale, [-2.0, 1.0, 1.0]);
        assert_eq!(decompose(&[0.0; 16]).1, MatrixFit::Degenerate);
    }
}
