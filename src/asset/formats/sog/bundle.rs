//! The `.sog` bundle: a zip holding meta.json and its images at the archive root.

use std::io::{Cursor, Read};

use zip::ZipArchive;

use crate::asset::decoded::DecodedSplats;

use super::decode::decode_images_with;
use super::error::SogError;
use super::meta_parse::parse_meta;
use super::options::DecodeOptions;

/// The entry every bundle must hold; PlayCanvas's engine looks only at the root.
pub const META_JSON: &str = "meta.json";

const ZIP_MAGIC: &[u8] = b"PK\x03\x04";

/// Whether `bytes` are a zip whose central directory lists a root `meta.json`.
/// Reads only the directory, inflates nothing.
pub fn is_sog_bundle(bytes: &[u8]) -> bool {
    bytes.starts_with(ZIP_MAGIC)
        && ZipArchive::new(Cursor::new(bytes))
            .is_ok_and(|zip| zip.index_for_name(META_JSON).is_some())
}

/// Decodes a `.sog` bundle with the default limits.
pub fn decode_bundle(zip_bytes: &[u8]) -> Result<DecodedSplats, SogError> {
    decode_bundle_with(zip_bytes, &DecodeOptions::default())
}

/// Decodes a `.sog` bundle. Only meta.json and the images it names are inflated,
/// each within `max_entry_bytes` and all within `max_total_inflated`.
pub fn decode_bundle_with(
    zip_bytes: &[u8],
    options: &DecodeOptions,
) -> Result<DecodedSplats, SogError> {
    let mut zip = ZipArchive::new(Cursor::new(zip_bytes))?;
    let mut budget = options.max_total_inflated;
    let meta_bytes =
        read_entry(&mut zip, META_JSON, &mut budget, options)?.ok_or(SogError::MissingMetaJson)?;
    let meta = parse_meta(&meta_bytes)?;
    if meta.count() > options.max_splats {
        return Err(SogError::CountTooLarge {
            count: meta.count() as u64,
            limit: options.max_splats as u64,
        });
    }
    let mut files = Vec::new();
    for name in meta.image_files() {
        let bytes = read_entry(&mut zip, name, &mut budget, options)?
            .ok_or_else(|| SogError::MissingImage(name.to_owned()))?;
        files.push((name, bytes));
    }
    decode_images_with(
        &meta,
        |name| {
            files
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, b)| b.as_slice())
        },
        options,
    )
}

/// Inflates one entry, or `None` if the archive has none of that name. The declared
/// size is checked before inflating and enforced while inflating, so an entry that
/// lies about its size cannot grow past the budget either.
fn read_entry(
    zip: &mut ZipArchive<Cursor<&[u8]>>,
    name: &str,
    budget: &mut u64,
    options: &DecodeOptions,
) -> Result<Option<Vec<u8>>, SogError> {
    let Some(index) = zip.index_for_name(name) else {
        return Ok(None);
    };
    let entry = zip.by_index(index)?;
    let declared = entry.size();
    let limit = options.max_entry_bytes.min(*budget);
    if declared > limit {
        return Err(SogError::EntryTooLarge {
            name: name.to_owned(),
            size: declared,
            limit,
        });
    }
    // Grow as data arrives rather than trusting the declared size for the allocation.
    let mut data = Vec::with_capacity(declared.min(1 << 22) as usize);
    entry
        .take(declared.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| SogError::EntryRead {
            name: name.to_owned(),
            message: e.to_string(),
        })?;
    if data.len() as u64 != declared {
        return Err(SogError::EntryRead {
            name: name.to_owned(),
            message: format!("inflates to {} bytes, but declares {declared}", data.len()),
        });
    }
    *budget -= declared;
    Ok(Some(data))
}
