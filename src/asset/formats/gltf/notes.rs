//! What decoding did that the caller may want to log: each is something the file
//! asked for that was read in a documented, non-obvious way, never an error.

use std::fmt;

use super::color::SRGB;
use super::error::Site;
use super::transform::MatrixFit;

/// One thing decoding did that the caller may want to log (its `Display` is the log
/// line). `site` is always the primitive it concerns.
#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// SCALE read as natural logs (the 2026-01 draft) rather than linear.
    LogScale,
    /// The primitive's colours were linear BT.709 and were converted to sRGB.
    LinearColorConverted {
        /// The primitive.
        site: Site,
    },
    /// A `colorSpace` this loader does not know; read as sRGB.
    UnknownColorSpace {
        /// The primitive.
        site: Site,
        /// The colour space it names.
        color_space: String,
    },
    /// A `kernel` other than "ellipse"; rendered as ellipses, as the spec's fallback says.
    UnknownKernel {
        /// The primitive.
        site: Site,
        /// The kernel it names.
        kernel: String,
    },
    /// A `projection` other than "perspective"; rendered in perspective.
    UnknownProjection {
        /// The primitive.
        site: Site,
        /// The projection it names.
        projection: String,
    },
    /// A `sortingMethod` other than "cameraDistance"; sorted by camera distance.
    UnknownSortingMethod {
        /// The primitive.
        site: Site,
        /// The method it names.
        sorting_method: String,
    },
    /// The DC colour came from COLOR_0 (no SH degree 0 attribute).
    ColorFromColor0 {
        /// The primitive.
        site: Site,
    },
    /// COLOR_0 had integer components without `normalized`; read as if normalized.
    Color0NotNormalized {
        /// The primitive.
        site: Site,
    },
    /// No OPACITY attribute; taken from COLOR_0's alpha.
    OpacityFromColor0 {
        /// The primitive.
        site: Site,
    },
    /// No OPACITY attribute and no COLOR_0 alpha: every splat opaque.
    OpacityMissing {
        /// The primitive.
        site: Site,
    },
    /// Opacities outside 0..1 (invalid per spec), clamped.
    OpacityOutOfRange {
        /// The primitive.
        site: Site,
        /// How many were clamped.
        count: usize,
    },
    /// SH attributes for degrees above 3, which bevy_splat does not render.
    ShBandsDropped {
        /// The primitive.
        site: Site,
        /// The degree dropped (one note per degree).
        degree: u32,
    },
    /// SH accessors declared VEC4 (seen in Cesium's writers); the fourth value ignored.
    ShVec4 {
        /// The primitive.
        site: Site,
    },
    /// bevy_splat's exact attributes disagreed with the spec attributes beside them (the
    /// file was edited by another tool); the spec attributes were used.
    ExactAttributesIgnored {
        /// The primitive.
        site: Site,
        /// The exact attribute ignored.
        attribute: &'static str,
    },
    /// SPZ data, and the version its header gave.
    Spz {
        /// The primitive.
        site: Site,
        /// The SPZ version.
        version: u32,
    },
    /// A splat extension on a primitive whose mode is not POINTS; skipped.
    NotPoints {
        /// The primitive.
        site: Site,
        /// Its `mode`.
        mode: u32,
    },
    /// A node matrix that is not a positive-scale rotation and translation.
    Matrix {
        /// The node.
        node: usize,
        /// How the matrix was fitted.
        fit: MatrixFit,
    },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::LogScale => f.write_str(
                "KHR_gaussian_splatting:SCALE holds negative or signed values, so it was read as log scales (the 2026-01 draft) rather than linear",
            ),
            Note::LinearColorConverted { site } => {
                write!(f, "{site}: lin_rec709_display colours converted to sRGB")
            }
            Note::UnknownColorSpace { site, color_space } => {
                write!(f, "{site}: unknown colorSpace {color_space:?}, read as {SRGB}")
            }
            Note::UnknownKernel { site, kernel } => {
                write!(f, "{site}: unknown kernel {kernel:?}, rendered as ellipses")
            }
            Note::UnknownProjection { site, projection } => {
                write!(f, "{site}: unknown projection {projection:?}, rendered in perspective")
            }
            Note::UnknownSortingMethod { site, sorting_method } => {
                write!(f, "{site}: unknown sortingMethod {sorting_method:?}, sorted by camera distance")
            }
            Note::ColorFromColor0 { site } => write!(f, "{site}: DC colour taken from COLOR_0"),
            Note::Color0NotNormalized { site } => {
                write!(f, "{site}: integer COLOR_0 without normalized read as normalized")
            }
            Note::OpacityFromColor0 { site } => write!(f, "{site}: opacity taken from COLOR_0 alpha"),
            Note::OpacityMissing { site } => write!(f, "{site}: no opacity in the file, splats opaque"),
            Note::OpacityOutOfRange { site, count } => {
                write!(f, "{site}: {count} opacities outside 0..1 clamped")
            }
            Note::ShBandsDropped { site, degree } => {
                write!(f, "{site}: SH degree {degree} attributes ignored (bevy_splat renders up to 3)")
            }
            Note::ShVec4 { site } => write!(f, "{site}: VEC4 SH accessors, fourth component ignored"),
            Note::ExactAttributesIgnored { site, attribute } => {
                write!(f, "{site}: {attribute} disagrees with the spec attributes and was ignored")
            }
            Note::Spz { site, version } => write!(f, "{site}: SPZ version {version}"),
            Note::NotPoints { site, mode } => {
                write!(f, "{site}: splat extension on a mode {mode} primitive (not POINTS), skipped")
            }
            Note::Matrix { node, fit } => write!(f, "node {node}: matrix decomposed {fit:?}"),
        }
    }
}
