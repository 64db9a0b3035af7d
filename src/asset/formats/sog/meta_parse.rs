//! meta.json text to a checked [`SogMeta`]: every key a version needs is present and
//! well-sized, so that decoding never meets a missing value.

use super::error::SogError;
use super::meta::{Codebook, ColourCoding, ScaleCoding, ShCoding, ShNMeta, SogMeta, SogVersion};
use super::meta_raw::{RawMeta, RawProperty, RawShN};

/// Parses and checks a meta.json of either version.
pub fn parse_meta(json: &[u8]) -> Result<SogMeta, SogError> {
    let raw: RawMeta = serde_json::from_slice(json)?;
    let version = match &raw.version {
        None => SogVersion::V1,
        Some(v) => match v.as_u64() {
            Some(1) => SogVersion::V1,
            Some(2) => SogVersion::V2,
            _ => return Err(SogError::UnsupportedVersion(v.to_string())),
        },
    };
    match version {
        SogVersion::V1 => parse_v1(raw),
        SogVersion::V2 => parse_v2(raw),
    }
}

fn parse_v2(raw: RawMeta) -> Result<SogMeta, SogError> {
    let antialiased = antialiased(&raw);
    let count = to_count(raw.count.ok_or(SogError::MissingKey("count"))?)?;
    let means = raw.means.ok_or(SogError::MissingKey("means"))?;
    let scales = raw.scales.ok_or(SogError::MissingKey("scales"))?;
    let quats = raw.quats.ok_or(SogError::MissingKey("quats"))?;
    let sh0 = raw.sh0.ok_or(SogError::MissingKey("sh0"))?;

    let means_files = files::<2>(means.files, "means.files")?;
    let means_mins = floats::<3>(means.mins, "means.mins")?;
    let means_maxs = floats::<3>(means.maxs, "means.maxs")?;
    let [scales_file] = files::<1>(scales.files, "scales.files")?;
    let scales_cb = codebook(scales.codebook, "scales.codebook")?;
    let [quats_file] = files::<1>(quats.files, "quats.files")?;
    let [sh0_file] = files::<1>(sh0.files, "sh0.files")?;
    let sh0_cb = codebook(sh0.codebook, "sh0.codebook")?;
    let sh_n = raw.sh_n.map(parse_sh_n_v2).transpose()?.flatten();

    Ok(SogMeta {
        version: SogVersion::V2,
        count,
        antialiased,
        means_files,
        means_mins,
        means_maxs,
        quats_file,
        scales_file,
        scales: ScaleCoding::Codebook(scales_cb),
        sh0_file,
        sh0: ColourCoding::Codebook(sh0_cb),
        sh_n,
    })
}

/// `None` when the palette has zero bands, which PlayCanvas reads as no SH.
fn parse_sh_n_v2(raw: RawShN) -> Result<Option<ShNMeta>, SogError> {
    let bands = raw.bands.ok_or(SogError::MissingKey("shN.bands"))?;
    if bands > 3 {
        return Err(SogError::BandsOutOfRange(bands));
    }
    if bands == 0 {
        return Ok(None);
    }
    let [centroids_file, labels_file] = files::<2>(raw.files, "shN.files")?;
    let coding = ShCoding::Codebook(codebook(raw.codebook, "shN.codebook")?);
    // The engine ignores `count`; when absent, the centroid image's capacity bounds
    // the labels instead. Beyond 16 bits no label could reach it anyway.
    let palette = raw.count.map(|c| c.min(1 << 16) as usize);
    Ok(Some(ShNMeta {
        centroids_file,
        labels_file,
        bands: Some(bands as u8),
        palette,
        coding,
    }))
}

fn parse_v1(raw: RawMeta) -> Result<SogMeta, SogError> {
    let antialiased = antialiased(&raw);
    let means = raw.means.ok_or(SogError::MissingKey("means"))?;
    let scales = raw.scales.ok_or(SogError::MissingKey("scales"))?;
    let quats = raw.quats.ok_or(SogError::MissingKey("quats"))?;
    let sh0 = raw.sh0.ok_or(SogError::MissingKey("sh0"))?;

    let shape = means.shape.ok_or(SogError::MissingKey("means.shape"))?;
    let count = to_count(*shape.first().ok_or(SogError::InvalidMeta {
        key: "means.shape",
        reason: "is empty".into(),
    })?)?;
    let means_files = files::<2>(means.files, "means.files")?;
    let means_mins = floats::<3>(means.mins, "means.mins")?;
    let means_maxs = floats::<3>(means.maxs, "means.maxs")?;
    let [scales_file] = files::<1>(scales.files, "scales.files")?;
    let scales = ScaleCoding::Linear {
        mins: floats::<3>(scales.mins, "scales.mins")?.map(|v| v as f32),
        maxs: floats::<3>(scales.maxs, "scales.maxs")?.map(|v| v as f32),
    };
    check_quat_encoding(&quats)?;
    let [quats_file] = files::<1>(quats.files, "quats.files")?;
    let [sh0_file] = files::<1>(sh0.files, "sh0.files")?;
    let sh0 = ColourCoding::Linear {
        mins: floats::<4>(sh0.mins, "sh0.mins")?.map(|v| v as f32),
        maxs: floats::<4>(sh0.maxs, "sh0.maxs")?.map(|v| v as f32),
    };
    let sh_n = raw.sh_n.map(parse_sh_n_v1).transpose()?;

    Ok(SogMeta {
        version: SogVersion::V1,
        count,
        antialiased,
        means_files,
        means_mins,
        means_maxs,
        quats_file,
        scales_file,
        scales,
        sh0_file,
        sh0,
        sh_n,
    })
}

fn parse_sh_n_v1(raw: RawShN) -> Result<ShNMeta, SogError> {
    let [centroids_file, labels_file] = files::<2>(raw.files, "shN.files")?;
    let min = raw.mins.ok_or(SogError::MissingKey("shN.mins"))? as f32;
    let max = raw.maxs.ok_or(SogError::MissingKey("shN.maxs"))? as f32;
    Ok(ShNMeta {
        centroids_file,
        labels_file,
        bands: None,
        palette: None,
        coding: ShCoding::Linear { min, max },
    })
}

fn check_quat_encoding(quats: &RawProperty) -> Result<(), SogError> {
    match quats.encoding.as_deref() {
        None | Some("quaternion_packed") => Ok(()),
        Some(other) => Err(SogError::InvalidMeta {
            key: "quats.encoding",
            reason: format!("{other:?} is not \"quaternion_packed\""),
        }),
    }
}

fn antialiased(raw: &RawMeta) -> bool {
    raw.model.as_deref() == Some("antialiased") || raw.antialias == Some(true)
}

fn to_count(count: u64) -> Result<usize, SogError> {
    usize::try_from(count).map_err(|_| SogError::CountTooLarge {
        count,
        limit: usize::MAX as u64,
    })
}

fn files<const N: usize>(
    files: Option<Vec<String>>,
    key: &'static str,
) -> Result<[String; N], SogError> {
    let files = files.ok_or(SogError::MissingKey(key))?;
    if files.len() < N {
        return Err(SogError::InvalidMeta {
            key,
            reason: format!("lists {} files, expected {N}", files.len()),
        });
    }
    for name in &files[..N] {
        check_file_name(name, key)?;
    }
    let mut names = files.into_iter();
    Ok(std::array::from_fn(|_| names.next().unwrap_or_default()))
}

/// Names are resolved beside meta.json by the caller, so one that is absolute, climbs
/// with `..`, or carries a scheme or drive (`:`) could reach files outside the scene.
pub(super) fn check_file_name(name: &str, key: &'static str) -> Result<(), SogError> {
    let bad = name.is_empty()
        || name.starts_with(['/', '\\'])
        || name.contains([':', '\0'])
        || name.split(['/', '\\']).any(|part| part == "..");
    if bad {
        return Err(SogError::InvalidMeta {
            key,
            reason: format!("file name {name:?} is not a plain relative path"),
        });
    }
    Ok(())
}

fn floats<const N: usize>(
    values: Option<Vec<f64>>,
    key: &'static str,
) -> Result<[f64; N], SogError> {
    let values = values.ok_or(SogError::MissingKey(key))?;
    if values.len() < N {
        return Err(SogError::InvalidMeta {
            key,
            reason: format!("has {} values, expected {N}", values.len()),
        });
    }
    Ok(std::array::from_fn(|i| values[i]))
}

fn codebook(values: Option<Vec<Option<f64>>>, key: &'static str) -> Result<Codebook, SogError> {
    let values = values.ok_or(SogError::MissingKey(key))?;
    if values.len() != 256 {
        return Err(SogError::CodebookLength {
            key,
            len: values.len(),
        });
    }
    let mut book = Box::new([f32::NAN; 256]);
    for (slot, value) in book.iter_mut().zip(&values) {
        if let Some(v) = value {
            *slot = *v as f32;
        }
    }
    // Older PlayCanvas tools wrote `null` for the first entry; the engine extrapolates
    // it from its neighbours so that such published scenes stay renderable. Any other
    // null stays NaN: the splats using it are counted as non-finite and culled.
    if values[0].is_none()
        && let (Some(second), Some(last)) = (values[1], values[255])
    {
        book[0] = (second + (second - last) / 255.0) as f32;
    }
    Ok(book)
}
