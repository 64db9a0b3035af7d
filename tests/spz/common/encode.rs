//! Builds SPZ bytes by hand, for files no writer makes (v1, forged headers, broken
//! tables of contents).

use std::io::Write;

pub const NGSP: [u8; 4] = *b"NGSP";

/// The 16-byte v1–3 header.
pub fn legacy_header(
    version: u32,
    points: u32,
    degree: u8,
    fractional_bits: u8,
    flags: u8,
) -> Vec<u8> {
    let mut h = Vec::with_capacity(16);
    h.extend_from_slice(&NGSP);
    h.extend_from_slice(&version.to_le_bytes());
    h.extend_from_slice(&points.to_le_bytes());
    h.extend_from_slice(&[degree, fractional_bits, flags, 0]);
    h
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// Smallest output, for bomb-like inputs.
pub fn gzip_best(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// The 32-byte v4 header.
pub fn ngsp_header(
    version: u32,
    points: u32,
    degree: u8,
    flags: u8,
    streams: u8,
    toc_offset: u32,
) -> Vec<u8> {
    let mut h = Vec::with_capacity(32);
    h.extend_from_slice(&NGSP);
    h.extend_from_slice(&version.to_le_bytes());
    h.extend_from_slice(&points.to_le_bytes());
    h.extend_from_slice(&[degree, 12, flags, streams]);
    h.extend_from_slice(&toc_offset.to_le_bytes());
    h.extend_from_slice(&[0; 12]);
    h
}

/// A v4 file from raw attribute arrays (empty ones get no stream), with `extensions`
/// between the header and the TOC.
pub fn v4_file(points: u32, degree: u8, flags: u8, arrays: &[&[u8]], extensions: &[u8]) -> Vec<u8> {
    let streams: Vec<(Vec<u8>, u64)> = arrays
        .iter()
        .filter(|a| !a.is_empty())
        .map(|a| {
            (
                ruzstd::encoding::compress_to_vec(*a, ruzstd::encoding::CompressionLevel::Fastest),
                a.len() as u64,
            )
        })
        .collect();
    let toc_offset = 32 + extensions.len() as u32;
    let mut out = ngsp_header(4, points, degree, flags, streams.len() as u8, toc_offset);
    out.extend_from_slice(extensions);
    for (compressed, raw_len) in &streams {
        out.extend_from_slice(&(compressed.len() as u64).to_le_bytes());
        out.extend_from_slice(&raw_len.to_le_bytes());
    }
    for (compressed, _) in &streams {
        out.extend_from_slice(compressed);
    }
    out
}

/// Per-splat bytes for `n` splats in the v2/v3 layout (`rotation_bytes` 3 or 4), with
/// values that decode to something finite.
pub fn arrays(n: usize, degree: u8, rotation_bytes: usize) -> [Vec<u8>; 6] {
    let coeffs = (degree as usize + 1).pow(2) - 1;
    let positions: Vec<u8> = (0..n * 9).map(|i| (i * 37 % 251) as u8).collect();
    let alphas: Vec<u8> = (0..n).map(|i| (i * 13 % 256) as u8).collect();
    let colors: Vec<u8> = (0..n * 3).map(|i| (i * 7 % 256) as u8).collect();
    let scales: Vec<u8> = (0..n * 3).map(|i| (100 + i % 50) as u8).collect();
    let rotations: Vec<u8> = (0..n * rotation_bytes)
        .map(|i| (i * 29 % 256) as u8)
        .collect();
    let sh: Vec<u8> = (0..n * coeffs * 3).map(|i| (i * 11 % 256) as u8).collect();
    [positions, alphas, colors, scales, rotations, sh]
}
