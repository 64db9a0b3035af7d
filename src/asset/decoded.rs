//! What every format decoder produces: the splats of one file, laid out the way the
//! GPU reads them, with values as trained (no activation applied).

/// GPU-ready geometry of one splat, as stored in the file (no activation applied).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SplatGeometry {
    /// `x, y, z`: the centre, in the file's frame.
    pub position: [f32; 3],
    /// `opacity` (a logit).
    pub opacity_logit: f32,
    /// `rot_0..3` = w, x, y, z, NOT normalised.
    pub rotation: [f32; 4],
    /// `scale_0..2` (logs).
    pub log_scale: [f32; 3],
    /// 0.0
    pub _pad: f32,
}

/// The splats of one file.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodedSplats {
    /// One per splat, in the file's order.
    pub geometry: Vec<SplatGeometry>,
    /// 0..=3.
    pub sh_degree: u8,
    /// 3 * (deg+1)^2 floats per splat, coefficient-major: for splat i, coefficient k
    /// (k = 0 is Inria's `f_dc`), channel c: `sh[i * stride + 3 * k + c]`; the rest in
    /// Inria's coefficient order.
    pub sh: Vec<f32>,
    /// Splats with any NaN/Inf value (they load; the renderer culls them).
    pub non_finite: usize,
    /// The file says the scene was trained with antialiasing (Mip-Splatting's 2-D
    /// filter, gsplat's `rasterize_mode="antialiased"`), so it should be drawn so.
    pub antialiased: bool,
}

impl DecodedSplats {
    /// Wraps decoded arrays, counting the splats that hold a NaN or an infinity.
    /// `sh` holds `sh_stride(sh_degree)` floats per splat.
    pub fn from_parts(
        geometry: Vec<SplatGeometry>,
        sh: Vec<f32>,
        sh_degree: u8,
        antialiased: bool,
    ) -> Self {
        let stride = sh_stride(sh_degree);
        let non_finite = geometry
            .iter()
            .zip(sh.chunks_exact(stride))
            .filter(|(g, sh)| {
                let geometry: &[f32; 12] = bytemuck::cast_ref(*g);
                !geometry.iter().chain(sh.iter()).all(|v| v.is_finite())
            })
            .count();
        Self {
            geometry,
            sh_degree,
            sh,
            non_finite,
            antialiased,
        }
    }

    /// The number of splats.
    pub fn len(&self) -> usize {
        self.geometry.len()
    }

    /// Whether there are no splats.
    pub fn is_empty(&self) -> bool {
        self.geometry.is_empty()
    }

    /// SH floats per splat: `3 * (sh_degree + 1)^2`.
    pub fn sh_stride(&self) -> usize {
        sh_stride(self.sh_degree)
    }
}

/// Floats of SH data per splat at `degree`: `3 * (degree + 1)²`.
pub fn sh_stride(degree: u8) -> usize {
    let coefficients = (degree as usize + 1) * (degree as usize + 1);
    3 * coefficients
}

/// Inria's SH basis constant of degree 0: colour = 0.5 + `SH_C0` · f_dc.
pub const SH_C0: f32 = 0.282_094_8;

/// The DC coefficient that gives `colour` (0..1) under the Inria convention.
pub fn f_dc_from_colour(colour: f32) -> f32 {
    (colour - 0.5) / SH_C0
}

/// Opacity as the logit the renderer takes. Quantised formats store 0 and 1, whose
/// logits are infinite; they are kept a millionth inside, which no 8-bit step can
/// tell apart, so every decoded value is finite.
/// (Worked in f64: in f32, 1 − α near 1 keeps only a few bits.)
pub fn opacity_logit(alpha: f32) -> f32 {
    let alpha = f64::from(alpha).clamp(1e-6, 1.0 - 1e-6);
    (alpha / (1.0 - alpha)).ln() as f32
}

/// A level-of-detail tree a file stores over its splats (Spark's `.rad`), in the
/// numbering [`crate::lod::SplatLodTree`] uses: nodes `0..leaves` are the file's
/// splats as loaded, interior node `leaves + i` is `interior[i]`, and every node's
/// children come before it. A camera with `SplatLod` draws cuts of this tree instead
/// of building one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DecodedTree {
    /// The interior nodes as splats (the crate's layout).
    pub interior: Vec<SplatGeometry>,
    /// Their SH coefficients, the leaves' stride.
    pub interior_sh: Vec<f32>,
    /// Per interior node, its children's range in `children`.
    pub child_ranges: Vec<[u32; 2]>,
    /// Children, node ids.
    pub children: Vec<u32>,
}
