//! Binary bodies (either byte order): skip the elements before `vertex`, then decode
//! the fixed-size vertex records in one pass straight from the byte slice.

use super::error::PlyError;
use super::header::{Element, PropType, Scalar};
use super::layout::{Slot, VertexLayout};
use super::output::{Output, non_finite};
use crate::asset::decoded::DecodedSplats;

/// A `$t` from the start of the byte slice `$b`, big-endian if `$big`.
macro_rules! get {
    ($b:expr, $t:ty, $big:expr) => {{
        const N: usize = size_of::<$t>();
        let bytes: [u8; N] = $b[..N].try_into().unwrap();
        if $big {
            <$t>::from_be_bytes(bytes)
        } else {
            <$t>::from_le_bytes(bytes)
        }
    }};
}

/// Decodes a binary body: skips the elements `before` the vertex element, then reads
/// its records. `file_len` (the whole file's size) bounds the count before allocating.
pub(super) fn decode(
    file_len: usize,
    body: &[u8],
    before: &[Element],
    vertex: &Element,
    layout: &VertexLayout,
    big_endian: bool,
) -> Result<DecodedSplats, PlyError> {
    let max = file_len / layout.record_size;
    if vertex.count > max {
        return Err(PlyError::TooManyVertices {
            declared: vertex.count,
            max,
        });
    }
    let records = &body[skip_elements(body, before, big_endian)?..];
    if vertex.count * layout.record_size > records.len() {
        return Err(truncated(vertex, records.len() / layout.record_size));
    }
    Ok(decode_vertices(records, vertex.count, layout, big_endian))
}

/// Byte offset just past the given elements (those before `vertex`), walking list
/// properties record by record where there are any.
fn skip_elements(body: &[u8], elements: &[Element], big_endian: bool) -> Result<usize, PlyError> {
    let mut pos = 0;
    for element in elements {
        pos += element_bytes(&body[pos..], element, big_endian)?;
    }
    Ok(pos)
}

/// Where each element's records start in the body. Each one's bytes are checked to be
/// there, so `offsets[i] + count * record size` of a list-free element is in bounds.
pub(super) fn element_offsets(
    body: &[u8],
    elements: &[Element],
    big_endian: bool,
) -> Result<Vec<usize>, PlyError> {
    let mut offsets = Vec::with_capacity(elements.len());
    let mut pos = 0;
    for element in elements {
        offsets.push(pos);
        pos += element_bytes(&body[pos..], element, big_endian)?;
    }
    Ok(offsets)
}

/// Bytes taken by one element's records at the start of `body`.
fn element_bytes(body: &[u8], element: &Element, big_endian: bool) -> Result<usize, PlyError> {
    let fixed_size = element
        .properties
        .iter()
        .map(|p| match p.ty {
            PropType::Scalar(s) => Some(s.size()),
            PropType::List { .. } => None,
        })
        .sum::<Option<usize>>();
    Ok(match fixed_size {
        Some(0) => 0,
        Some(size) => match element.count.checked_mul(size) {
            Some(bytes) if bytes <= body.len() => bytes,
            _ => return Err(truncated(element, body.len() / size)),
        },
        None => walk_records(body, element, big_endian)?,
    })
}

/// A little- or big-endian `f32` from the start of `b` (at least 4 bytes).
#[inline(always)]
pub(super) fn get_f32(b: &[u8], big_endian: bool) -> f32 {
    get!(b, f32, big_endian)
}

/// A little- or big-endian `u32` from the start of `b` (at least 4 bytes).
#[inline(always)]
pub(super) fn get_u32(b: &[u8], big_endian: bool) -> u32 {
    get!(b, u32, big_endian)
}

/// Bytes taken by an element's records when some properties are lists.
/// Every record holds at least one list count, so this loop is bounded by `body.len()`.
fn walk_records(body: &[u8], element: &Element, big_endian: bool) -> Result<usize, PlyError> {
    let mut pos = 0;
    for index in 0..element.count {
        for p in &element.properties {
            let size = match p.ty {
                PropType::Scalar(s) => s.size(),
                PropType::List { count, item } => {
                    let Some(bytes) = body.get(pos..pos + count.size()) else {
                        return Err(truncated(element, index));
                    };
                    pos += count.size();
                    let length = read_integer(bytes, count, big_endian).ok_or_else(|| {
                        PlyError::ListCountType {
                            element: element.name.clone(),
                            property: p.name.clone(),
                            count_type: count.name(),
                        }
                    })?;
                    let length =
                        usize::try_from(length).map_err(|_| PlyError::NegativeListLength {
                            element: element.name.clone(),
                            index,
                            length,
                        })?;
                    // u32::MAX * 8 fits in usize on 64-bit; checked for 32-bit targets.
                    length
                        .checked_mul(item.size())
                        .ok_or_else(|| truncated(element, index))?
                }
            };
            if size > body.len() - pos {
                return Err(truncated(element, index));
            }
            pos += size;
        }
    }
    Ok(pos)
}

fn truncated(element: &Element, at: usize) -> PlyError {
    PlyError::Truncated {
        element: element.name.clone(),
        at,
        count: element.count,
    }
}

/// A list count; `None` for float types.
fn read_integer(b: &[u8], ty: Scalar, big_endian: bool) -> Option<i64> {
    Some(match ty {
        Scalar::I8 => i64::from(get!(b, i8, big_endian)),
        Scalar::U8 => i64::from(get!(b, u8, big_endian)),
        Scalar::I16 => i64::from(get!(b, i16, big_endian)),
        Scalar::U16 => i64::from(get!(b, u16, big_endian)),
        Scalar::I32 => i64::from(get!(b, i32, big_endian)),
        Scalar::U32 => i64::from(get!(b, u32, big_endian)),
        Scalar::F32 | Scalar::F64 => return None,
    })
}

/// One property the decoder keeps: where it is in the record and where it goes.
#[derive(Clone, Copy)]
struct Field {
    offset: usize,
    ty: Scalar,
    index: usize,
}

/// Decodes `count` vertex records from the start of `records`, which holds them all.
fn decode_vertices(
    records: &[u8],
    count: usize,
    layout: &VertexLayout,
    big_endian: bool,
) -> DecodedSplats {
    // Split by destination so that the inner loops do not branch on it.
    let (mut geometry, mut sh) = (Vec::new(), Vec::new());
    for c in &layout.columns {
        let (fields, index) = match c.slot {
            Some(Slot::Geometry(index)) => (&mut geometry, index),
            Some(Slot::Sh(index)) => (&mut sh, index),
            None => continue,
        };
        fields.push(Field {
            offset: c.offset,
            ty: c.ty,
            index,
        });
    }
    let mut out = Output::zeroed(layout, count);
    let all_f32 = geometry.iter().chain(&sh).all(|f| f.ty == Scalar::F32);
    let decode = match (big_endian, all_f32) {
        (false, true) => decode_records::<false, true>,
        (false, false) => decode_records::<false, false>,
        (true, true) => decode_records::<true, true>,
        (true, false) => decode_records::<true, false>,
    };
    let non_finite = decode(records, layout.record_size, &geometry, &sh, &mut out);
    out.finish(non_finite)
}

/// The record loop, compiled for each byte order, and once more for files with only
/// `float` properties (nearly all), where it needs no per-property type dispatch.
fn decode_records<const BIG: bool, const ALL_F32: bool>(
    records: &[u8],
    record_size: usize,
    geometry_fields: &[Field],
    sh_fields: &[Field],
    out: &mut Output,
) -> usize {
    let mut non_finite_count = 0;
    for (record, splat) in records.chunks_exact(record_size).zip(out.splats()) {
        let mut bad = false;
        for f in geometry_fields {
            let value = read::<BIG, ALL_F32>(&record[f.offset..], f.ty);
            bad |= non_finite(value);
            splat.geometry[f.index] = value;
        }
        for f in sh_fields {
            let value = read::<BIG, ALL_F32>(&record[f.offset..], f.ty);
            bad |= non_finite(value);
            splat.sh[f.index] = value;
        }
        non_finite_count += usize::from(bad);
    }
    non_finite_count
}

/// Reads one scalar from the start of `b`, converted to f32 (one rounding for the
/// types f32 cannot hold exactly). `ALL_F32` promises that `ty` is `F32`.
#[inline(always)]
fn read<const BIG: bool, const ALL_F32: bool>(b: &[u8], ty: Scalar) -> f32 {
    if ALL_F32 {
        return get!(b, f32, BIG);
    }
    match ty {
        Scalar::F32 => get!(b, f32, BIG),
        Scalar::F64 => get!(b, f64, BIG) as f32,
        Scalar::I8 => f32::from(get!(b, i8, BIG)),
        Scalar::U8 => f32::from(get!(b, u8, BIG)),
        Scalar::I16 => f32::from(get!(b, i16, BIG)),
        Scalar::U16 => f32::from(get!(b, u16, BIG)),
        Scalar::I32 => get!(b, i32, BIG) as f32,
        Scalar::U32 => get!(b, u32, BIG) as f32,
    }
}
