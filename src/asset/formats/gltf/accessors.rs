//! Typed accessor reads (glTF 2.0 spec §3.6.2): strided elements, the integer
//! normalisation rules, zero-filled accessors and sparse substitution, every range
//! checked before anything is allocated.

use std::fmt;

use super::buffers::{Buffers, View};
use super::document::{Accessor, Root};
use super::error::{GltfError, Kind, get};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Component {
    I8,
    U8,
    I16,
    U16,
    U32,
    F32,
}

impl Component {
    fn from_gl(code: u32) -> Option<Self> {
        Some(match code {
            5120 => Component::I8,
            5121 => Component::U8,
            5122 => Component::I16,
            5123 => Component::U16,
            5125 => Component::U32,
            5126 => Component::F32,
            _ => return None,
        })
    }

    fn size(self) -> usize {
        match self {
            Component::I8 | Component::U8 => 1,
            Component::I16 | Component::U16 => 2,
            Component::U32 | Component::F32 => 4,
        }
    }

    pub(crate) fn is_signed_int(self) -> bool {
        matches!(self, Component::I8 | Component::I16)
    }

    fn name(self) -> &'static str {
        match self {
            Component::I8 => "BYTE",
            Component::U8 => "UNSIGNED_BYTE",
            Component::I16 => "SHORT",
            Component::U16 => "UNSIGNED_SHORT",
            Component::U32 => "UNSIGNED_INT",
            Component::F32 => "FLOAT",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Scalar,
    Vec2,
    Vec3,
    Vec4,
    Matrix(&'static str),
}

impl Shape {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "SCALAR" => Shape::Scalar,
            "VEC2" => Shape::Vec2,
            "VEC3" => Shape::Vec3,
            "VEC4" => Shape::Vec4,
            "MAT2" => Shape::Matrix("MAT2"),
            "MAT3" => Shape::Matrix("MAT3"),
            "MAT4" => Shape::Matrix("MAT4"),
            _ => return None,
        })
    }

    pub(crate) fn components(self) -> usize {
        match self {
            Shape::Scalar => 1,
            Shape::Vec2 => 2,
            Shape::Vec3 => 3,
            Shape::Vec4 => 4,
            // Never read: no splat attribute is a matrix, so callers refuse them.
            Shape::Matrix(_) => 0,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Shape::Scalar => "SCALAR",
            Shape::Vec2 => "VEC2",
            Shape::Vec3 => "VEC3",
            Shape::Vec4 => "VEC4",
            Shape::Matrix(name) => name,
        }
    }
}

/// An accessor's element type, for checks and messages ("VEC4 SHORT normalized").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Format {
    pub shape: Shape,
    pub component: Component,
    pub normalized: bool,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.shape.name(), self.component.name())?;
        if self.normalized {
            f.write_str(" normalized")?;
        }
        Ok(())
    }
}

/// An accessor's declared format and element count.
pub(crate) fn describe(root: &Root, index: usize) -> Result<(Format, u64), GltfError> {
    let accessor = get(&root.accessors, Kind::Accessor, index, || {
        "a mesh primitive attribute".into()
    })?;
    Ok((format_of(index, accessor)?, accessor.count))
}

fn format_of(index: usize, accessor: &Accessor) -> Result<Format, GltfError> {
    let component =
        Component::from_gl(accessor.component_type).ok_or(GltfError::UnknownComponentType {
            accessor: index,
            component_type: accessor.component_type,
        })?;
    let shape =
        Shape::parse(&accessor.type_name).ok_or_else(|| GltfError::UnknownAccessorType {
            accessor: index,
            type_name: accessor.type_name.clone(),
        })?;
    // The spec forbids `normalized` on FLOAT and UNSIGNED_INT; such a flag means nothing.
    let normalized = accessor.normalized && !matches!(component, Component::F32 | Component::U32);
    Ok(Format {
        shape,
        component,
        normalized,
    })
}

fn to_usize(v: u64) -> Option<usize> {
    usize::try_from(v).ok()
}

/// Reads accessor `index` as `count × components` floats, normalised where the
/// accessor says so. The caller has checked its format and bounded its count: an
/// accessor without a bufferView allocates `count` zeros.
pub(crate) fn read(
    root: &Root,
    buffers: &Buffers<'_>,
    index: usize,
) -> Result<Vec<f32>, GltfError> {
    let accessor = get(&root.accessors, Kind::Accessor, index, || {
        "a mesh primitive attribute".into()
    })?;
    let format = format_of(index, accessor)?;
    let components = format.shape.components();
    let element = components * format.component.size();
    let count = to_usize(accessor.count).ok_or(GltfError::AccessorOutOfBounds {
        accessor: index,
        view: accessor.buffer_view.unwrap_or(usize::MAX),
        end: u64::MAX,
        view_len: 0,
    })?;
    let len = count
        .checked_mul(components)
        .ok_or(GltfError::AccessorOutOfBounds {
            accessor: index,
            view: accessor.buffer_view.unwrap_or(usize::MAX),
            end: u64::MAX,
            view_len: 0,
        })?;

    let mut out = match accessor.buffer_view {
        None => vec![0.0; len],
        Some(view_index) => {
            let view = buffers.view(root, view_index, || format!("accessor {index}"))?;
            let stride = view.stride.unwrap_or(element as u64);
            if stride < element as u64 {
                return Err(GltfError::StrideTooSmall {
                    accessor: index,
                    stride,
                    element: element as u64,
                });
            }
            let span = checked_span(accessor.byte_offset, count as u64, stride, element as u64);
            let in_view = span
                .filter(|&end| end <= view.bytes.len() as u64)
                .and_then(|_| Some((to_usize(accessor.byte_offset)?, to_usize(stride)?)));
            let Some((offset, stride)) = in_view else {
                return Err(GltfError::AccessorOutOfBounds {
                    accessor: index,
                    view: view_index,
                    end: span.unwrap_or(u64::MAX),
                    view_len: view.bytes.len() as u64,
                });
            };
            let mut out = Vec::with_capacity(len);
            decode(
                &view.bytes[offset..],
                stride,
                count,
                components,
                format,
                &mut out,
            );
            out
        }
    };
    apply_sparse(root, buffers, index, accessor, format, &mut out)?;
    Ok(out)
}

/// The end of `count` elements of `element` bytes, `stride` apart, from `offset`.
fn checked_span(offset: u64, count: u64, stride: u64, element: u64) -> Option<u64> {
    if count == 0 {
        return Some(offset);
    }
    (count - 1)
        .checked_mul(stride)?
        .checked_add(element)?
        .checked_add(offset)
}

/// Appends `count` elements. `bytes` starts at the first element and holds them all
/// (checked by the caller), so the `get`s only guard against a mistake here.
fn decode(
    bytes: &[u8],
    stride: usize,
    count: usize,
    components: usize,
    format: Format,
    out: &mut Vec<f32>,
) {
    let size = format.component.size();
    let convert = converter(format);
    for i in 0..count {
        let base = i * stride;
        for c in 0..components {
            let at = base + c * size;
            let value = bytes.get(at..at + size).map_or(0.0, &convert);
            out.push(value);
        }
    }
}

/// One component's bytes to its float value (glTF 2.0 spec §3.11, "normalized").
fn converter(format: Format) -> impl Fn(&[u8]) -> f32 {
    let (component, normalized) = (format.component, format.normalized);
    move |b: &[u8]| {
        let byte = |i: usize| b.get(i).copied().unwrap_or(0);
        match component {
            Component::I8 => {
                let v = byte(0) as i8 as f32;
                if normalized { (v / 127.0).max(-1.0) } else { v }
            }
            Component::U8 => {
                let v = byte(0) as f32;
                if normalized { v / 255.0 } else { v }
            }
            Component::I16 => {
                let v = i16::from_le_bytes([byte(0), byte(1)]) as f32;
                if normalized {
                    (v / 32767.0).max(-1.0)
                } else {
                    v
                }
            }
            Component::U16 => {
                let v = u16::from_le_bytes([byte(0), byte(1)]) as f32;
                if normalized { v / 65535.0 } else { v }
            }
            Component::U32 => u32::from_le_bytes([byte(0), byte(1), byte(2), byte(3)]) as f32,
            Component::F32 => f32::from_le_bytes([byte(0), byte(1), byte(2), byte(3)]),
        }
    }
}

/// Overwrites the elements a sparse accessor lists (glTF 2.0 spec §3.6.2.3).
fn apply_sparse(
    root: &Root,
    buffers: &Buffers<'_>,
    index: usize,
    accessor: &Accessor,
    format: Format,
    out: &mut [f32],
) -> Result<(), GltfError> {
    let Some(sparse) = &accessor.sparse else {
        return Ok(());
    };
    let components = format.shape.components();
    let index_component = Component::from_gl(sparse.indices.component_type)
        .filter(|c| matches!(c, Component::U8 | Component::U16 | Component::U32))
        .ok_or(GltfError::UnknownComponentType {
            accessor: index,
            component_type: sparse.indices.component_type,
        })?;
    let referrer = || format!("sparse accessor {index}");
    let indices_view = buffers.view(root, sparse.indices.buffer_view, referrer)?;
    let values_view = buffers.view(root, sparse.values.buffer_view, referrer)?;
    let n = sparse.count;
    let index_bytes = packed(
        indices_view,
        sparse.indices.byte_offset,
        n,
        index_component.size(),
        index,
    )?;
    let value_bytes = packed(
        values_view,
        sparse.values.byte_offset,
        n,
        components * format.component.size(),
        index,
    )?;
    let mut values = Vec::with_capacity(value_bytes.len() / format.component.size().max(1));
    decode(
        value_bytes,
        components * format.component.size(),
        value_bytes.len() / (components * format.component.size()).max(1),
        components,
        format,
        &mut values,
    );

    for (k, raw) in index_bytes.chunks_exact(index_component.size()).enumerate() {
        let mut word = [0u8; 4];
        word[..raw.len()].copy_from_slice(raw);
        let target = u32::from_le_bytes(word) as usize;
        let out_of_range = GltfError::AccessorOutOfBounds {
            accessor: index,
            view: sparse.indices.buffer_view,
            end: target as u64,
            view_len: accessor.count,
        };
        let dst = target
            .checked_mul(components)
            .and_then(|start| out.get_mut(start..start + components))
            .ok_or(out_of_range)?;
        if let Some(src) = values.get(k * components..(k + 1) * components) {
            dst.copy_from_slice(src);
        }
    }
    Ok(())
}

/// The bytes of `n` tightly packed `element`-byte items from `offset` in `view`.
fn packed<'v>(
    view: View<'v>,
    offset: u64,
    n: u64,
    element: usize,
    accessor: usize,
) -> Result<&'v [u8], GltfError> {
    let end = n
        .checked_mul(element as u64)
        .and_then(|len| len.checked_add(offset));
    let bytes = end
        .and_then(|end| view.bytes.get(to_usize(offset)?..to_usize(end)?))
        .ok_or(GltfError::AccessorOutOfBounds {
            accessor,
            view: view.index,
            end: end.unwrap_or(u64::MAX),
            view_len: view.bytes.len() as u64,
        })?;
    Ok(bytes)
}
