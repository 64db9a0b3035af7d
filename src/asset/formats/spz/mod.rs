//! SPZ, Niantic's compressed Gaussian-splat format (nianticlabs/spz), versions 1–4.
//!
//! Versions 1–3 are one gzip member; version 4 is a raw NGSP header, a table of contents
//! and one zstd stream per attribute. Splats load converted from SPZ's RUB frame to the
//! RDF frame every bevy_splat decoder hands over.

mod attributes;
mod axes;
mod error;
mod extensions;
mod gzip;
mod header;
mod rotation;
mod v4;

pub use error::{Attribute, Container, Section, SpzError, TocProblem};
pub use extensions::ADOBE_COORDINATE_SYSTEM;
pub use header::MAX_POINTS;

use crate::asset::decoded::DecodedSplats;
use attributes::Packed;

/// What the file said about itself, for the caller to log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpzInfo {
    /// The format version, 1–4.
    pub version: u32,
    /// The splats the header declares.
    pub num_points: u32,
    /// The degree the file stores (0–4); the splats hold at most degree 3.
    pub stored_sh_degree: u8,
    /// The degree of the decoded splats.
    pub loaded_sh_degree: u8,
    /// Fractional bits of the 24-bit fixed-point positions (version 1 stores f16).
    pub fractional_bits: u8,
    /// Whether the scene was trained with antialiasing (the header's flag).
    pub antialiased: bool,
    /// The header flags extension records; they were skipped.
    pub has_extensions: bool,
    /// Type IDs of the extension records found (see `ADOBE_COORDINATE_SYSTEM`).
    pub extension_types: Vec<u32>,
}

impl SpzInfo {
    /// The file's SH degree 4 band was dropped (the caller should say so).
    pub fn dropped_sh_bands(&self) -> bool {
        self.stored_sh_degree > self.loaded_sh_degree
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Decodes an SPZ file of any version to splats in the RDF frame.
pub fn decode(bytes: &[u8]) -> Result<DecodedSplats, SpzError> {
    decode_with_info(bytes).map(|(splats, _)| splats)
}

/// Decodes an SPZ file and reports what its header said.
pub fn decode_with_info(bytes: &[u8]) -> Result<(DecodedSplats, SpzInfo), SpzError> {
    if bytes.is_empty() {
        return Err(SpzError::Empty);
    }
    if bytes.starts_with(&GZIP_MAGIC) {
        let inflated = gzip::inflate(bytes)?;
        let layout = &inflated.layout;
        let packed = split_payload(layout, &inflated.payload);
        let splats = attributes::unpack(layout, &packed)?;
        let extension_types = if layout.has_extensions {
            extensions::record_types(&inflated.tail)
        } else {
            Vec::new()
        };
        let info = info(inflated.header.version, layout, extension_types);
        return Ok((splats, info));
    }
    if bytes.starts_with(&header::NGSP_MAGIC.to_le_bytes()) {
        let streams = v4::read(bytes)?;
        let [positions, alphas, colors, scales, rotations, sh] = &streams.data;
        let packed = Packed {
            positions,
            alphas,
            colors,
            scales,
            rotations,
            sh,
        };
        let splats = attributes::unpack(&streams.layout, &packed)?;
        let extension_types = extensions::record_types(&streams.extensions);
        let info = info(
            streams.header.common.version,
            &streams.layout,
            extension_types,
        );
        return Ok((splats, info));
    }
    Err(SpzError::UnrecognizedContainer {
        found: bytes.iter().take(4).copied().collect(),
    })
}

/// Whether `bytes` hold SPZ by content: a gzip member whose payload starts with the
/// NGSP magic (v1–3), or the raw NGSP magic (v4).
pub fn is_spz(bytes: &[u8]) -> bool {
    bytes.starts_with(&header::NGSP_MAGIC.to_le_bytes())
        || (bytes.starts_with(&GZIP_MAGIC) && gzip::starts_with_ngsp(bytes))
}

fn info(version: u32, layout: &header::Layout, extension_types: Vec<u32>) -> SpzInfo {
    SpzInfo {
        version,
        num_points: layout.num_points,
        stored_sh_degree: layout.stored_sh_degree,
        loaded_sh_degree: attributes::loaded_sh_degree(layout.stored_sh_degree),
        fractional_bits: layout.fractional_bits,
        antialiased: layout.antialiased,
        has_extensions: layout.has_extensions,
        extension_types,
    }
}

/// Cuts a v1–3 payload into its six arrays; a short payload leaves short slices, which
/// `attributes::unpack` reports.
fn split_payload<'a>(layout: &header::Layout, payload: &'a [u8]) -> Packed<'a> {
    let mut rest = payload;
    let mut take = |attribute: Attribute| {
        let len = usize::try_from(layout.stream_len(attribute)).unwrap_or(usize::MAX);
        let (head, tail) = rest.split_at_checked(len).unwrap_or((rest, &[]));
        rest = tail;
        head
    };
    Packed {
        positions: take(Attribute::Positions),
        alphas: take(Attribute::Alphas),
        colors: take(Attribute::Colors),
        scales: take(Attribute::Scales),
        rotations: take(Attribute::Rotations),
        sh: take(Attribute::Sh),
    }
}
