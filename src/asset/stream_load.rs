//! Loading a `.rad` as a stream: its header and first chunk only, read by seeking
//! (the whole file is read only from a source that cannot seek).

use bevy::asset::LoadContext;
use bevy::asset::io::Reader;
use bevy::log::info;
use bevy::tasks::futures_lite::{AsyncReadExt, AsyncSeekExt};

use super::beside::BesideError;
use super::formats::rad::{self, RadError, RadStreamIndex};
use super::splats::GaussianSplats;
use super::stream::{SplatStreamSource, byte_range};

/// Why a stream's head did not load (the loader names it as it names any failure).
#[derive(Debug)]
pub(crate) enum HeadError {
    Io(std::io::Error),
    Rad(RadError),
    Beside(BesideError),
}

impl From<std::io::Error> for HeadError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

/// The asset of a streamed `.rad`: its first chunk's nodes, and the source the rest
/// streams from.
pub(crate) async fn load_stream_head(
    reader: &mut dyn Reader,
    load_context: &mut LoadContext<'_>,
) -> Result<GaussianSplats, HeadError> {
    let decode = HeadError::Rad;
    let (mut index, head_bytes) = match reader.seekable() {
        Ok(seekable) => {
            let mut prefix = [0u8; rad::HEADER_PREFIX_BYTES];
            seekable.read_exact(&mut prefix).await?;
            let header_len = rad::header_bytes(&prefix).map_err(decode)?;
            let mut header = vec![0u8; header_len as usize];
            header[..prefix.len()].copy_from_slice(&prefix);
            seekable.read_exact(&mut header[prefix.len()..]).await?;
            let index = RadStreamIndex::new(&header).map_err(decode)?;
            let location = index.location(0).map_err(decode)?;
            let head = match &location.file {
                Some(_) => None,
                None => {
                    seekable
                        .seek(std::io::SeekFrom::Start(location.offset))
                        .await?;
                    let mut bytes = vec![0u8; location.bytes as usize];
                    seekable.read_exact(&mut bytes).await?;
                    Some(bytes)
                }
            };
            (index, head)
        }
        Err(_) => {
            let mut bytes = Vec::new();
            reader.read_to_end(&mut bytes).await?;
            let header_len = rad::header_bytes(&bytes).map_err(decode)?;
            let header = bytes.get(..header_len as usize).unwrap_or(&bytes);
            let index = RadStreamIndex::new(header).map_err(decode)?;
            let location = index.location(0).map_err(decode)?;
            let head = match location.file {
                Some(_) => None,
                None => Some(slice_of(&bytes, location.offset, location.bytes)?),
            };
            (index, head)
        }
    };
    let head_bytes = match head_bytes {
        Some(bytes) => bytes,
        None => {
            let location = index.location(0).map_err(decode)?;
            let file = location.file.unwrap_or_default();
            let bytes = super::beside::read_beside(load_context, &file)
                .await
                .map_err(HeadError::Beside)?;
            slice_of(&bytes, location.offset, location.bytes)?
        }
    };
    let head = index.decode_first(&head_bytes).map_err(decode)?;
    info!(
        "{}: streaming {} nodes in {} chunks; the first holds {}",
        load_context.path(),
        index.nodes(),
        index.chunks(),
        head.nodes.len()
    );
    let source = SplatStreamSource {
        path: load_context.path().clone_owned(),
        index,
        head_children: head.children,
    };
    Ok(GaussianSplats::from(head.nodes).with_stream(source))
}

/// `bytes[offset..offset + len]`, or an error saying the file ends first.
fn slice_of(bytes: &[u8], offset: u64, len: u64) -> Result<Vec<u8>, HeadError> {
    byte_range(bytes, offset, len)
        .map(<[u8]>::to_vec)
        .ok_or_else(|| {
            HeadError::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "a chunk at {offset}..{} lies past the file's end",
                    offset.saturating_add(len)
                ),
            ))
        })
}
