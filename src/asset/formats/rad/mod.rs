//! Spark's `.rad` files (sparkjsdev/spark): splats in chunks of 65,536, each property
//! its own DEFLATE-compressed blob in one of several encodings (f32, f16, byte planes,
//! 8-bit ranges with deltas, logarithmic scales, octahedral quaternions), and
//! optionally a level-of-detail tree over them (`child_start`/`child_count` per splat,
//! rooted at splat 0). A JSON header lists every chunk's byte range, so a viewer can
//! fetch chunks with HTTP Range requests, coarsest first.
//!
//! Learned from Spark's `rust/spark-lib/src/rad.rs` and `splat_encode.rs` and checked
//! against files its `build-lod` tool writes, decoded by its own reader
//! (`tests/data/rad/README.md`). Values are stored activated (linear opacity and
//! scales, the base colour `0.5 + C0·f_dc`, `[x, y, z, w]` quaternions); this module
//! turns them into the crate's layout.

mod container;
mod decode;
mod encoding;
mod error;
mod meta;
mod parallel;
mod stream;
mod write;

pub use decode::{MAX_CHUNK_SPLATS, RadSplats, decode_nodes, decode_nodes_with};
pub use error::RadError;
pub use stream::{ChunkLocation, HEADER_PREFIX_BYTES, RadChunk, RadStreamIndex, header_bytes};
pub use write::{RadEncoding, write, write_chunked};

use crate::asset::decoded::DecodedSplats;

/// Whether `bytes` start like a `.rad` file.
pub fn is_rad(bytes: &[u8]) -> bool {
    bytes.starts_with(&container::FILE_MAGIC)
}

/// Decodes a single-file `.rad` to its leaves: the splats as trained, the file's
/// finest level, without the interior nodes of its tree.
pub fn decode(bytes: &[u8]) -> Result<DecodedSplats, RadError> {
    Ok(decode_nodes(bytes)?.leaves())
}

/// The chunk files a chunked `.rad` header names (empty for a single file), in order.
pub fn chunk_files(bytes: &[u8]) -> Result<Vec<String>, RadError> {
    let header = container::parse_header(bytes)?;
    let mut names: Vec<String> = Vec::new();
    for name in header.meta.chunks.into_iter().filter_map(|c| c.filename) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}
