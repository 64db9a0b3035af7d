//! Versions 1–3: the whole file is one gzip member holding the 16-byte header and then
//! the attribute arrays back to back (positions, alphas, colours, scales, rotations, SH),
//! optionally followed by extension records.
//!
//! Only the first member is read, and bytes after it are ignored: real files carry
//! stray bytes after the trailer, which a multi-member reader rejects. Decompression
//! stops once the header's counts are satisfied (plus a small tail), so a gzip bomb
//! costs at most what its header claims, and that claim is bounded first.

use std::io::{self, Read};

use flate2::bufread::GzDecoder;

use super::error::{Attribute, Section, SpzError};
use super::header::{Header, LEGACY_HEADER_LEN, Layout, parse_legacy};

/// Deflate's largest expansion: a 258-byte match costs at least 2 bits, so one input
/// byte yields at most about 1032 output bytes.
const DEFLATE_MAX_RATIO: u64 = 1032;

/// How far past the attributes to read: enough to reach the member's end (so its CRC
/// is checked) and to collect extension records, bounded so a bomb's tail is not read.
const TAIL_MARGIN: u64 = 64 * 1024;

/// A start on the payload buffer; it grows only as data actually arrives.
const INITIAL_EXPANSION: usize = 8;

pub(crate) struct Inflated {
    pub header: Header,
    pub layout: Layout,
    /// Exactly `layout.payload_len()` bytes.
    pub payload: Vec<u8>,
    /// Up to `TAIL_MARGIN` bytes after the attributes: extension records, if any.
    pub tail: Vec<u8>,
}

/// Reads until `buf` is full or the stream ends, reporting how far it got.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(buf.get_mut(filled..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (filled, Some(e)),
        }
    }
    (filled, None)
}

/// The attribute a payload cut short at `got` bytes stops in.
fn attribute_at(layout: &Layout, got: u64) -> Attribute {
    let mut end = 0;
    for attribute in Attribute::ALL {
        end += layout.stream_len(attribute);
        if got < end {
            return attribute;
        }
    }
    Attribute::Sh
}

pub(crate) fn inflate(file: &[u8]) -> Result<Inflated, SpzError> {
    let mut gz = GzDecoder::new(file);

    let mut header_bytes = [0u8; LEGACY_HEADER_LEN];
    let (got, err) = read_full(&mut gz, &mut header_bytes);
    match err {
        Some(e) if e.kind() != io::ErrorKind::UnexpectedEof => {
            return Err(SpzError::Gzip(e.to_string()));
        }
        _ if got < LEGACY_HEADER_LEN => {
            return Err(SpzError::Truncated {
                section: Section::Header,
                expected: LEGACY_HEADER_LEN as u64,
                got: got as u64,
            });
        }
        _ => {}
    }
    let header = parse_legacy(&header_bytes)?;
    let layout = Layout::new(&header);

    let payload_len = layout.payload_len();
    layout.ensure_expandable(
        payload_len + LEGACY_HEADER_LEN as u64,
        file.len() as u64,
        DEFLATE_MAX_RATIO,
    )?;
    let capacity = usize::try_from(payload_len)
        .map_err(|_| SpzError::CountExceedsData {
            num_points: header.num_points,
            needed: payload_len,
            available: file.len() as u64,
        })?
        .min(file.len().saturating_mul(INITIAL_EXPANSION));
    let mut payload = Vec::with_capacity(capacity);
    let result = (&mut gz).take(payload_len).read_to_end(&mut payload);
    let got = payload.len() as u64;
    match result {
        Err(e) if e.kind() != io::ErrorKind::UnexpectedEof => {
            return Err(SpzError::Gzip(e.to_string()));
        }
        _ if got < payload_len => {
            return Err(SpzError::Truncated {
                section: Section::Attribute(attribute_at(&layout, got)),
                expected: payload_len,
                got,
            });
        }
        _ => {}
    }

    let mut tail = Vec::new();
    if let Err(e) = (&mut gz).take(TAIL_MARGIN).read_to_end(&mut tail) {
        return Err(if e.kind() == io::ErrorKind::UnexpectedEof {
            SpzError::GzipTrailerMissing {
                payload: payload_len,
            }
        } else {
            SpzError::Gzip(e.to_string())
        });
    }
    Ok(Inflated {
        header,
        layout,
        payload,
        tail,
    })
}

/// Whether a gzip member's first four decompressed bytes are the NGSP magic.
pub(crate) fn starts_with_ngsp(file: &[u8]) -> bool {
    let mut magic = [0u8; 4];
    let (got, _) = read_full(&mut GzDecoder::new(file), &mut magic);
    got == magic.len() && u32::from_le_bytes(magic) == super::header::NGSP_MAGIC
}
