//! Decoder for 3D Gaussian Splatting PLY files in the Inria layout.
//!
//! Pure Rust on byte slices (no Bevy), so it can be fuzzed on its own: ply-rs parses
//! the header, then the body is decoded in one pass with per-property offsets worked
//! out up front. Binary (either byte order) and ASCII bodies are supported; properties
//! may come in any order and any scalar type; unknown properties and other elements are
//! skipped.

mod ascii;
mod binary;
mod error;
mod header;
mod layout;
mod output;

pub use error::PlyError;

use header::Encoding;
use layout::VertexLayout;

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
    /// 0..=3, from an `f_rest` count of 0/9/24/45.
    pub sh_degree: u8,
    /// 3 * (deg+1)^2 floats per splat, coefficient-major: for splat i, coefficient k
    /// (k = 0 is f_dc), channel c: `sh[i * stride + 3 * k + c]`. (The PLY stores
    /// `f_rest` channel-major; this is the transpose.)
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
        layout::sh_stride(self.sh_degree)
    }
}

/// Decodes a whole PLY file held in memory.
pub fn decode(bytes: &[u8]) -> Result<DecodedSplats, PlyError> {
    let header = header::parse(bytes)?;
    let vertex_index = header
        .elements
        .iter()
        .position(|e| e.name == "vertex")
        .ok_or(PlyError::NoVertexElement)?;
    let vertex = &header.elements[vertex_index];
    let before = &header.elements[..vertex_index];
    let layout = VertexLayout::new(vertex)?;
    let body = &bytes[header.body_offset..];
    match header.encoding {
        Encoding::Ascii => ascii::decode(body, header.lines, before, vertex, &layout),
        Encoding::BinaryLittleEndian => {
            binary::decode(bytes.len(), body, before, vertex, &layout, false)
        }
        Encoding::BinaryBigEndian => {
            binary::decode(bytes.len(), body, before, vertex, &layout, true)
        }
    }
}
