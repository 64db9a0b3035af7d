//! From a checked meta.json and its images' bytes to `DecodedSplats`.

use crate::asset::decoded::DecodedSplats;

use super::error::SogError;
use super::images::{self, Image, Job};
use super::meta::SogMeta;
use super::options::DecodeOptions;
use super::splats::{self, PerSplat, REST_COEFFS, Rest};

/// Decodes a scene whose images the caller has read: `images` returns the bytes of
/// a file named in meta.json (see [`SogMeta::image_files`]), or `None` if it has none.
pub fn decode_images<'a>(
    meta: &SogMeta,
    images: impl FnMut(&str) -> Option<&'a [u8]>,
) -> Result<DecodedSplats, SogError> {
    decode_images_with(meta, images, &DecodeOptions::default())
}

/// [`decode_images`] with explicit limits and threading.
pub fn decode_images_with<'a>(
    meta: &SogMeta,
    mut images: impl FnMut(&str) -> Option<&'a [u8]>,
    options: &DecodeOptions,
) -> Result<DecodedSplats, SogError> {
    let count = meta.count;
    if count > options.max_splats {
        return Err(SogError::CountTooLarge {
            count: count as u64,
            limit: options.max_splats as u64,
        });
    }

    let names = meta.image_files();
    let mut fetched = Vec::with_capacity(names.len());
    for name in &names {
        let bytes = images(name).ok_or_else(|| SogError::MissingImage((*name).to_owned()))?;
        fetched.push((*name, bytes));
    }
    let decoded = decode_webps(meta, &fetched, options)?;
    let image = |name: &str| -> Result<&Image, SogError> {
        let image = names
            .iter()
            .position(|n| *n == name)
            .and_then(|i| decoded.get(i))
            .ok_or_else(|| SogError::MissingImage(name.to_owned()))?;
        image.require(count)?;
        Ok(image)
    };
    let per_splat = PerSplat {
        means_l: image(&meta.means_files[0])?,
        means_u: image(&meta.means_files[1])?,
        quats: image(&meta.quats_file)?,
        scales: image(&meta.scales_file)?,
        sh0: image(&meta.sh0_file)?,
    };
    let rest = match &meta.sh_n {
        None => None,
        Some(sh_n) => Some(Rest {
            meta: sh_n,
            labels: image(&sh_n.labels_file)?,
            // The palette is not per splat, so `count` says nothing about its size.
            centroids: names
                .iter()
                .position(|n| *n == sh_n.centroids_file)
                .and_then(|i| decoded.get(i))
                .ok_or_else(|| SogError::MissingImage(sh_n.centroids_file.clone()))?,
        }),
    };

    let geometry = splats::geometry(meta, &per_splat, count, options.threads);
    let (degree, sh) = splats::sh(meta, per_splat.sh0, rest, count, options.threads)?;
    Ok(DecodedSplats::from_parts(
        geometry,
        sh,
        degree,
        meta.antialiased,
    ))
}

/// Decodes every named image (in parallel where possible) after checking each
/// header against the texel budget; the first failure, in meta.json order, wins.
fn decode_webps(
    meta: &SogMeta,
    fetched: &[(&str, &[u8])],
    options: &DecodeOptions,
) -> Result<Vec<Image>, SogError> {
    let pixel_limit = options.image_pixel_limit(meta.count);
    let centroid_widths = centroid_widths(meta);
    let centroids = meta.sh_n.as_ref().map(|s| s.centroids_file.as_str());
    let mut jobs: Vec<(usize, Job<'_>)> = fetched
        .iter()
        .enumerate()
        .map(|(i, (file, bytes))| {
            let widths: &[u32] = if Some(*file) == centroids {
                &centroid_widths
            } else {
                &[]
            };
            (
                i,
                Job {
                    file,
                    bytes,
                    pixel_limit,
                    widths,
                },
            )
        })
        .collect();
    // Largest first, so that the last image to start is a small one.
    jobs.sort_by_key(|(_, job)| std::cmp::Reverse(job.bytes.len()));
    let order: Vec<usize> = jobs.iter().map(|(i, _)| *i).collect();
    let jobs: Vec<Job<'_>> = jobs.into_iter().map(|(_, job)| job).collect();

    let mut results: Vec<Option<Result<Image, SogError>>> = fetched.iter().map(|_| None).collect();
    for (result, i) in images::decode_all(&jobs, options.threads)
        .into_iter()
        .zip(order)
    {
        if let Some(slot) = results.get_mut(i) {
            *slot = Some(result);
        }
    }
    results
        .into_iter()
        .zip(fetched)
        .map(|(result, (file, _))| {
            result.unwrap_or_else(|| Err(SogError::MissingImage((*file).to_owned())))
        })
        .collect()
}

/// The centroid widths meta.json allows: v2 states its bands; v1 accepts any of
/// 1, 2 or 3 bands and learns which from the width.
fn centroid_widths(meta: &SogMeta) -> Vec<u32> {
    let per_row = |coeffs: usize| 64 * coeffs as u32;
    match meta.sh_n.as_ref().and_then(|s| s.bands) {
        Some(bands) => vec![per_row(REST_COEFFS[usize::from(bands.min(3))])],
        None => REST_COEFFS[1..].iter().map(|&c| per_row(c)).collect(),
    }
}
