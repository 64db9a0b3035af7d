//! A splat primitive whose data is an SPZ blob (`KHR_gaussian_splatting_compression_spz_2`
//! nested in the base extension, or the legacy `KHR_spz_gaussian_splats_compression`).
//!
//! SPZ already holds trained values (log scales, opacity logits, f_dc colours), which is
//! what `DecodedSplats` holds; the spz_2 text's mapping to linear attributes (`exp`,
//! sigmoid) is for renderers that consume the spec attributes, so it is skipped.

use super::accessors;
use super::buffers::Buffers;
use super::document::{Primitive, Root};
use super::error::{GltfError, Site};
use super::notes::Note;
use super::spz_frame;
use crate::asset::decoded::DecodedSplats;
use crate::asset::formats::spz;

pub(crate) fn decode(
    root: &Root,
    buffers: &Buffers<'_>,
    site: Site,
    primitive: &Primitive,
    buffer_view: usize,
    notes: &mut Vec<Note>,
) -> Result<DecodedSplats, GltfError> {
    let view = buffers.view(root, buffer_view, || format!("{site} SPZ extension"))?;
    let (mut splats, info) =
        spz::decode_with_info(view.bytes).map_err(|source| GltfError::Spz { site, source })?;
    notes.push(Note::Spz {
        site,
        version: info.version,
    });
    // The accessors only describe the decompressed data ("The accessor count must
    // match the number of points"); their types are not checked, as writers declared
    // SH accessors VEC4 and COLOR_0 as non-normalized bytes.
    for (name, &accessor) in &primitive.attributes {
        let (_, count) = accessors::describe(root, accessor)?;
        if count != u64::from(info.num_points) {
            return Err(GltfError::MismatchedCounts {
                site,
                attribute: name.clone(),
                count,
                reference: "the SPZ data".to_owned(),
                reference_count: info.num_points.into(),
            });
        }
    }
    spz_frame::rdf_to_stored(&mut splats);
    Ok(splats)
}
