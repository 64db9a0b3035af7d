//! Writes splats as an Inria 3DGS PLY: binary little-endian floats in the standard
//! property order (`x y z`, `nx ny nz`, `f_dc_*`, `f_rest_*` channel-major, `opacity`,
//! `scale_*`, `rot_*`), the SH degree kept, every value as stored (no activation).

use super::layout::rest_sh_index;
use crate::asset::decoded::DecodedSplats;

/// The whole file. Reading it back with [`decode`](super::decode) gives `splats` bit
/// for bit (but `antialiased`, which PLY has no place for).
pub fn write(splats: &DecodedSplats) -> Vec<u8> {
    let stride = splats.sh_stride();
    let rest = stride / 3 - 1;
    let mut header = format!(
        "ply\nformat binary_little_endian 1.0\ncomment written by bevy_splat\n\
         element vertex {}\n",
        splats.len()
    );
    for name in [
        "x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2",
    ] {
        header += &format!("property float {name}\n");
    }
    for j in 0..3 * rest {
        header += &format!("property float f_rest_{j}\n");
    }
    for name in ["opacity", "scale_0", "scale_1", "scale_2"] {
        header += &format!("property float {name}\n");
    }
    for name in ["rot_0", "rot_1", "rot_2", "rot_3"] {
        header += &format!("property float {name}\n");
    }
    header += "end_header\n";
    let floats_per_splat = 17 + 3 * rest;
    let mut out = Vec::with_capacity(header.len() + splats.len() * floats_per_splat * 4);
    out.extend_from_slice(header.as_bytes());
    let mut push = |v: f32| out.extend_from_slice(&v.to_le_bytes());
    for (g, sh) in splats.geometry.iter().zip(splats.sh.chunks_exact(stride)) {
        g.position.iter().for_each(|&v| push(v));
        [0.0; 3].iter().for_each(|&v| push(v));
        sh[..3].iter().for_each(|&v| push(v));
        for j in 0..3 * rest {
            push(sh[rest_sh_index(j, rest)]);
        }
        push(g.opacity_logit);
        g.log_scale.iter().for_each(|&v| push(v));
        g.rotation.iter().for_each(|&v| push(v));
    }
    out
}
