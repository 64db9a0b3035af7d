//! The model of a meta.json, v1 or v2, once checked (see `meta_parse`).
//!
//! v2 (`"version": 2`, splat-transform from 0.7 on, commit 66dc153): `count`; `means`
//! with `mins`/`maxs` of the log-transformed positions; `scales`, `sh0` and `shN`
//! with 256-entry codebooks; `shN.bands` and `shN.count`. v1 (no `version`, up to
//! splat-transform 0.6): every property has `shape` and per-channel `mins`/`maxs`,
//! quantised linearly; `shN` has scalar `mins`/`maxs` and its band count is implied
//! by the centroid image's width.

/// Which generation of the format a meta.json describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SogVersion {
    /// No `version` key: splat-transform up to 0.6, linear quantisation throughout.
    V1,
    /// `"version": 2`: codebooks for scales and colours, the SH band count stated.
    V2,
}

/// The 256 values an 8-bit index selects.
pub(crate) type Codebook = Box<[f32; 256]>;

/// How the colour (sh0) image is to be read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ColourCoding {
    /// v2: RGB index the codebook (f_dc values); alpha is sigmoid(opacity) * 255.
    Codebook(Codebook),
    /// v1: RGB and alpha are linear in f_dc and in the opacity logit.
    Linear { mins: [f32; 4], maxs: [f32; 4] },
}

/// How the scale image is to be read (values are natural-log scales either way).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ScaleCoding {
    Codebook(Codebook),
    Linear { mins: [f32; 3], maxs: [f32; 3] },
}

/// How a centroid texel's bytes become SH coefficients.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ShCoding {
    Codebook(Codebook),
    Linear { min: f32, max: f32 },
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ShNMeta {
    pub centroids_file: String,
    pub labels_file: String,
    /// v2 states it; v1 leaves it to the centroid image's width.
    pub bands: Option<u8>,
    /// v2's `shN.count`; v1 has none (the image's capacity is the palette).
    pub palette: Option<usize>,
    pub coding: ShCoding,
}

/// A parsed and checked meta.json.
#[derive(Clone, Debug, PartialEq)]
pub struct SogMeta {
    pub(crate) version: SogVersion,
    pub(crate) count: usize,
    pub(crate) antialiased: bool,
    pub(crate) means_files: [String; 2],
    /// Range of sign(x)·ln(|x|+1) per axis, as both versions store it.
    pub(crate) means_mins: [f64; 3],
    pub(crate) means_maxs: [f64; 3],
    pub(crate) quats_file: String,
    pub(crate) scales_file: String,
    pub(crate) scales: ScaleCoding,
    pub(crate) sh0_file: String,
    pub(crate) sh0: ColourCoding,
    pub(crate) sh_n: Option<ShNMeta>,
}

impl SogMeta {
    /// The format generation the file is.
    pub fn version(&self) -> SogVersion {
        self.version
    }

    /// Splats the scene claims (v2 `count`, v1 `means.shape[0]`).
    pub fn count(&self) -> usize {
        self.count
    }

    /// SH degree, when meta.json alone tells it (v1 with SH leaves it to the image).
    pub fn sh_degree(&self) -> Option<u8> {
        match &self.sh_n {
            None => Some(0),
            Some(sh) => sh.bands,
        }
    }

    /// Whether the scene was trained with antialiasing (`"model": "antialiased"`, or
    /// `"antialias": true`).
    pub fn antialiased(&self) -> bool {
        self.antialiased
    }

    /// The images to fetch, relative to meta.json, each once, in decoding order.
    pub fn image_files(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::with_capacity(7);
        let sh = self
            .sh_n
            .iter()
            .flat_map(|sh| [sh.centroids_file.as_str(), sh.labels_file.as_str()]);
        let all = [
            self.means_files[0].as_str(),
            self.means_files[1].as_str(),
            self.quats_file.as_str(),
            self.scales_file.as_str(),
            self.sh0_file.as_str(),
        ];
        for name in all.into_iter().chain(sh) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }
}
