//! The byte framing of a `.rad` file: a `RAD0` header (magic, JSON length, JSON, zero
//! padding to 8 bytes) followed by `RADC` chunks (magic, JSON length, JSON, padding,
//! the payload's length as a u64, then each property's blob padded to 8 bytes).
//! Blobs marked `gz` are raw DEFLATE streams (no zlib or gzip wrapper).

use std::io::Read;

use flate2::read::DeflateDecoder;
use serde::de::DeserializeOwned;

use super::error::RadError;
use super::meta::{ChunkMeta, FileMeta, PropertyMeta};

/// `RAD0`, little-endian.
pub const FILE_MAGIC: [u8; 4] = *b"RAD0";
/// `RADC`, little-endian.
pub const CHUNK_MAGIC: [u8; 4] = *b"RADC";

/// Deflate's largest expansion: a 258-byte match costs at least 2 bits.
const DEFLATE_MAX_RATIO: u64 = 1032;

/// `n` rounded up to a multiple of 8.
pub fn padded(n: u64) -> u64 {
    n.div_ceil(8) * 8
}

/// A parsed header and where its chunks start.
pub struct Header {
    pub meta: FileMeta,
    /// The byte after the header's padding: chunk offsets count from here.
    pub chunks_start: u64,
}

/// A chunk's JSON and the slice its property offsets count from.
pub struct Chunk<'a> {
    pub meta: ChunkMeta,
    pub payload: &'a [u8],
}

/// `bytes[at..at + len]`, or an error naming `what` ends early.
fn slice<'a>(
    bytes: &'a [u8],
    at: u64,
    len: u64,
    what: &dyn Fn() -> String,
) -> Result<&'a [u8], RadError> {
    let end = at.checked_add(len);
    match end.and_then(|end| bytes.get(usize::try_from(at).ok()?..usize::try_from(end).ok()?)) {
        Some(s) => Ok(s),
        None => Err(RadError::Truncated {
            what: what(),
            at,
            needed: len,
            len: bytes.len() as u64,
        }),
    }
}

/// Magic, a u32 length, then that much JSON: the JSON parsed, and the offset after its
/// padding.
fn framed_json<T: DeserializeOwned>(
    bytes: &[u8],
    at: u64,
    magic: [u8; 4],
    what: &dyn Fn() -> String,
) -> Result<(T, u64), RadError> {
    let head = slice(bytes, at, 8, what)?;
    if head[..4] != magic {
        return Err(RadError::BadMagic);
    }
    let len = u64::from(u32::from_le_bytes([head[4], head[5], head[6], head[7]]));
    let json = slice(bytes, at + 8, len, what)?;
    let meta = serde_json::from_slice(json).map_err(|e| RadError::Json {
        what: what(),
        message: e.to_string(),
    })?;
    Ok((meta, at + 8 + padded(len)))
}

/// The header of a `.rad` file.
pub fn parse_header(bytes: &[u8]) -> Result<Header, RadError> {
    let (meta, chunks_start): (FileMeta, u64) =
        framed_json(bytes, 0, FILE_MAGIC, &|| "header".to_owned())?;
    if meta.version != super::meta::VERSION {
        return Err(RadError::Unsupported {
            what: "the header's version",
            found: meta.version.to_string(),
            expected: "1",
        });
    }
    if meta.kind != "gsplat" {
        return Err(RadError::Unsupported {
            what: "the header's type",
            found: format!("{:?}", meta.kind),
            expected: "\"gsplat\"",
        });
    }
    Ok(Header { meta, chunks_start })
}

/// Chunk `index`, starting at `at` in `bytes`.
pub fn parse_chunk(bytes: &[u8], at: u64, index: usize) -> Result<Chunk<'_>, RadError> {
    let what = || format!("chunk {index}");
    let (meta, after_json): (ChunkMeta, u64) = framed_json(bytes, at, CHUNK_MAGIC, &what)?;
    let length = slice(bytes, after_json, 8, &what)?;
    let payload_bytes = u64::from_le_bytes(std::array::from_fn(|i| length[i]));
    let payload = slice(bytes, after_json + 8, payload_bytes, &what)?;
    Ok(Chunk { meta, payload })
}

/// A property's data, inflated if it is compressed: exactly `expected` bytes, or an
/// error. Inflating stops one byte past `expected`, so a deflate bomb costs no more
/// than the count its chunk claims (which is bounded).
pub fn property_data(
    chunk: &Chunk<'_>,
    property: &PropertyMeta,
    index: usize,
    expected: u64,
) -> Result<Vec<u8>, RadError> {
    let stored = slice(chunk.payload, property.offset, property.bytes, &|| {
        format!("chunk {index}'s {} data", property.property)
    })?;
    let data = match property.compression.as_deref() {
        None => stored.to_vec(),
        Some("gz") => {
            // Deflate expands a byte to at most ~1032: a claim beyond that is refused
            // before inflating, and the buffer starts small and grows as data comes.
            if expected > (stored.len() as u64).saturating_mul(DEFLATE_MAX_RATIO) + 64 {
                return Err(RadError::Unexpandable {
                    chunk: index,
                    property: property.property.clone(),
                    stored: stored.len() as u64,
                    expected,
                });
            }
            let capacity = expected.min(stored.len() as u64 * 8) as usize;
            let mut out = Vec::with_capacity(capacity);
            DeflateDecoder::new(stored)
                .take(expected + 1)
                .read_to_end(&mut out)
                .map_err(|e| RadError::Inflate {
                    chunk: index,
                    property: property.property.clone(),
                    message: e.to_string(),
                })?;
            out
        }
        Some(other) => {
            return Err(RadError::BadEncoding {
                chunk: index,
                property: property.property.clone(),
                encoding: format!("{} compressed as {other:?}", property.encoding),
            });
        }
    };
    if data.len() as u64 != expected {
        return Err(RadError::PropertySize {
            chunk: index,
            property: property.property.clone(),
            expected,
            got: data.len() as u64,
        });
    }
    Ok(data)
}
