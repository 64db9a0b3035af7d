//! The headerless `.splat` layout of antimatter15's WebGL viewer: 32 bytes per splat,
//! position (3 × f32 LE), linear scale (3 × f32 LE), RGBA (4 × u8), rotation (4 × u8,
//! w first, each (b − 128) / 128). Degree-0 colour only. Positions load as stored, in
//! the trainer's frame.

use crate::asset::decoded::{DecodedSplats, SplatGeometry, f_dc_from_colour, opacity_logit};

/// Bytes of one splat's record.
pub const BYTES_PER_SPLAT: usize = 32;

/// Why a `.splat` file did not decode: with no header, only its length can be wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplatFileError {
    /// No bytes at all.
    #[error("empty .splat file")]
    Empty,
    /// The length is not a whole number of records.
    #[error(
        ".splat file is {len} bytes, not a whole number of {BYTES_PER_SPLAT}-byte splats \
         ({remainder} bytes left over)"
    )]
    BadLength {
        /// The file's length.
        len: usize,
        /// The bytes past the last whole record.
        remainder: usize,
    },
}

/// Decodes a `.splat` file; positions stay in the trainer's frame, as stored.
pub fn decode(bytes: &[u8]) -> Result<DecodedSplats, SplatFileError> {
    if bytes.is_empty() {
        return Err(SplatFileError::Empty);
    }
    let (records, remainder) = bytes.as_chunks::<BYTES_PER_SPLAT>();
    if !remainder.is_empty() {
        return Err(SplatFileError::BadLength {
            len: bytes.len(),
            remainder: remainder.len(),
        });
    }
    let logits: [f32; 256] = std::array::from_fn(|b| opacity_logit(b as f32 / 255.0));
    let dc: [f32; 256] = std::array::from_fn(|b| f_dc_from_colour(b as f32 / 255.0));

    let mut geometry = Vec::with_capacity(records.len());
    let mut sh = Vec::with_capacity(records.len() * 3);
    for r in records {
        let [px, py, pz, sx, sy, sz, rgba, rot]: [[u8; 4]; 8] = bytemuck::cast(*r);
        let f = f32::from_le_bytes;
        let [red, green, blue, alpha] = rgba;
        geometry.push(SplatGeometry {
            position: [f(px), f(py), f(pz)],
            opacity_logit: logits[alpha as usize],
            rotation: unit_quaternion(rot),
            log_scale: [f(sx).ln(), f(sy).ln(), f(sz).ln()],
            _pad: 0.0,
        });
        sh.extend_from_slice(&[dc[red as usize], dc[green as usize], dc[blue as usize]]);
    }
    Ok(DecodedSplats::from_parts(geometry, sh, 0, false))
}

/// w, x, y, z from bytes centred on 128, normalised; all-128 (a zero quaternion) is
/// taken as no rotation.
fn unit_quaternion(bytes: [u8; 4]) -> [f32; 4] {
    let q = bytes.map(|b| (f32::from(b) - 128.0) / 128.0);
    let norm = q.iter().map(|c| c * c).sum::<f32>().sqrt();
    if norm > 0.0 {
        q.map(|c| c / norm)
    } else {
        [1.0, 0.0, 0.0, 0.0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asset::decoded::SH_C0;

    fn record(position: [f32; 3], scale: [f32; 3], rgba: [u8; 4], rot: [u8; 4]) -> Vec<u8> {
        let mut r = Vec::with_capacity(BYTES_PER_SPLAT);
        for v in position.iter().chain(&scale) {
            r.extend_from_slice(&v.to_le_bytes());
        }
        r.extend_from_slice(&rgba);
        r.extend_from_slice(&rot);
        r
    }

    #[test]
    fn decodes_fields() {
        let mut bytes = record(
            [1.0, -2.0, 3.5],
            [0.5, 1.0, 2.0],
            [255, 128, 0, 255],
            [128, 128, 128, 128],
        );
        bytes.extend(record(
            [0.0; 3],
            [1.0; 3],
            [0, 0, 0, 0],
            [255, 128, 128, 128],
        ));
        let d = decode(&bytes).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(d.sh_degree, 0);
        assert!(!d.antialiased);
        let g = d.geometry[0];
        assert_eq!(g.position, [1.0, -2.0, 3.5]);
        assert!((g.log_scale[0] - 0.5f32.ln()).abs() < 1e-6);
        assert_eq!(g.log_scale[1], 0.0);
        assert_eq!(g.rotation, [1.0, 0.0, 0.0, 0.0]);
        assert!(g.opacity_logit > 13.0 && g.opacity_logit.is_finite());
        assert!(d.geometry[1].opacity_logit < -13.0);
        assert_eq!(d.geometry[1].rotation, [1.0, 0.0, 0.0, 0.0]);
        // Colour round-trips through Inria's DC convention.
        let colour = |k: usize| 0.5 + SH_C0 * d.sh[k];
        assert!((colour(0) - 1.0).abs() < 1e-6);
        assert!((colour(1) - 128.0 / 255.0).abs() < 1e-6);
        assert!(colour(2).abs() < 1e-6);
        assert_eq!(d.non_finite, 0);
    }

    #[test]
    fn rotation_is_normalised() {
        let bytes = record([0.0; 3], [1.0; 3], [0; 4], [128, 228, 128, 28]);
        let q = decode(&bytes).unwrap().geometry[0].rotation;
        let s = std::f32::consts::FRAC_1_SQRT_2;
        assert!((q[1] - s).abs() < 1e-6 && (q[3] + s).abs() < 1e-6);
    }

    #[test]
    fn rejects_bad_lengths() {
        assert_eq!(decode(&[]), Err(SplatFileError::Empty));
        assert_eq!(
            decode(&[0; 70]),
            Err(SplatFileError::BadLength {
                len: 70,
                remainder: 6
            })
        );
    }
}
