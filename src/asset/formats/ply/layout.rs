//! Where each vertex property goes: the mapping from PLY property names to a float of
//! the decoded splat, checked for completeness.

use super::error::PlyError;
use super::header::{Element, PropType, Scalar};
use crate::asset::decoded::sh_stride;

/// Where a property's value goes in one decoded splat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slot {
    /// Index into the 12 floats of `SplatGeometry`, in field order.
    Geometry(usize),
    /// Index into the splat's SH row, coefficient-major: `3 * k + channel`.
    Sh(usize),
}

/// The properties every splat needs, and their slots (`f_dc_*` is SH coefficient 0).
const REQUIRED: [(&str, Slot); 14] = [
    ("x", Slot::Geometry(0)),
    ("y", Slot::Geometry(1)),
    ("z", Slot::Geometry(2)),
    ("opacity", Slot::Geometry(3)),
    ("rot_0", Slot::Geometry(4)),
    ("rot_1", Slot::Geometry(5)),
    ("rot_2", Slot::Geometry(6)),
    ("rot_3", Slot::Geometry(7)),
    ("scale_0", Slot::Geometry(8)),
    ("scale_1", Slot::Geometry(9)),
    ("scale_2", Slot::Geometry(10)),
    ("f_dc_0", Slot::Sh(0)),
    ("f_dc_1", Slot::Sh(1)),
    ("f_dc_2", Slot::Sh(2)),
];

const F_REST: &str = "f_rest_";

/// One property of the vertex record.
#[derive(Clone, Copy, Debug)]
pub(super) struct Column {
    pub ty: Scalar,
    /// Byte offset within a binary record.
    pub offset: usize,
    /// Destination slot, or `None` for a property we ignore (normals, custom ones).
    pub slot: Option<Slot>,
}

/// How to read one vertex record.
#[derive(Debug)]
pub(super) struct VertexLayout {
    /// All properties in file order.
    pub columns: Vec<Column>,
    /// Bytes of one binary record.
    pub record_size: usize,
    pub sh_degree: u8,
}

impl VertexLayout {
    /// Maps the vertex element's properties, checking that every needed one is there.
    pub(super) fn new(vertex: &Element) -> Result<VertexLayout, PlyError> {
        let rest_count = vertex
            .properties
            .iter()
            .filter(|p| p.name.starts_with(F_REST))
            .count();
        let sh_degree = match rest_count {
            0 => 0,
            9 => 1,
            24 => 2,
            45 => 3,
            n => return Err(PlyError::UnsupportedFRest(n)),
        };
        let rest_per_channel = rest_count / 3;

        let mut columns = Vec::with_capacity(vertex.properties.len());
        let mut offset = 0;
        for p in &vertex.properties {
            let PropType::Scalar(ty) = p.ty else {
                return Err(PlyError::ListProperty(p.name.clone()));
            };
            let slot = slot_of(&p.name, rest_per_channel);
            columns.push(Column { ty, offset, slot });
            offset += ty.size();
        }

        // Every slot filled means every needed name is present: there are exactly
        // `rest_count` names starting with `f_rest_` for as many slots.
        let filled = |slot| columns.iter().any(|c| c.slot == Some(slot));
        for (name, slot) in REQUIRED {
            if !filled(slot) {
                return Err(PlyError::MissingProperty(name.to_string()));
            }
        }
        for j in 0..rest_count {
            if !filled(rest_slot(j, rest_per_channel)) {
                return Err(PlyError::MissingProperty(format!("{F_REST}{j}")));
            }
        }
        Ok(VertexLayout {
            columns,
            record_size: offset,
            sh_degree,
        })
    }

    /// Floats of SH per splat.
    pub(super) fn sh_stride(&self) -> usize {
        sh_stride(self.sh_degree)
    }
}

fn slot_of(name: &str, rest_per_channel: usize) -> Option<Slot> {
    if let Some(&(_, slot)) = REQUIRED.iter().find(|(n, _)| *n == name) {
        return Some(slot);
    }
    let j: usize = name.strip_prefix(F_REST)?.parse().ok()?;
    (j < 3 * rest_per_channel).then(|| rest_slot(j, rest_per_channel))
}

/// The file stores `f_rest_*` channel-major (all R coefficients 1.., then G, then B);
/// slots are coefficient-major.
fn rest_slot(j: usize, rest_per_channel: usize) -> Slot {
    Slot::Sh(rest_sh_index(j, rest_per_channel))
}

/// Where `f_rest_{j}` goes in a coefficient-major SH row.
pub(super) fn rest_sh_index(j: usize, rest_per_channel: usize) -> usize {
    let channel = j / rest_per_channel;
    let coefficient = 1 + j % rest_per_channel;
    3 * coefficient + channel
}
