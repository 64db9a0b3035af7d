//! Version 4: a raw 32-byte NGSP header, optional extension records up to the table of
//! contents, the TOC (one little-endian `u64` compressed size and `u64` uncompressed
//! size per stream), then the streams back to back, each one zstd frame. Streams come
//! in attribute order (positions, alphas, colours, scales, rotations, SH), and an
//! attribute with no bytes (SH at degree 0, everything when there are no splats) has no
//! stream at all.

use std::io::Read;

use ruzstd::decoding::StreamingDecoder;

use super::error::{Attribute, Section, SpzError, TocProblem};
use super::header::{Layout, NGSP_HEADER_LEN, NgspHeader, parse_ngsp};

const TOC_ENTRY_LEN: u64 = 16;

/// zstd's largest expansion: every block has a 3-byte header and at least one more
/// byte, and yields at most 128 KiB.
const ZSTD_MAX_RATIO: u64 = 32 * 1024;

/// A start on each stream's buffer; it grows only as data actually arrives.
const INITIAL_EXPANSION: usize = 16;

pub(crate) struct Streams {
    pub header: NgspHeader,
    pub layout: Layout,
    /// One buffer per attribute, in `Attribute::ALL` order; empty when it has no stream.
    pub data: [Vec<u8>; 6],
    /// The bytes between the header and the TOC when the header flags extensions.
    pub extensions: Vec<u8>,
}

struct TocEntry {
    attribute: Attribute,
    start: usize,
    compressed: usize,
    uncompressed: u64,
}

fn u64_at(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    if let Some(src) = bytes.first_chunk::<8>() {
        word = *src;
    }
    u64::from_le_bytes(word)
}

pub(crate) fn read(file: &[u8]) -> Result<Streams, SpzError> {
    let Some(header_bytes) = file.first_chunk::<NGSP_HEADER_LEN>() else {
        return Err(SpzError::Truncated {
            section: Section::Header,
            expected: NGSP_HEADER_LEN as u64,
            got: file.len() as u64,
        });
    };
    let header = parse_ngsp(header_bytes)?;
    let layout = Layout::new(&header.common);
    let toc = table_of_contents(file, &header, &layout)?;

    let mut data: [Vec<u8>; 6] = Default::default();
    for entry in &toc {
        let slot = Attribute::ALL
            .iter()
            .position(|&a| a == entry.attribute)
            .and_then(|i| data.get_mut(i));
        if let Some(slot) = slot {
            *slot = decompress(file, entry)?;
        }
    }

    let extensions = if layout.has_extensions {
        file.get(NGSP_HEADER_LEN..header.toc_offset as usize)
            .unwrap_or_default()
            .to_vec()
    } else {
        Vec::new()
    };
    Ok(Streams {
        header,
        layout,
        data,
        extensions,
    })
}

fn table_of_contents(
    file: &[u8],
    header: &NgspHeader,
    layout: &Layout,
) -> Result<Vec<TocEntry>, SpzError> {
    let file_len = file.len() as u64;
    if (header.toc_offset as usize) < NGSP_HEADER_LEN {
        return Err(SpzError::TocInconsistent(TocProblem::OffsetInsideHeader {
            offset: header.toc_offset,
        }));
    }
    let attributes: Vec<Attribute> = Attribute::ALL
        .into_iter()
        .filter(|&a| layout.stream_len(a) > 0)
        .collect();
    if usize::from(header.num_streams) != attributes.len() {
        return Err(SpzError::TocInconsistent(TocProblem::StreamCount {
            found: header.num_streams,
            expected: attributes.len() as u8,
        }));
    }
    let toc_start = u64::from(header.toc_offset);
    let toc_len = TOC_ENTRY_LEN * u64::from(header.num_streams);
    if toc_start > file_len {
        return Err(SpzError::TocInconsistent(TocProblem::OutsideFile {
            toc_end: toc_start + toc_len,
            file_len,
        }));
    }
    let toc_end = toc_start + toc_len;
    let toc_range = usize::try_from(toc_start)
        .ok()
        .zip(usize::try_from(toc_end).ok());
    let Some(toc_bytes) = toc_range.and_then(|(start, end)| file.get(start..end)) else {
        return Err(SpzError::Truncated {
            section: Section::Toc,
            expected: toc_len,
            got: file_len - toc_start,
        });
    };

    let mut cursor = toc_end;
    let mut entries = Vec::with_capacity(attributes.len());
    for (&attribute, raw) in attributes.iter().zip(toc_bytes.chunks_exact(16)) {
        let compressed = u64_at(raw);
        let uncompressed = u64_at(raw.get(8..).unwrap_or_default());
        let expected = layout.stream_len(attribute);
        if uncompressed != expected {
            return Err(SpzError::TocInconsistent(TocProblem::StreamSize {
                attribute,
                found: uncompressed,
                expected,
            }));
        }
        let available = file_len - cursor;
        if compressed > available {
            return Err(SpzError::Truncated {
                section: Section::Attribute(attribute),
                expected: compressed,
                got: available,
            });
        }
        layout.ensure_expandable(uncompressed, compressed, ZSTD_MAX_RATIO)?;
        // Both fit: cursor + compressed <= file_len, itself a usize.
        entries.push(TocEntry {
            attribute,
            start: usize::try_from(cursor).unwrap_or(usize::MAX),
            compressed: usize::try_from(compressed).unwrap_or(0),
            uncompressed,
        });
        cursor += compressed;
    }
    Ok(entries)
}

fn decompress(file: &[u8], entry: &TocEntry) -> Result<Vec<u8>, SpzError> {
    let zstd_error = |message: String| SpzError::Zstd {
        attribute: entry.attribute,
        message,
    };
    let source = file
        .get(entry.start..entry.start.saturating_add(entry.compressed))
        .unwrap_or_default();
    let mut decoder = StreamingDecoder::new(source).map_err(|e| zstd_error(e.to_string()))?;
    let capacity = usize::try_from(entry.uncompressed)
        .unwrap_or(usize::MAX)
        .min(entry.compressed.saturating_mul(INITIAL_EXPANSION))
        .max(64);
    let mut out = Vec::with_capacity(capacity);
    // One byte more than declared, to notice a frame that holds too much.
    (&mut decoder)
        .take(entry.uncompressed + 1)
        .read_to_end(&mut out)
        .map_err(|e| zstd_error(e.to_string()))?;
    let got = out.len() as u64;
    if got < entry.uncompressed {
        return Err(SpzError::Truncated {
            section: Section::Attribute(entry.attribute),
            expected: entry.uncompressed,
            got,
        });
    }
    if got > entry.uncompressed {
        return Err(zstd_error(format!(
            "the frame holds more than the {} bytes the table of contents declares",
            entry.uncompressed
        )));
    }
    Ok(out)
}
