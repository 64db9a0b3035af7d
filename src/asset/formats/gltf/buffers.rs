//! Buffer and bufferView bytes, checked against their declared lengths before any
//! accessor reads them.

use super::document::Root;
use super::error::{GltfError, Kind, get};
use super::source::{BufferSource, GltfDocument};

/// The bytes of every buffer the splats read, each cut to its declared `byteLength`.
pub(crate) struct Buffers<'x> {
    data: Vec<Option<&'x [u8]>>,
}

impl<'x> Buffers<'x> {
    /// Resolves the document's buffers, asking `fetch` for external files.
    pub(crate) fn resolve<'b: 'x>(
        doc: &'x GltfDocument<'_>,
        fetch: &dyn Fn(&str) -> Option<&'b [u8]>,
    ) -> Result<Self, GltfError> {
        let data = doc
            .buffers
            .iter()
            .zip(&doc.root.buffers)
            .enumerate()
            .map(|(index, (source, declared))| {
                let bytes: &'x [u8] = match source {
                    BufferSource::Unused => return Ok(None),
                    BufferSource::Missing => {
                        return Err(GltfError::MissingBinChunk { buffer: index });
                    }
                    BufferSource::Bin => doc.bin.unwrap_or_default(),
                    BufferSource::Embedded(data) => data,
                    BufferSource::External(uri) => {
                        fetch(uri).ok_or_else(|| GltfError::MissingExternalBuffer {
                            buffer: index,
                            uri: uri.clone(),
                        })?
                    }
                };
                let declared_len = declared.byte_length;
                // The GLB binary chunk may be padded past byteLength; shorter is a
                // truncated file.
                let cut = usize::try_from(declared_len)
                    .ok()
                    .and_then(|len| bytes.get(..len))
                    .ok_or(GltfError::BufferTooShort {
                        buffer: index,
                        declared: declared_len,
                        actual: bytes.len() as u64,
                    })?;
                Ok(Some(cut))
            })
            .collect::<Result<_, _>>()?;
        Ok(Buffers { data })
    }

    /// The bytes of bufferView `index` and its byteStride.
    pub(crate) fn view(
        &self,
        root: &Root,
        index: usize,
        referrer: impl FnOnce() -> String,
    ) -> Result<View<'x>, GltfError> {
        let view = get(&root.buffer_views, Kind::BufferView, index, referrer)?;
        let buffer = self
            .data
            .get(view.buffer)
            .copied()
            .flatten()
            .ok_or_else(|| {
                GltfError::index(
                    Kind::Buffer,
                    view.buffer,
                    root.buffers.len(),
                    format!("bufferView {index}"),
                )
            })?;
        let end = view.byte_offset.checked_add(view.byte_length);
        let bytes = end
            .and_then(|end| {
                let start = usize::try_from(view.byte_offset).ok()?;
                buffer.get(start..usize::try_from(end).ok()?)
            })
            .ok_or(GltfError::BufferViewOutOfBounds {
                view: index,
                end: end.unwrap_or(u64::MAX),
                buffer_len: buffer.len() as u64,
            })?;
        Ok(View {
            index,
            bytes,
            stride: view.byte_stride,
        })
    }
}

/// One bufferView's bytes.
#[derive(Clone, Copy)]
pub(crate) struct View<'x> {
    pub index: usize,
    pub bytes: &'x [u8],
    pub stride: Option<u64>,
}
