//! Texels to splats: fills the geometry and SH arrays, in runs of splats that may
//! run on several threads.

use crate::asset::decoded::{SplatGeometry, sh_stride};

use super::attributes::{self, Colours, Means, Palette, Scales};
use super::error::SogError;
use super::images::Image;
use super::meta::{ShNMeta, SogMeta};
use super::parallel::fill_runs;

/// Rest coefficients per colour channel for SH bands 0..=3.
pub(crate) const REST_COEFFS: [usize; 4] = [0, 3, 8, 15];

/// The five per-splat images, each already checked to hold `count` texels.
pub(crate) struct PerSplat<'i> {
    pub means_l: &'i Image,
    pub means_u: &'i Image,
    pub quats: &'i Image,
    pub scales: &'i Image,
    pub sh0: &'i Image,
}

/// Position, rotation, scale and opacity of every splat.
pub(crate) fn geometry(
    meta: &SogMeta,
    images: &PerSplat<'_>,
    count: usize,
    threads: usize,
) -> Vec<SplatGeometry> {
    let means = Means::new(meta.means_mins, meta.means_maxs);
    let scale = Scales::new(&meta.scales);
    let colours = Colours::new(&meta.sh0);
    let mut out = vec![<SplatGeometry as bytemuck::Zeroable>::zeroed(); count];
    let filled = fill_runs(&mut out, 1, threads, |first, run| {
        let n = run.len();
        let texels = images
            .means_l
            .rgba(first, n)
            .zip(images.means_u.rgba(first, n))
            .zip(images.quats.rgba(first, n))
            .zip(images.scales.rgba(first, n))
            .zip(images.sh0.rgba(first, n));
        for (splat, ((((l, h), q), s), c)) in run.iter_mut().zip(texels) {
            *splat = SplatGeometry {
                position: means.decode(l, h),
                opacity_logit: colours.decode(c).1,
                rotation: attributes::rotation(q),
                log_scale: scale.decode(s),
                _pad: 0.0,
            };
        }
        Ok(())
    });
    // Geometry has no failure of its own.
    debug_assert!(filled.is_ok());
    out
}

/// The SH palette and labels of a scene with rest coefficients.
pub(crate) struct Rest<'i> {
    pub meta: &'i ShNMeta,
    pub centroids: &'i Image,
    pub labels: &'i Image,
}

/// SH coefficients, coefficient-major, and the degree they reach.
pub(crate) fn sh(
    meta: &SogMeta,
    sh0: &Image,
    rest: Option<Rest<'_>>,
    count: usize,
    threads: usize,
) -> Result<(u8, Vec<f32>), SogError> {
    let colours = Colours::new(&meta.sh0);
    let Some(rest) = rest else {
        let mut out = vec![0.0f32; count * 3];
        fill_runs(&mut out, 3, threads, |first, run| {
            let texels = sh0.rgba(first, run.len() / 3);
            for (dc, texel) in run.chunks_exact_mut(3).zip(texels) {
                dc.copy_from_slice(&colours.decode(texel).0);
            }
            Ok(())
        })?;
        return Ok((0, out));
    };

    let bands = bands(rest.meta, rest.centroids)?;
    let coeffs = REST_COEFFS[usize::from(bands)];
    let total = usize::try_from(rest.centroids.texels()).unwrap_or(usize::MAX);
    let palette = Palette::new(
        rest.centroids.rgba(0, total),
        total,
        coeffs,
        rest.meta.palette,
        &rest.meta.coding,
    );
    let stride = sh_stride(bands);
    let mut out = vec![0.0f32; count * stride];
    fill_runs(&mut out, stride, threads, |first, run| {
        let n = run.len() / stride;
        let texels = sh0.rgba(first, n).zip(rest.labels.rgba(first, n));
        for (k, (splat, (c, l))) in run.chunks_exact_mut(stride).zip(texels).enumerate() {
            let label = attributes::label(l);
            let coefficients = palette.entry(label).ok_or(SogError::LabelOutOfRange {
                splat: first + k,
                label: label as u32,
                palette: palette.entries(),
            })?;
            let (dc, higher) = splat.split_at_mut(3);
            dc.copy_from_slice(&colours.decode(c).0);
            higher.copy_from_slice(coefficients);
        }
        Ok(())
    })?;
    Ok((bands, out))
}

/// v2 states its bands; v1 leaves them to the centroid image, whose width (checked
/// against 64 × {3, 8, 15} from its header) tells them.
fn bands(meta: &ShNMeta, centroids: &Image) -> Result<u8, SogError> {
    if let Some(bands) = meta.bands {
        return Ok(bands.min(3));
    }
    REST_COEFFS
        .iter()
        .position(|&c| c > 0 && 64 * c as u32 == centroids.width)
        .map(|b| b as u8)
        .ok_or_else(|| SogError::CentroidWidth {
            file: centroids.file.clone(),
            width: centroids.width,
            expected: "192, 512 or 960".into(),
        })
}
