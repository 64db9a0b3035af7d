//! The GLB container (glTF 2.0 spec §4.4): a 12-byte header, a JSON chunk, and an
//! optional binary chunk that stands for buffer 0.

use super::error::GltfError;

pub(crate) const MAGIC: [u8; 4] = *b"glTF";
const VERSION: u32 = 2;
const HEADER_LEN: usize = 12;
const CHUNK_HEADER_LEN: usize = 8;
pub(crate) const CHUNK_JSON: u32 = 0x4E4F_534A;
pub(crate) const CHUNK_BIN: u32 = 0x004E_4942;

/// The two chunks a GLB's readers use.
pub(crate) struct Chunks<'a> {
    pub json: &'a [u8],
    pub bin: Option<&'a [u8]>,
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let word = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(word.try_into().ok()?))
}

/// Splits a GLB into its JSON and BIN chunks. Chunks of unknown type are skipped, as
/// the spec asks; the first BIN chunk is the one buffer 0 refers to.
pub(crate) fn split(bytes: &[u8]) -> Result<Chunks<'_>, GltfError> {
    let file_len = bytes.len() as u64;
    let (Some(version), Some(declared)) = (u32_at(bytes, 4), u32_at(bytes, 8)) else {
        return Err(GltfError::GlbLength {
            declared: HEADER_LEN as u64,
            actual: file_len,
        });
    };
    if version != VERSION {
        return Err(GltfError::UnsupportedGlbVersion(version));
    }
    // Bytes after the declared length are ignored rather than refused: the header is
    // what the writer meant, and trailing padding does no harm.
    if u64::from(declared) > file_len || (declared as usize) < HEADER_LEN {
        return Err(GltfError::GlbLength {
            declared: declared.into(),
            actual: file_len,
        });
    }
    let body = &bytes[..declared as usize];

    let mut json = None;
    let mut bin = None;
    let mut offset = HEADER_LEN;
    let mut index = 0;
    while offset < body.len() {
        let (Some(length), Some(kind)) = (u32_at(body, offset), u32_at(body, offset + 4)) else {
            return Err(GltfError::GlbChunkPastEnd {
                index,
                offset: offset as u64,
                length: CHUNK_HEADER_LEN as u64,
                file_len: body.len() as u64,
            });
        };
        let start = offset + CHUNK_HEADER_LEN;
        let data = start
            .checked_add(length as usize)
            .and_then(|end| body.get(start..end))
            .ok_or(GltfError::GlbChunkPastEnd {
                index,
                offset: offset as u64,
                length: length.into(),
                file_len: body.len() as u64,
            })?;
        if index == 0 && kind != CHUNK_JSON {
            return Err(GltfError::GlbFirstChunkNotJson { found: kind });
        }
        match kind {
            CHUNK_JSON if json.is_none() => json = Some(data),
            CHUNK_BIN if bin.is_none() => bin = Some(data),
            _ => {}
        }
        // Chunks are 4-byte aligned; a writer that forgot the padding still has its
        // next chunk right after the data, so step by the real length.
        offset = start + data.len();
        index += 1;
    }
    let json = json.ok_or(GltfError::GlbChunkPastEnd {
        index: 0,
        offset: HEADER_LEN as u64,
        length: CHUNK_HEADER_LEN as u64,
        file_len: body.len() as u64,
    })?;
    Ok(Chunks { json, bin })
}

/// Pads `data` to a multiple of four bytes with `fill`, as GLB chunks must be.
pub(crate) fn pad4(data: &mut Vec<u8>, fill: u8) {
    while !data.len().is_multiple_of(4) {
        data.push(fill);
    }
}

/// Assembles a GLB from a JSON text and a binary chunk.
pub(crate) fn assemble(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let mut json = json.to_vec();
    pad4(&mut json, b' ');
    let mut bin = bin.to_vec();
    pad4(&mut bin, 0);
    let total = HEADER_LEN + CHUNK_HEADER_LEN + json.len() + CHUNK_HEADER_LEN + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    for (kind, data) in [(CHUNK_JSON, &json), (CHUNK_BIN, &bin)] {
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(data);
    }
    out
}
