//! An uncompressed splat primitive: `KHR_gaussian_splatting` attributes (or the
//! drafts' `_`-prefixed ones) into splats.
//!
//! Conventions, all from the ratified text (Khronos glTF @ 63770cc7):
//! - ROTATION is a unit quaternion "in the usual glTF order", x y z w; `DecodedSplats`
//!   holds w x y z.
//! - SCALE is linear (or log, see `activation`); OPACITY is linear in 0..1.
//! - SH_DEGREE_0_COEF_0 holds the DC coefficient f_dc, not a colour: "Color_diffuse =
//!   SH_0,0 * 0.2820947917738781 + 0.5".
//! - COLOR_0 is only a fallback for viewers without splats; it is read when the DC
//!   attribute (or OPACITY, for its alpha) is missing.

use super::activation::{ScaleEvidence, opacity_logit};
use super::attribute_read::{self, Reader};
use super::attributes::{self, Splat};
use super::buffers::Buffers;
use super::color::{self, ColorSpace};
use super::document::{Accessor, Primitive, Root};
use super::error::{GltfError, Kind, Site, get};
use super::exact;
use super::notes::Note;
use super::sh;
use crate::asset::decoded::{SplatGeometry, sh_stride};

/// No primitive may claim more splats than this (2^26, 67 million: about 16 GB
/// decoded at SH degree 3), whatever its accessors say.
pub const MAX_SPLATS_PER_PRIMITIVE: u64 = 1 << 26;

/// A primitive's splats before the document-wide SCALE decision.
pub(crate) struct RawSplats {
    pub geometry: Vec<SplatGeometry>,
    pub sh: Vec<f32>,
    pub degree: u8,
    pub antialiased: bool,
    /// `Some` while `log_scale` still holds the file's SCALE values, linear or log to
    /// be decided for the whole document.
    pub pending_scale: Option<ScaleEvidence>,
}

/// What the colour attributes mean, from the base extension's `colorSpace`.
#[derive(Clone, Copy)]
pub(crate) struct Colors {
    pub space: ColorSpace,
    /// The ratified spec's COLOR_0 is linear; the drafts, which had no `colorSpace`,
    /// stored display values.
    pub color0_is_linear: bool,
}

pub(crate) fn decode(
    root: &Root,
    buffers: &Buffers<'_>,
    site: Site,
    primitive: &Primitive,
    colors: Colors,
    notes: &mut Vec<Note>,
) -> Result<RawSplats, GltfError> {
    let attrs = &primitive.attributes;
    let position_accessor =
        *attrs
            .get(attributes::POSITION)
            .ok_or(GltfError::MissingAttribute {
                site,
                attribute: "POSITION",
            })?;
    let count = position_count(root, site, position_accessor)?;
    let reader = Reader {
        root,
        buffers,
        site,
        count,
    };
    let n = count as usize;

    let (_, positions) = reader.read(
        attributes::POSITION,
        position_accessor,
        &attribute_read::POSITION,
    )?;
    let rotations = rotations(&reader, primitive, notes)?;
    let (scales, evidence) = scales(&reader, primitive, notes)?;
    let plan = sh::plan(&reader, attrs, notes)?;
    let stride = sh_stride(plan.degree);
    let mut sh = vec![0.0f32; n * stride];

    let color0 = match (&plan.dc, attributes::find(attrs, Splat::Opacity)) {
        (Some(_), Some(_)) => None,
        _ => color0(&reader, primitive, notes)?,
    };
    match &plan.dc {
        Some((name, accessor)) => {
            let (format, values) = reader.read(name, *accessor, &attribute_read::SH)?;
            let width = format.shape.components();
            for (splat, rgb) in sh.chunks_exact_mut(stride).zip(values.chunks_exact(width)) {
                splat[..3].copy_from_slice(&rgb[..3]);
            }
        }
        None => {
            let Some((width, values)) = &color0 else {
                return Err(GltfError::MissingAttribute {
                    site,
                    attribute: "KHR_gaussian_splatting:SH_DEGREE_0_COEF_0 (or COLOR_0)",
                });
            };
            notes.push(Note::ColorFromColor0 { site });
            for (splat, rgba) in sh.chunks_exact_mut(stride).zip(values.chunks_exact(*width)) {
                let srgb_was_decoded =
                    colors.color0_is_linear && colors.space == ColorSpace::SrgbRec709Display;
                for c in 0..3 {
                    splat[c] =
                        color::dc_from_display(color::color0_display(rgba[c], srgb_was_decoded));
                }
            }
        }
    }
    sh::read_rest(&reader, &plan, &mut sh, notes)?;
    if colors.space == ColorSpace::LinRec709Display {
        for splat in sh.chunks_exact_mut(stride) {
            color::linear_sh_to_srgb(splat);
        }
    }

    let logits = opacities(&reader, primitive, color0.as_ref(), notes)?;
    let geometry = (0..n)
        .map(|i| SplatGeometry {
            position: [positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]],
            opacity_logit: logits[i],
            rotation: rotations[i],
            log_scale: scales[i],
            _pad: 0.0,
        })
        .collect();
    Ok(RawSplats {
        geometry,
        sh,
        degree: plan.degree,
        antialiased: antialiased(primitive),
        pending_scale: evidence,
    })
}

/// POSITION's count, the primitive's splat count. POSITION must have data behind
/// it: that bounds every allocation by the file's size.
fn position_count(root: &Root, site: Site, accessor: usize) -> Result<u64, GltfError> {
    let position: &Accessor = get(&root.accessors, Kind::Accessor, accessor, || {
        format!("{site} POSITION")
    })?;
    if position.buffer_view.is_none() {
        return Err(GltfError::NoData {
            site,
            attribute: attributes::POSITION.to_owned(),
            accessor,
        });
    }
    if position.count > MAX_SPLATS_PER_PRIMITIVE {
        return Err(GltfError::TooManySplats {
            count: position.count,
            max: MAX_SPLATS_PER_PRIMITIVE,
        });
    }
    Ok(position.count)
}

fn required(
    reader: &Reader<'_, '_>,
    primitive: &Primitive,
    splat: Splat,
) -> Result<(String, usize), GltfError> {
    attributes::find(&primitive.attributes, splat).ok_or(GltfError::MissingAttribute {
        site: reader.site,
        attribute: match splat {
            Splat::Rotation => "KHR_gaussian_splatting:ROTATION",
            Splat::Scale => "KHR_gaussian_splatting:SCALE",
            Splat::Opacity => "KHR_gaussian_splatting:OPACITY",
        },
    })
}

/// An exact attribute's values, or `None` (with a note) where they disagree with the
/// spec attribute beside them.
fn exact_values(
    reader: &Reader<'_, '_>,
    primitive: &Primitive,
    name: &'static str,
    allowed: &attribute_read::Allowed,
    agree: impl Fn(&[f32]) -> bool,
    notes: &mut Vec<Note>,
) -> Result<Option<Vec<f32>>, GltfError> {
    let Some(&accessor) = primitive.attributes.get(name) else {
        return Ok(None);
    };
    let (_, values) = reader.read(name, accessor, allowed)?;
    if agree(&values) {
        Ok(Some(values))
    } else {
        notes.push(Note::ExactAttributesIgnored {
            site: reader.site,
            attribute: name,
        });
        Ok(None)
    }
}

/// Rotations as w x y z.
fn rotations(
    reader: &Reader<'_, '_>,
    primitive: &Primitive,
    notes: &mut Vec<Note>,
) -> Result<Vec<[f32; 4]>, GltfError> {
    let (name, accessor) = required(reader, primitive, Splat::Rotation)?;
    let (_, xyzw) = reader.read(&name, accessor, &attribute_read::ROTATION)?;
    let exact = exact_values(
        reader,
        primitive,
        attributes::EXACT_ROTATION,
        &attribute_read::EXACT_VEC4,
        |e| exact::rotations_agree(e, &xyzw),
        notes,
    )?;
    let source = exact.as_deref().unwrap_or(&xyzw);
    Ok(source
        .chunks_exact(4)
        .map(|q| [q[3], q[0], q[1], q[2]])
        .collect())
}

/// Scales (3 per splat) and, unless exact log scales were found, the evidence for
/// deciding whether they are linear or log.
fn scales(
    reader: &Reader<'_, '_>,
    primitive: &Primitive,
    notes: &mut Vec<Note>,
) -> Result<(Vec<[f32; 3]>, Option<ScaleEvidence>), GltfError> {
    let (name, accessor) = required(reader, primitive, Splat::Scale)?;
    let (format, values) = reader.read(&name, accessor, &attribute_read::SCALE)?;
    let width = format.shape.components();
    let exact = exact_values(
        reader,
        primitive,
        attributes::EXACT_LOG_SCALE,
        &attribute_read::EXACT_VEC3,
        |e| exact::log_scales_agree(e, &values),
        notes,
    )?;
    if let Some(exact) = exact {
        return Ok((
            exact.chunks_exact(3).map(|s| [s[0], s[1], s[2]]).collect(),
            None,
        ));
    }
    let evidence = ScaleEvidence::of(format.component.is_signed_int(), &values);
    let scales = values
        .chunks_exact(width)
        .map(|s| {
            if width == 1 {
                [s[0]; 3]
            } else {
                [s[0], s[1], s[2]]
            }
        })
        .collect();
    Ok((scales, Some(evidence)))
}

/// COLOR_0 as floats in 0..1 and its width (3 or 4), if the primitive has one.
fn color0(
    reader: &Reader<'_, '_>,
    primitive: &Primitive,
    notes: &mut Vec<Note>,
) -> Result<Option<(usize, Vec<f32>)>, GltfError> {
    let Some(&accessor) = primitive.attributes.get(attributes::COLOR_0) else {
        return Ok(None);
    };
    let (format, mut values) =
        reader.read(attributes::COLOR_0, accessor, &attribute_read::COLOR_0)?;
    if !format.normalized {
        let max = match format.component {
            super::accessors::Component::U8 => Some(255.0),
            super::accessors::Component::U16 => Some(65535.0),
            _ => None,
        };
        if let Some(max) = max {
            notes.push(Note::Color0NotNormalized { site: reader.site });
            values.iter_mut().for_each(|v| *v /= max);
        }
    }
    Ok(Some((format.shape.components(), values)))
}

/// Opacity logits: OPACITY, else COLOR_0's alpha, else opaque.
fn opacities(
    reader: &Reader<'_, '_>,
    primitive: &Primitive,
    color0: Option<&(usize, Vec<f32>)>,
    notes: &mut Vec<Note>,
) -> Result<Vec<f32>, GltfError> {
    let site = reader.site;
    let n = reader.count as usize;
    let linear: Vec<f32> = match attributes::find(&primitive.attributes, Splat::Opacity) {
        Some((name, accessor)) => reader.read(&name, accessor, &attribute_read::OPACITY)?.1,
        None => match color0 {
            Some((4, rgba)) => {
                notes.push(Note::OpacityFromColor0 { site });
                rgba.chunks_exact(4).map(|c| c[3]).collect()
            }
            _ => {
                notes.push(Note::OpacityMissing { site });
                vec![1.0; n]
            }
        },
    };
    let exact = exact_values(
        reader,
        primitive,
        attributes::EXACT_OPACITY_LOGIT,
        &attribute_read::EXACT_SCALAR,
        |e| exact::logits_agree(e, &linear),
        notes,
    )?;
    if let Some(exact) = exact {
        return Ok(exact);
    }
    let mut out_of_range = 0;
    let logits = linear
        .iter()
        .map(|&o| {
            let (logit, bad) = opacity_logit(o);
            out_of_range += usize::from(bad);
            logit
        })
        .collect();
    if out_of_range > 0 {
        notes.push(Note::OpacityOutOfRange {
            site,
            count: out_of_range,
        });
    }
    Ok(logits)
}

/// The antialiasing flag bevy_splat's writer keeps in the primitive's `extras`
/// (`{"bevy_splat": {"antialiased": true}}`); the spec has no such property.
fn antialiased(primitive: &Primitive) -> bool {
    primitive.extras["bevy_splat"]["antialiased"]
        .as_bool()
        .unwrap_or(false)
}
