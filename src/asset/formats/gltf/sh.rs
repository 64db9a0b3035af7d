//! Spherical-harmonic attributes into `DecodedSplats`' coefficient-major layout.
//!
//! `KHR_gaussian_splatting:SH_DEGREE_l_COEF_n` holds coefficient m = n − l of band l
//! ("packed from the lowest order (m) to highest"), with the Condon–Shortley basis of
//! the spec's appendix. That basis and order are Inria's (`eval_sh` in
//! gaussian-splatting/utils/sh_utils.py: band 1 is −C1·y, C1·z, −C1·x), so coefficient
//! (l, n) is `DecodedSplats` coefficient k = l² + n, unchanged.

use std::collections::BTreeMap;

use super::accessors::Shape;
use super::attribute_read::{self, Reader};
use super::attributes::{self, ShAttribute};
use super::error::GltfError;
use super::notes::Note;
use crate::asset::decoded::sh_stride;

const MAX_DEGREE: u32 = 3;

/// The SH attributes of a primitive, sorted by degree and validated.
pub(crate) struct ShPlan {
    /// Degree 0's accessor, if the file has it.
    pub dc: Option<(String, usize)>,
    /// The highest degree all of whose bands (and all lower bands) are present.
    pub degree: u8,
    /// Bands 1..=degree, in coefficient order.
    pub rest: Vec<ShAttribute>,
}

/// Sorts the SH attributes of a primitive into a plan, refusing a partial degree and a
/// coefficient index outside its band.
pub(crate) fn plan(
    reader: &Reader<'_, '_>,
    attributes: &BTreeMap<String, usize>,
    notes: &mut Vec<Note>,
) -> Result<ShPlan, GltfError> {
    let site = reader.site;
    let mut dc = None;
    let mut bands: BTreeMap<u32, BTreeMap<u32, ShAttribute>> = BTreeMap::new();
    for parsed in attributes::sh_attributes(attributes) {
        let attribute = parsed.map_err(|name| GltfError::ShCoefficientOutOfRange {
            site,
            attribute: name,
        })?;
        if attribute.coefficient > 2 * attribute.degree {
            return Err(GltfError::ShCoefficientOutOfRange {
                site,
                attribute: attribute.name,
            });
        }
        if attribute.degree > MAX_DEGREE {
            if !notes.contains(&Note::ShBandsDropped {
                site,
                degree: attribute.degree,
            }) {
                notes.push(Note::ShBandsDropped {
                    site,
                    degree: attribute.degree,
                });
            }
            continue;
        }
        if attribute.degree == 0 {
            dc = Some((attribute.name, attribute.accessor));
        } else {
            bands
                .entry(attribute.degree)
                .or_default()
                .insert(attribute.coefficient, attribute);
        }
    }
    let degree = bands.keys().next_back().copied().unwrap_or(0);
    let mut rest = Vec::new();
    for l in 1..=degree {
        let band = bands.remove(&l).unwrap_or_default();
        for n in 0..=2 * l {
            if !band.contains_key(&n) {
                return Err(GltfError::ShDegreeIncomplete {
                    site,
                    degree: l as u8,
                    missing: attributes::sh_name(l as u8, n as u8),
                });
            }
        }
        rest.extend(band.into_values());
    }
    Ok(ShPlan {
        dc,
        degree: degree as u8,
        rest,
    })
}

/// Reads the planned bands 1..=degree into `sh` (already sized and holding the DC
/// terms); notes VEC4 accessors.
pub(crate) fn read_rest(
    reader: &Reader<'_, '_>,
    plan: &ShPlan,
    sh: &mut [f32],
    notes: &mut Vec<Note>,
) -> Result<(), GltfError> {
    let stride = sh_stride(plan.degree);
    for attribute in &plan.rest {
        let k = (attribute.degree * attribute.degree + attribute.coefficient) as usize;
        let (format, values) =
            reader.read(&attribute.name, attribute.accessor, &attribute_read::SH)?;
        let width = format.shape.components();
        if format.shape == Shape::Vec4 && !notes.contains(&Note::ShVec4 { site: reader.site }) {
            notes.push(Note::ShVec4 { site: reader.site });
        }
        for (splat, rgb) in sh.chunks_exact_mut(stride).zip(values.chunks_exact(width)) {
            splat[3 * k..3 * k + 3].copy_from_slice(&rgb[..3]);
        }
    }
    Ok(())
}
