//! Decoder for 3D Gaussian Splatting PLY files in the Inria layout.
//!
//! Pure Rust on byte slices (no Bevy), so it can be fuzzed on its own: ply-rs parses
//! the header, then the body is decoded in one pass with per-property offsets worked
//! out up front. Binary (either byte order) and ASCII bodies are supported; properties
//! may come in any order and any scalar type; unknown properties and other elements are
//! skipped.

mod ascii;
mod binary;
mod compressed;
mod error;
mod header;
mod layout;
mod output;
mod write;

pub use error::PlyError;
pub use write::write;

use crate::asset::decoded::DecodedSplats;

use header::Encoding;
use layout::VertexLayout;

/// Decodes a whole PLY file held in memory.
pub fn decode(bytes: &[u8]) -> Result<DecodedSplats, PlyError> {
    let header = header::parse(bytes)?;
    if compressed::is_compressed(&header) {
        return compressed::decode(bytes, &header);
    }
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
