//! The two SPZ quaternion encodings, decoded to unit w, x, y, z (still in SPZ's frame).

use std::f32::consts::FRAC_1_SQRT_2;

/// v1–2: x, y, z as bytes mapping 0..255 onto −1..1; the writer made w non-negative,
/// so w is rebuilt from the unit-length constraint. Multiplying by the reciprocal
/// rounds as Niantic's reader does, which matters where w is near 0 and the square
/// root magnifies the last bit.
#[inline(always)]
pub(crate) fn first_three(bytes: [u8; 3]) -> [f32; 4] {
    let [x, y, z] = bytes.map(|b| f32::from(b) * (1.0 / 127.5) - 1.0);
    let w = (1.0 - (x * x + y * y + z * z)).max(0.0).sqrt();
    normalised([w, x, y, z])
}

/// 9 bits of magnitude on the unit interval scaled by 1/√2 (the largest bound of the
/// three smaller components of a unit quaternion).
const MAGNITUDE_MAX: f32 = 511.0;

/// For each index of the largest component, the other three in x, y, z, w order.
const OTHERS: [[usize; 3]; 4] = [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]];

/// v3+: a little-endian u32 whose top 2 bits index the largest component (0 = x,
/// 1 = y, 2 = z, 3 = w); below them, from the highest bits down, come the other three
/// components in x, y, z, w order, 10 bits each: a sign bit then 9 magnitude bits. The
/// writer made the largest component positive, so it is rebuilt from unit length.
#[inline(always)]
pub(crate) fn smallest_three(bytes: [u8; 4]) -> [f32; 4] {
    let packed = u32::from_le_bytes(bytes);
    let largest = (packed >> 30) as usize & 3;
    let component = |shift: u32| {
        let field = packed >> shift;
        let magnitude = (field & 0x1ff) as f32 * (FRAC_1_SQRT_2 / MAGNITUDE_MAX);
        if field & 0x200 != 0 {
            -magnitude
        } else {
            magnitude
        }
    };
    let values = [component(20), component(10), component(0)];
    let sum_squares: f32 = values.iter().map(|v| v * v).sum();
    let mut xyzw = [0.0f32; 4];
    for (&slot, value) in OTHERS[largest].iter().zip(values) {
        xyzw[slot] = value;
    }
    xyzw[largest] = (1.0 - sum_squares).max(0.0).sqrt();
    let [x, y, z, w] = xyzw;
    normalised([w, x, y, z])
}

/// Quantisation leaves the norm a little off 1; corrupt bytes can push the three stored
/// components past unit length. Both are pulled back onto the unit sphere.
#[inline(always)]
fn normalised(q: [f32; 4]) -> [f32; 4] {
    let norm = q.iter().map(|c| c * c).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        let inverse = 1.0 / norm;
        q.map(|c| c * inverse)
    } else {
        [1.0, 0.0, 0.0, 0.0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packs the way Niantic's writer does, for round-trip checks.
    fn pack_smallest_three(q_xyzw: [f32; 4]) -> [u8; 4] {
        let largest = (0..4)
            .max_by(|&a, &b| q_xyzw[a].abs().total_cmp(&q_xyzw[b].abs()))
            .unwrap();
        let negate = q_xyzw[largest] < 0.0;
        let mut packed = largest as u32;
        for (i, c) in q_xyzw.iter().enumerate() {
            if i != largest {
                let sign = u32::from((*c < 0.0) ^ negate);
                let magnitude = (511.0 * (c.abs() / FRAC_1_SQRT_2) + 0.5) as u32;
                packed = (packed << 10) | (sign << 9) | magnitude;
            }
        }
        packed.to_le_bytes()
    }

    #[test]
    fn identity_encodings() {
        assert!(first_three([128, 128, 128])[0] > 0.99);
        let q = smallest_three(pack_smallest_three([0.0, 0.0, 0.0, 1.0]));
        assert_eq!(q, [1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn smallest_three_round_trips_within_its_step() {
        let samples = [
            [0.1f32, -0.7, 0.2, 0.67],
            [-0.9, 0.1, 0.3, -0.2],
            [0.5, 0.5, -0.5, 0.5],
            [0.0, 0.0, -1.0, 0.0],
        ];
        for raw in samples {
            let n = raw.iter().map(|c| c * c).sum::<f32>().sqrt();
            let q = raw.map(|c| c / n);
            let [w, x, y, z] = smallest_three(pack_smallest_three(q));
            let dot = (w * q[3] + x * q[0] + y * q[1] + z * q[2]).abs();
            assert!(dot > 1.0 - 1e-5, "{raw:?} -> {dot}");
        }
    }

    #[test]
    fn any_bytes_give_a_unit_quaternion() {
        for b in [
            [0u8; 4],
            [255; 4],
            [0x12, 0x34, 0x56, 0x78],
            [0, 0, 0, 0xc0],
        ] {
            let q = smallest_three(b);
            let n: f32 = q.iter().map(|c| c * c).sum();
            assert!((n - 1.0).abs() < 1e-5);
        }
        for b in [[0u8; 3], [255; 3], [128, 0, 255]] {
            let q = first_three(b);
            let n: f32 = q.iter().map(|c| c * c).sum();
            assert!((n - 1.0).abs() < 1e-5);
        }
    }
}
