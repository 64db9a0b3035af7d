//! `.ksplat`, the "SplatBuffer" file of mkkellogg's GaussianSplats3D viewer
//! (`@mkkellogg/gaussian-splats-3d`), version 0.1, compression levels 0–2.
//!
//! Written from the library's own reader and writer (`src/loaders/SplatBuffer.js`:
//! `parseHeader`, `parseSectionHeaders`, `getSplatCenter`,
//! `fillSphericalHarmonicsArray`, `generateFromUncompressedSplatArrays`;
//! `ksplat/KSplatLoader.js` for the version check; `INRIAV1PlyParser.js` and
//! `PlyParserUtils.js` for what the stored values mean), release 0.4.7, and checked
//! against files that release wrote and against PlayCanvas splat-transform's
//! independent reader (`read-ksplat.ts`). No code was copied.
//!
//! # Layout
//! A 4096-byte main header (version, section and splat counts, compression level,
//! level 2's SH range), one 1024-byte header per section, then each section's data:
//! at levels 1 and 2 a table of partially filled buckets' lengths (u32) and the
//! bucket centres (3 × f32), then its records. A record is centre, scale, rotation
//! (w, x, y, z), RGBA and SH: all f32 at level 0; at levels 1 and 2 the centre is three
//! u16 offsets from the record's bucket centre and the scale and rotation are f16,
//! with SH as f16 (level 1) or as bytes over the header's range (level 2). There is no
//! magic number; [`is_ksplat`] checks that the headers describe the file exactly.
//!
//! # What the decoded splats hold
//! * Positions as stored, in the file's frame (the header's scene centre is only the
//!   origin of the writer's sort, not an offset).
//! * Log scales: the file stores linear ones. A zero (f16 underflow: level-1/2
//!   writers truncate tiny scales to 0) becomes the log of the smallest normal f32.
//! * Opacity as the logit of the alpha byte / 255; DC from the colour bytes under
//!   Inria's convention (the writer stored `0.5 + C0 · f_dc`, no transfer curve).
//! * Rotation as stored: w, x, y, z, not renormalised after f16 rounding.
//! * SH up to degree 2 in the crate's order. A file with sections of different degrees
//!   loads at the lowest, as the library does. Degree 3 has no defined layout (no
//!   writer makes it) and is refused.
//! * Splats in file order, which is not the source PLY's: the writer sorts splats
//!   by distance from the scene centre, groups them into buckets, and drops those
//!   whose alpha byte is 0.
//!
//! # Quirks kept for fidelity
//! * A header SH minimum or maximum of exactly 0 (or NaN) is read as −1.5 / +1.5, the
//!   library's `value || default`.
//! * Level 2 of release 0.4.7 computes the SH range without the last degree-2
//!   component (blue coefficient 8), which is then clamped into the range; it decodes
//!   as stored.
//!
//! # Refused
//! Anything the library could not have written whole: versions other than 0.x (x ≥ 1),
//! unknown levels, "loaded" counts below the totals (a file saved during a progressive
//! load), bucket tables that do not add up, SH degrees above 2, a level-2 SH range that
//! is not finite and ordered, truncation anywhere and trailing bytes. Every size is
//! checked against the bytes present before anything is allocated.

mod decode;
mod error;
mod header;
mod sh;

#[cfg(test)]
mod tests;

pub use error::{BucketProblem, Counted, KsplatError, SectionPart};

use crate::asset::decoded::DecodedSplats;

/// Decodes a `.ksplat` file of any compression level, splats in file order.
pub fn decode(bytes: &[u8]) -> Result<DecodedSplats, KsplatError> {
    let layout = header::parse(bytes)?;
    Ok(decode::decode(&layout))
}

/// Whether `bytes` hold a `.ksplat` by content. The format has no magic, so this checks
/// the version bytes and that every count and size in the headers accounts for the
/// file's length exactly; it reads only the headers and the bucket-length tables, and
/// is true exactly when [`decode`] would succeed.
pub fn is_ksplat(bytes: &[u8]) -> bool {
    header::parse(bytes).is_ok()
}
