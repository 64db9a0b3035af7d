//! Which glTF extensions this loader knows, which required ones it refuses, and what
//! kind of splat primitive each mesh primitive is.

use serde_json::Value;

use super::document::{GaussianSplatting, Primitive, Root, SpzCompression};
use super::error::{GltfError, Site};

/// The ratified base extension (Khronos glTF `extensions/2.0/Khronos/KHR_gaussian_splatting`).
pub const KHR_GAUSSIAN_SPLATTING: &str = "KHR_gaussian_splatting";
/// SPZ compression nested in the base extension (draft of 2025-10).
pub const KHR_SPZ_2: &str = "KHR_gaussian_splatting_compression_spz_2";
/// The same, as named before the `_2` suffix was added (2025-07); Cesium still reads it.
pub const KHR_SPZ_UNVERSIONED: &str = "KHR_gaussian_splatting_compression_spz";
/// The pre-split draft: SPZ at primitive level, no base extension object (2025-06).
pub const KHR_SPZ_LEGACY: &str = "KHR_spz_gaussian_splats_compression";
/// Quantized POSITION, which the accessor reader handles.
const KHR_MESH_QUANTIZATION: &str = "KHR_mesh_quantization";

const SUPPORTED: [&str; 5] = [
    KHR_GAUSSIAN_SPLATTING,
    KHR_SPZ_2,
    KHR_SPZ_UNVERSIONED,
    KHR_SPZ_LEGACY,
    KHR_MESH_QUANTIZATION,
];

/// Required extensions of these families only change materials and textures, which
/// splat rendering ignores (KHR_gaussian_splatting, "Dependencies on glTF"). Cesium's
/// SPZ files require `KHR_materials_unlit`, so refusing them would refuse real files.
const IGNORABLE_PREFIXES: [&str; 3] = ["KHR_materials_", "KHR_texture_", "EXT_texture_"];

/// Refuses a document that requires an extension the splats could depend on and this
/// loader does not implement.
pub(crate) fn check_required(root: &Root) -> Result<(), GltfError> {
    for name in &root.extensions_required {
        let known = SUPPORTED.contains(&name.as_str())
            || IGNORABLE_PREFIXES.iter().any(|p| name.starts_with(p));
        if !known {
            return Err(GltfError::UnsupportedRequiredExtension(name.clone()));
        }
    }
    Ok(())
}

/// Where a splat primitive's data comes from.
pub(crate) enum Source {
    /// Accessors of the base extension (or the pre-2025-06 draft's `_`-prefixed names).
    Accessors,
    /// An SPZ blob in this bufferView.
    Spz { buffer_view: usize },
}

/// A mesh primitive that holds splats.
pub(crate) struct SplatPrimitive {
    pub site: Site,
    pub source: Source,
    /// The base extension object; `None` for the legacy SPZ draft, which had none.
    pub khr: Option<GaussianSplatting>,
    /// Extension names found on the primitive or nested in the base extension that
    /// this loader skipped.
    pub ignored: Vec<String>,
}

/// Why a mesh primitive is not a splat primitive, for a note.
pub(crate) enum NotSplats {
    /// No splat extension at all: an ordinary mesh.
    Plain,
    /// A splat extension on a primitive whose `mode` is not POINTS (0).
    NotPoints { mode: u32 },
}

fn parse_ext<T: serde::de::DeserializeOwned>(
    site: Site,
    name: &'static str,
    value: &Value,
) -> Result<T, GltfError> {
    T::deserialize(value).map_err(|e| GltfError::InvalidExtension {
        site,
        name,
        message: e.to_string(),
    })
}

/// Classifies one primitive. Compression extensions take precedence over the
/// primitive's accessors, as the SPZ drafts' conformance sections require.
pub(crate) fn classify(
    site: Site,
    primitive: &Primitive,
) -> Result<Result<SplatPrimitive, NotSplats>, GltfError> {
    let khr_value = primitive.extensions.get(KHR_GAUSSIAN_SPLATTING);
    let legacy_value = primitive.extensions.get(KHR_SPZ_LEGACY);
    if khr_value.is_none() && legacy_value.is_none() {
        return Ok(Err(NotSplats::Plain));
    }
    let mode = primitive.mode.unwrap_or(4);
    if mode != 0 {
        return Ok(Err(NotSplats::NotPoints { mode }));
    }

    let khr: Option<GaussianSplatting> = khr_value
        .map(|v| parse_ext(site, KHR_GAUSSIAN_SPLATTING, v))
        .transpose()?;
    let mut ignored: Vec<String> = primitive
        .extensions
        .keys()
        .filter(|k| *k != KHR_GAUSSIAN_SPLATTING && *k != KHR_SPZ_LEGACY)
        .cloned()
        .collect();

    let mut spz = None;
    if let Some(khr) = &khr {
        for (name, value) in &khr.extensions {
            match name.as_str() {
                KHR_SPZ_2 => spz = Some(parse_ext::<SpzCompression>(site, KHR_SPZ_2, value)?),
                KHR_SPZ_UNVERSIONED if spz.is_none() => {
                    spz = Some(parse_ext(site, KHR_SPZ_UNVERSIONED, value)?)
                }
                KHR_SPZ_UNVERSIONED => {}
                _ => ignored.push(name.clone()),
            }
        }
    }
    if spz.is_none()
        && let Some(value) = legacy_value
    {
        spz = Some(parse_ext::<SpzCompression>(site, KHR_SPZ_LEGACY, value)?);
    }

    let source = match spz {
        Some(SpzCompression { buffer_view }) => Source::Spz { buffer_view },
        None => Source::Accessors,
    };
    Ok(Ok(SplatPrimitive {
        site,
        source,
        khr,
        ignored,
    }))
}
