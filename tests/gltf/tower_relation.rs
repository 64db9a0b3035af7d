//! `tower_legacy_spz.glb` and `tower_v2.spz` hold the same SPZ bytes. The plain SPZ
//! decoder turns SPZ's stored (RUB) values into RDF, (x, y, z) → (x, −y, −z); inside
//! glTF the stored values are taken as the glTF values (as CesiumJS and cesium-native
//! read them), so for every splat i:
//!
//!   p_glb = (x, −y, −z) of p_spz
//!   q_glb = (w, x, −y, −z) of q_spz            (w x y z)
//!   sh_glb[k] = s_k · sh_spz[k] for rest coefficient k, s = signs of the turn about X
//!   DC, opacity logit and log scales identical
//!
//! all exact (sign flips only). With the node's −90° turn about X and translation t,
//! the world position is (x_spz, −z_spz, y_spz) + t.

use crate::common::{read, scene};
use bevy_splat::asset::decoded::sh_stride;
use bevy_splat::asset::formats::spz;

/// (−1)^(degree in y + degree in z) of each band 1–3 basis polynomial (Inria order):
/// y, z, x | xy, yz, 3z²−1, xz, x²−y² | y(3x²−y²), xyz, y(5z²−1), z(5z²−3), x(5z²−1),
/// z(x²−y²), x(x²−3y²).
const SIGNS: [f32; 15] = [
    -1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, -1.0, 1.0, -1.0, 1.0,
];

#[test]
fn glb_holds_the_spz_file_bytes() {
    let glb = read("tower_legacy_spz.glb");
    let spz = read("tower_v2.spz");
    // BIN chunk data starts after the header, the JSON chunk and the BIN chunk header.
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let bin = 20 + json_len + 8;
    assert_eq!(&glb[bin..bin + spz.len()], spz.as_slice());
}

#[test]
fn tower_glb_is_the_spz_turned_back_to_stored_axes() {
    let scene = scene("tower_legacy_spz.glb");
    let glb = &scene.nodes[0].splats[0];
    let spz = spz::decode(&read("tower_v2.spz")).expect("plain SPZ decode");
    assert_eq!(glb.len(), spz.len());
    assert_eq!(glb.sh_degree, spz.sh_degree);
    assert_eq!(glb.sh_degree, 3);
    let stride = sh_stride(3);
    for i in 0..glb.len() {
        let (g, s) = (&glb.geometry[i], &spz.geometry[i]);
        let [x, y, z] = s.position;
        assert_eq!(g.position, [x, -y, -z], "splat {i} position");
        let [w, qx, qy, qz] = s.rotation;
        assert_eq!(g.rotation, [w, qx, -qy, -qz], "splat {i} rotation");
        assert_eq!(g.log_scale, s.log_scale, "splat {i} scale");
        assert_eq!(
            g.opacity_logit.to_bits(),
            s.opacity_logit.to_bits(),
            "splat {i} opacity"
        );
        let (gs, ss) = (
            &glb.sh[i * stride..(i + 1) * stride],
            &spz.sh[i * stride..(i + 1) * stride],
        );
        assert_eq!(gs[..3], ss[..3], "splat {i} DC");
        for k in 1..16 {
            for c in 0..3 {
                assert_eq!(
                    gs[3 * k + c],
                    SIGNS[k - 1] * ss[3 * k + c],
                    "splat {i} coefficient {k}"
                );
            }
        }
    }
}
