//! PlayCanvas / SuperSplat compressed PLY: splats quantised in chunks of 256.
//!
//! A `chunk` element holds each chunk's position and log-scale bounds (12 floats, or
//! 18 with colour bounds), `vertex` holds four packed `uint`s per splat (position and
//! scale 11-10-11 bits within the bounds, colour and opacity 8-8-8-8, rotation as its
//! three smallest components in 10 bits each plus the index of the largest), and an
//! optional `sh` element holds the rest coefficients as bytes, `f_rest_*` channel-major
//! like an Inria file. The layout follows PlayCanvas's own reader (splat-transform's
//! `decompress-ply.ts`).

use super::binary::{element_offsets, get_f32, get_u32};
use super::error::PlyError;
use super::header::{Element, Encoding, Header, PropType, Scalar};
use super::layout::rest_sh_index;
use crate::asset::decoded::{
    DecodedSplats, SplatGeometry, f_dc_from_colour, opacity_logit, sh_stride,
};

/// Splats per chunk.
const CHUNK_SIZE: usize = 256;

const BOUNDS: [&str; 12] = [
    "min_x",
    "min_y",
    "min_z",
    "max_x",
    "max_y",
    "max_z",
    "min_scale_x",
    "min_scale_y",
    "min_scale_z",
    "max_scale_x",
    "max_scale_y",
    "max_scale_z",
];
const COLOUR_BOUNDS: [&str; 6] = ["min_r", "min_g", "min_b", "max_r", "max_g", "max_b"];
const PACKED: [&str; 4] = [
    "packed_position",
    "packed_rotation",
    "packed_scale",
    "packed_color",
];

/// Whether the header is the compressed layout: a `chunk` element and a vertex element
/// of packed words. Anything else is read as an Inria file.
pub(super) fn is_compressed(header: &Header) -> bool {
    let has = |element: &str, property: &str| {
        header
            .elements
            .iter()
            .any(|e| e.name == element && e.properties.iter().any(|p| p.name == property))
    };
    has("chunk", "min_x") && has("vertex", "packed_position")
}

/// Byte offsets of named scalar properties of one element, all of type `ty`.
fn columns<const N: usize>(
    element: &Element,
    names: [&str; N],
    ty: Scalar,
) -> Result<[usize; N], PlyError> {
    let mut offsets = [0; N];
    for (slot, name) in offsets.iter_mut().zip(names) {
        *slot = offset_of(element, name, ty)?
            .ok_or_else(|| PlyError::MissingProperty(format!("{}.{name}", element.name)))?;
    }
    Ok(offsets)
}

/// The byte offset of `name` in a record of `element`, checked to be a `ty`.
fn offset_of(element: &Element, name: &str, ty: Scalar) -> Result<Option<usize>, PlyError> {
    let mut offset = 0;
    for p in &element.properties {
        let PropType::Scalar(found) = p.ty else {
            return Err(PlyError::ListProperty(format!(
                "{}.{}",
                element.name, p.name
            )));
        };
        if p.name == name {
            if found != ty {
                return Err(PlyError::CompressedType {
                    property: format!("{}.{name}", element.name),
                    expected: ty.name(),
                    found: found.name(),
                });
            }
            return Ok(Some(offset));
        }
        offset += found.size();
    }
    Ok(None)
}

/// Bytes of one record of an element made of scalars.
fn record_size(element: &Element) -> Result<usize, PlyError> {
    element
        .properties
        .iter()
        .map(|p| match p.ty {
            PropType::Scalar(s) => Ok(s.size()),
            PropType::List { .. } => Err(PlyError::ListProperty(format!(
                "{}.{}",
                element.name, p.name
            ))),
        })
        .sum()
}

fn index_of(header: &Header, name: &str) -> Option<usize> {
    header.elements.iter().position(|e| e.name == name)
}

/// Decodes a compressed PLY whose header `is_compressed`.
pub(super) fn decode(bytes: &[u8], header: &Header) -> Result<DecodedSplats, PlyError> {
    let big_endian = match header.encoding {
        Encoding::BinaryLittleEndian => false,
        Encoding::BinaryBigEndian => true,
        Encoding::Ascii => return Err(PlyError::CompressedAscii),
    };
    let chunk_index = index_of(header, "chunk").ok_or(PlyError::MissingProperty("chunk".into()))?;
    let vertex_index = index_of(header, "vertex").ok_or(PlyError::NoVertexElement)?;
    let sh_index = index_of(header, "sh");
    let chunk = &header.elements[chunk_index];
    let vertex = &header.elements[vertex_index];
    let sh = sh_index.map(|i| &header.elements[i]);

    let bounds = columns(chunk, BOUNDS, Scalar::F32)?;
    let colour_bounds = match offset_of(chunk, COLOUR_BOUNDS[0], Scalar::F32)? {
        Some(_) => Some(columns(chunk, COLOUR_BOUNDS, Scalar::F32)?),
        None => None,
    };
    let packed = columns(vertex, PACKED, Scalar::U32)?;
    let (sh_degree, sh_columns) = match sh {
        Some(sh) => sh_layout(sh, vertex.count)?,
        None => (0, Vec::new()),
    };
    let expected_chunks = vertex.count.div_ceil(CHUNK_SIZE);
    if chunk.count != expected_chunks {
        return Err(PlyError::CompressedChunkCount {
            chunks: chunk.count,
            vertices: vertex.count,
            expected: expected_chunks,
        });
    }

    // A vertex record holds at least its four packed words, so the count is bounded by
    // the file before anything is allocated.
    let vertex_size = record_size(vertex)?;
    let max = bytes.len() / vertex_size;
    if vertex.count > max {
        return Err(PlyError::TooManyVertices {
            declared: vertex.count,
            max,
        });
    }
    let body = &bytes[header.body_offset..];
    let offsets = element_offsets(body, &header.elements, big_endian)?;
    // `element_offsets` checked that every element's records are in the body.
    let records = |index: usize, size: usize| -> Result<&[u8], PlyError> {
        let e = &header.elements[index];
        let start = offsets[index];
        body.get(start..start + e.count * size)
            .ok_or(PlyError::Truncated {
                element: e.name.clone(),
                at: 0,
                count: e.count,
            })
    };
    let chunk_size = record_size(chunk)?;
    let chunk_records = records(chunk_index, chunk_size)?;
    let vertex_records = records(vertex_index, vertex_size)?;

    let mut geometry = Vec::with_capacity(vertex.count);
    let stride = sh_stride(sh_degree);
    let mut sh_out = vec![0.0f32; vertex.count * stride];
    for (c, chunk_record) in chunk_records.chunks_exact(chunk_size).enumerate() {
        let f = |offset: usize| get_f32(&chunk_record[offset..], big_endian);
        let bound = bounds.map(f);
        let colour = colour_bounds.map(|b| b.map(f));
        let first = c * CHUNK_SIZE;
        let last = (first + CHUNK_SIZE).min(vertex.count);
        let splats = &vertex_records[first * vertex_size..last * vertex_size];
        for (record, splat_sh) in splats
            .chunks_exact(vertex_size)
            .zip(sh_out[first * stride..last * stride].chunks_exact_mut(stride))
        {
            let word = |i: usize| get_u32(&record[packed[i]..], big_endian);
            let (splat, dc) = unpack(
                [word(0), word(1), word(2), word(3)],
                &bound,
                colour.as_ref(),
            );
            geometry.push(splat);
            splat_sh[..3].copy_from_slice(&dc);
        }
    }
    if let Some(sh_index) = sh_index {
        let sh = &header.elements[sh_index];
        let sh_size = record_size(sh)?;
        let sh_records = records(sh_index, sh_size)?;
        for (record, splat_sh) in sh_records
            .chunks_exact(sh_size)
            .zip(sh_out.chunks_exact_mut(stride))
        {
            for &(offset, index) in &sh_columns {
                splat_sh[index] = unpack_sh(record[offset]);
            }
        }
    }
    Ok(DecodedSplats::from_parts(
        geometry, sh_out, sh_degree, false,
    ))
}

/// The degree of an `sh` element and where each of its bytes goes in a splat's SH row.
fn sh_layout(sh: &Element, vertices: usize) -> Result<(u8, Vec<(usize, usize)>), PlyError> {
    if sh.count != vertices {
        return Err(PlyError::CompressedShCount {
            sh: sh.count,
            vertices,
        });
    }
    let rest = sh.properties.len();
    let degree = match rest {
        9 => 1,
        24 => 2,
        45 => 3,
        n => return Err(PlyError::UnsupportedFRest(n)),
    };
    let per_channel = rest / 3;
    let mut columns = Vec::with_capacity(rest);
    for j in 0..rest {
        let name = format!("f_rest_{j}");
        let offset = offset_of(sh, &name, Scalar::U8)?
            .ok_or_else(|| PlyError::MissingProperty(format!("sh.{name}")))?;
        columns.push((offset, rest_sh_index(j, per_channel)));
    }
    Ok((degree, columns))
}

/// `bits` bits of `value` from bit `shift`, as a fraction of their largest value.
fn unorm(value: u32, shift: u32, bits: u32) -> f32 {
    let max = (1u32 << bits) - 1;
    ((value >> shift) & max) as f32 / max as f32
}

fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a * (1.0 - t) + b * t
}

/// One splat from its four packed words and its chunk's bounds; also its DC term.
fn unpack(
    [position, rotation, scale, colour]: [u32; 4],
    bound: &[f32; 12],
    colour_bound: Option<&[f32; 6]>,
) -> (SplatGeometry, [f32; 3]) {
    let p = [
        unorm(position, 21, 11),
        unorm(position, 11, 10),
        unorm(position, 0, 11),
    ];
    let s = [
        unorm(scale, 21, 11),
        unorm(scale, 11, 10),
        unorm(scale, 0, 11),
    ];
    let c = [
        unorm(colour, 24, 8),
        unorm(colour, 16, 8),
        unorm(colour, 8, 8),
        unorm(colour, 0, 8),
    ];
    let rgb = match colour_bound {
        Some(b) => [0, 1, 2].map(|i| lerp(b[i], b[i + 3], c[i])),
        None => [c[0], c[1], c[2]],
    };
    let geometry = SplatGeometry {
        position: [0, 1, 2].map(|i| lerp(bound[i], bound[i + 3], p[i])),
        opacity_logit: opacity_logit(c[3]),
        rotation: unpack_rotation(rotation),
        log_scale: [0, 1, 2].map(|i| lerp(bound[i + 6], bound[i + 9], s[i])),
        _pad: 0.0,
    };
    (geometry, rgb.map(f_dc_from_colour))
}

/// The quaternion (in the file's `rot_0..3` order) from its three smallest
/// components, each in [−√½, √½] over 10 bits, and the index of the largest.
fn unpack_rotation(word: u32) -> [f32; 4] {
    let scale = std::f32::consts::SQRT_2;
    let a = (unorm(word, 20, 10) - 0.5) * scale;
    let b = (unorm(word, 10, 10) - 0.5) * scale;
    let c = (unorm(word, 0, 10) - 0.5) * scale;
    let largest = (1.0 - (a * a + b * b + c * c)).max(0.0).sqrt();
    match word >> 30 {
        0 => [largest, a, b, c],
        1 => [a, largest, b, c],
        2 => [a, b, largest, c],
        _ => [a, b, c, largest],
    }
}

/// A rest coefficient from its byte: 8 bits over [−4, 4], the ends exact.
fn unpack_sh(byte: u8) -> f32 {
    let t = match byte {
        0 => 0.0,
        255 => 1.0,
        n => (f32::from(n) + 0.5) / 256.0,
    };
    (t - 0.5) * 8.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_components_land_around_the_largest() {
        // Three components at their midpoint (0) and the largest in slot 2: identity
        // up to the slot.
        let mid = 511.5f32.round() as u32;
        let word = (2 << 30) | (mid << 20) | (mid << 10) | mid;
        let q = unpack_rotation(word);
        assert_eq!(q[2].round(), 1.0);
        assert!(q[0].abs() < 2e-3 && q[1].abs() < 2e-3 && q[3].abs() < 2e-3);
    }

    #[test]
    fn sh_bytes_span_minus_four_to_four() {
        assert_eq!(unpack_sh(0), -4.0);
        assert_eq!(unpack_sh(255), 4.0);
        assert!((unpack_sh(128) - 0.015625).abs() < 1e-6);
    }
}
