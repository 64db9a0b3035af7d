//! What every format decoder produces: the splats of one file, laid out the way the
//! GPU reads them, with values as trained (no activation applied).

/// GPU-ready geometry of one splat, as stored in the file (no activation applied).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SplatGeometry {
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
    pub geometry: Vec<SplatGeometry>,
    /// 0..=3.
    pub sh_degree: u8,
    /// 3 * (deg+1)^2 floats per splat, coefficient-major: for splat i, coefficient k
    /// (k = 0 is Inria's `f_dc`), channel c: `sh[i * stride + 3 * k + c]`; the rest in
    /// Inria's coefficient order.
    pub sh: Vec<f32>,
    /// Splats with any NaN/Inf value (they load; the renderer culls them).
    pub non_finite: usize,
}

impl DecodedSplats {
    pub fn len(&self) -> usize {
        self.geometry.len()
    }

    pub fn is_empty(&self) -> bool {
        self.geometry.is_empty()
    }

    /// SH floats per splat: `3 * (sh_degree + 1)^2`.
    pub fn sh_stride(&self) -> usize {
        sh_stride(self.sh_degree)
    }
}

/// Floats of SH data per splat at `degree`: `3 * (degree + 1)²`.
pub(crate) fn sh_stride(degree: u8) -> usize {
    let coefficients = (degree as usize + 1) * (degree as usize + 1);
    3 * coefficients
}
