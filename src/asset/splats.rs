use bevy::asset::Asset;
use bevy::camera::primitives::Aabb;
use bevy::reflect::{Reflect, TypePath};
use serde::{Deserialize, Serialize};

use super::bounds::splat_bounds;
use std::sync::Arc;

use super::decoded::{DecodedSplats, DecodedTree, SplatGeometry, sh_stride};

/// How an asset's splats are stored on the GPU. The choice trades memory and
/// preprocess time for a small, measured change of the image (BENCHMARKS.md has the
/// numbers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, Reflect)]
pub enum SplatStorage {
    /// Everything as f32, as trained: 48 bytes of geometry and 4 per SH float (240 at
    /// degree 3). The reference image.
    Full,
    /// The default: f32 geometry, SH coefficients as f16 (48 + 96 bytes at degree 3).
    /// Colours stay within 1/255 of `Full`; on the H200 the preprocess of 5.8 M
    /// degree-3 splats takes 0.80 instead of 1.53 ms, and the image is as close to
    /// gsplat's as `Full`'s (67.3 dB on the SH3 grid).
    #[default]
    HalfSh,
    /// Quantised (`render::compact`): positions in 21 bits per axis within the box of
    /// each run of 256 splats, the rotation in 32 bits, scales, opacity and DC colour
    /// as f16, and one byte per higher SH coefficient scaled per splat (28 + 45 bytes
    /// at degree 3, 28 at degree 0). For scenes that must fit in less memory; about
    /// 1 dB further from gsplat's image than `HalfSh` on the SH3 grid.
    Compact,
}

/// A trained Gaussian splat scene on the CPU, laid out the way the GPU reads it.
///
/// Values are kept as the trainer stored them (log-scales, opacity logits, unnormalised
/// quaternions): the GPU applies the activations, so that every splat, valid or not,
/// goes through the same culling rules.
#[derive(Asset, TypePath, Clone, Debug)]
pub struct GaussianSplats {
    geometry: Vec<SplatGeometry>,
    sh: Vec<f32>,
    sh_degree: u8,
    bounds: Option<Aabb>,
    storage: SplatStorage,
    antialiased: bool,
    /// A level-of-detail tree the file brought (Spark's `.rad`), used instead of one
    /// built when a camera asks for level of detail.
    file_tree: Option<Arc<DecodedTree>>,
    /// The file this asset streams the rest of its tree from, when it was loaded as a
    /// stream (its splats are then the file's first chunk).
    #[cfg(feature = "rad")]
    stream: Option<Arc<super::stream::SplatStreamSource>>,
}

impl GaussianSplats {
    /// Builds a cloud from per-splat geometry and spherical-harmonic coefficients.
    ///
    /// `sh` holds `3 * (sh_degree + 1)²` floats per splat, coefficient-major
    /// (`sh[i * stride + 3 * k + channel]`, `k = 0` being the DC term).
    /// Returns `None` when the degree is above 3 or the lengths disagree.
    pub fn new(geometry: Vec<SplatGeometry>, sh: Vec<f32>, sh_degree: u8) -> Option<Self> {
        if sh_degree > 3 {
            return None;
        }
        let stride = sh_stride(sh_degree);
        if geometry.len().checked_mul(stride)? != sh.len() {
            return None;
        }
        let bounds = splat_bounds(&geometry);
        Some(Self {
            geometry,
            sh,
            sh_degree,
            bounds,
            storage: SplatStorage::default(),
            antialiased: false,
            file_tree: None,
            #[cfg(feature = "rad")]
            stream: None,
        })
    }

    /// Number of splats.
    pub fn len(&self) -> usize {
        self.geometry.len()
    }

    /// `true` when the cloud holds no splat.
    pub fn is_empty(&self) -> bool {
        self.geometry.is_empty()
    }

    /// Spherical-harmonic degree, 0 to 3, as loaded.
    pub fn sh_degree(&self) -> u8 {
        self.sh_degree
    }

    /// Floats of SH data per splat: `3 * (degree + 1)²`.
    pub fn sh_stride(&self) -> usize {
        sh_stride(self.sh_degree)
    }

    /// Gives the cloud a level-of-detail tree over its splats, as a file stores one
    /// (its leaves must be this cloud's splats, in order). A camera with `SplatLod`
    /// draws cuts of it instead of building a tree; one that does not fit the cloud is
    /// set aside and a tree built.
    pub fn with_file_tree(mut self, tree: DecodedTree) -> Self {
        self.file_tree = Some(Arc::new(tree));
        self
    }

    /// Makes the asset the head of a stream: its splats are the first chunk of
    /// `source`'s tree, and `crate::streaming` fetches the rest as cameras need it.
    #[cfg(feature = "rad")]
    pub fn with_stream(mut self, source: super::stream::SplatStreamSource) -> Self {
        self.stream = Some(Arc::new(source));
        self
    }

    /// The file this asset streams from, when it was loaded as a stream.
    #[cfg(feature = "rad")]
    pub fn stream(&self) -> Option<&Arc<super::stream::SplatStreamSource>> {
        self.stream.as_ref()
    }

    /// The level-of-detail tree the file brought, if any.
    pub fn file_tree(&self) -> Option<&DecodedTree> {
        self.file_tree.as_deref()
    }

    /// Position, opacity logit, rotation and log-scale of every splat.
    pub fn geometry(&self) -> &[SplatGeometry] {
        &self.geometry
    }

    /// Spherical-harmonic coefficients, `sh_stride()` floats per splat.
    pub fn sh(&self) -> &[f32] {
        &self.sh
    }

    /// Stores the SH coefficients on the GPU as f16 (`true`, the default: half their
    /// memory, 96 instead of 192 bytes per splat at degree 3, for colours within 1/255
    /// of f32 storage) or as f32 (`false`). Shorthand for
    /// [`with_storage`](Self::with_storage)`(SplatStorage::HalfSh)` (or `Full`).
    pub fn with_half_precision_sh(self, half: bool) -> Self {
        self.with_storage(if half {
            SplatStorage::HalfSh
        } else {
            SplatStorage::Full
        })
    }

    /// Whether the GPU copy keeps SH coefficients as f16.
    pub fn half_precision_sh(&self) -> bool {
        self.storage == SplatStorage::HalfSh
    }

    /// Chooses how the GPU stores the splats ([`SplatStorage`]).
    pub fn with_storage(mut self, storage: SplatStorage) -> Self {
        self.storage = storage;
        self
    }

    /// How the GPU stores the splats ([`SplatStorage::HalfSh`] unless chosen).
    pub fn storage(&self) -> SplatStorage {
        self.storage
    }

    /// Marks the scene as trained with antialiasing (Mip-Splatting's 2-D filter,
    /// gsplat's `rasterize_mode="antialiased"`): clouds of it draw in
    /// [`SplatRasterMode::Antialiased`](crate::SplatRasterMode) unless they say
    /// otherwise. Loaders set it from the file (SPZ's flag, SOG's `antialias`).
    pub fn with_antialiased(mut self, antialiased: bool) -> Self {
        self.antialiased = antialiased;
        self
    }

    /// Whether the file says the scene was trained with antialiasing.
    pub fn antialiased(&self) -> bool {
        self.antialiased
    }

    /// Box holding every finite splat out to three standard deviations, in the
    /// cloud's own frame; `None` when no splat is finite.
    pub fn bounds(&self) -> Option<Aabb> {
        self.bounds
    }
}

impl From<DecodedSplats> for GaussianSplats {
    fn from(decoded: DecodedSplats) -> Self {
        let bounds = splat_bounds(&decoded.geometry);
        Self {
            geometry: decoded.geometry,
            sh: decoded.sh,
            sh_degree: decoded.sh_degree,
            bounds,
            storage: SplatStorage::default(),
            antialiased: decoded.antialiased,
            file_tree: None,
            #[cfg(feature = "rad")]
            stream: None,
        }
    }
}

/// The asset's splats as a decoder hands them over, for writing them out
/// (`formats::ply::write`, `formats::gltf::write_glb`).
impl From<&GaussianSplats> for DecodedSplats {
    fn from(splats: &GaussianSplats) -> Self {
        DecodedSplats::from_parts(
            splats.geometry.clone(),
            splats.sh.clone(),
            splats.sh_degree,
            splats.antialiased,
        )
    }
}
