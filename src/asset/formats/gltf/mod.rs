//! glTF 2.0 and GLB files carrying 3D Gaussian splats: the ratified
//! `KHR_gaussian_splatting` (uncompressed accessors), its SPZ compression extension
//! `KHR_gaussian_splatting_compression_spz_2`, and the drafts before them (the
//! primitive-level `KHR_spz_gaussian_splats_compression`, `_`-prefixed attribute
//! names, log-space SCALE).
//!
//! Loading is two steps so an async caller can fetch external buffers between them:
//! [`parse`] the file, fetch each of [`GltfDocument::external_buffers`], then
//! [`decode`] with a lookup for those bytes. [`write_glb`] writes splats back.
//!
//! The splats of a node are in that node's local frame, glTF's own (+Y up), not the
//! RDF frame the PLY and SPZ decoders hand over. `NOTES.md` beside this file
//! records which source each rule comes from.

mod accessors;
mod activation;
mod attribute_read;
mod attributes;
mod buffers;
mod color;
mod compressed;
mod decode;
mod document;
mod error;
mod exact;
mod extensions;
mod glb;
mod notes;
mod scene;
mod sh;
mod source;
mod splats;
mod spz_frame;
mod transform;
mod uri;
mod writer;

pub use activation::ScaleEncoding;
pub use decode::{
    DEFAULT_MAX_SCENE_SPLATS, DecodeOptions, SplatNode, SplatScene, decode, decode_with,
};
pub use error::{GltfError, Kind, Site};
pub use extensions::{KHR_GAUSSIAN_SPLATTING, KHR_SPZ_2, KHR_SPZ_LEGACY, KHR_SPZ_UNVERSIONED};
pub use notes::Note;
pub use source::{GltfDocument, parse};
pub use splats::MAX_SPLATS_PER_PRIMITIVE;
pub use transform::MatrixFit;
pub use writer::{WriteOptions, write_glb, write_glb_with};

/// Parses and decodes a self-contained file (a GLB, or a .gltf whose buffers are all
/// data URIs); a reference to an external file fails with `MissingExternalBuffer`.
pub fn decode_bytes(bytes: &[u8]) -> Result<SplatScene, GltfError> {
    let doc = parse(bytes)?;
    decode(&doc, &|_| None)
}
