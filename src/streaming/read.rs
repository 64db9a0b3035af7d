//! Fetching one chunk: a ranged read of its file through the asset server (a seek and
//! a read where the source can seek, the whole file otherwise), then its decoding.

use std::io::SeekFrom;
use std::sync::Arc;

use bevy::asset::{AssetPath, AssetServer};
use bevy::tasks::futures_lite::{AsyncReadExt, AsyncSeekExt};

use crate::asset::SplatStreamSource;
use crate::asset::formats::rad::RadChunk;
use crate::asset::stream::byte_range;

/// Reads and decodes chunk `chunk` of `source`; the error names the file and why.
pub(super) async fn fetch_chunk(
    server: AssetServer,
    source: Arc<SplatStreamSource>,
    chunk: usize,
) -> Result<(RadChunk, u64), String> {
    let location = source.index.location(chunk).map_err(|e| e.to_string())?;
    let path = match &location.file {
        Some(file) => source
            .path
            .resolve_embed_str(file)
            .map_err(|e| format!("{file}: {e}"))?,
        None => source.path.clone(),
    };
    let bytes = read_range(&server, &path, location.offset, location.bytes)
        .await
        .map_err(|e| format!("{path}: {e}"))?;
    let decoded = source
        .index
        .decode_chunk(chunk, &bytes)
        .map_err(|e| format!("{path}: {e}"))?;
    Ok((decoded, location.bytes))
}

/// Bytes `offset..offset + len` of `path` (`len` already bounded by the caller).
async fn read_range(
    server: &AssetServer,
    path: &AssetPath<'static>,
    offset: u64,
    len: u64,
) -> Result<Vec<u8>, String> {
    let source = server
        .get_source(path.source())
        .map_err(|e| e.to_string())?;
    let mut reader = source
        .reader()
        .read(path.path())
        .await
        .map_err(|e| e.to_string())?;
    let len = usize::try_from(len).map_err(|e| e.to_string())?;
    match reader.seekable() {
        Ok(seekable) => {
            seekable
                .seek(SeekFrom::Start(offset))
                .await
                .map_err(|e| e.to_string())?;
            let mut bytes = vec![0; len];
            seekable
                .read_exact(&mut bytes)
                .await
                .map_err(|e| format!("bytes {offset}..+{len}: {e}"))?;
            Ok(bytes)
        }
        Err(_) => {
            let mut all = Vec::new();
            reader
                .read_to_end(&mut all)
                .await
                .map_err(|e| e.to_string())?;
            byte_range(&all, offset, len as u64)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| format!("bytes {offset}..+{len} lie past its end ({})", all.len()))
        }
    }
}
