//! A parsed glTF file before decoding: the JSON, the GLB binary chunk, the embedded
//! buffers, and the names of the external files the splats still need.

use std::collections::BTreeSet;

use super::attributes;
use super::document::Root;
use super::error::GltfError;
use super::extensions::{self, Source};
use super::glb;
use super::uri::{self, BufferUri, UriProblem};

/// Where one buffer's bytes come from.
pub(crate) enum BufferSource {
    /// The GLB binary chunk (buffer 0 without a uri).
    Bin,
    Embedded(Vec<u8>),
    /// A file relative to the glTF, percent-decoded.
    External(String),
    /// No uri, and no binary chunk to stand for it.
    Missing,
    /// Not read by any splat primitive, so left unresolved.
    Unused,
}

/// A glTF or GLB file, parsed but not decoded. It borrows the GLB's binary chunk.
pub struct GltfDocument<'a> {
    pub(crate) root: Root,
    pub(crate) bin: Option<&'a [u8]>,
    pub(crate) buffers: Vec<BufferSource>,
}

impl GltfDocument<'_> {
    /// The external files (URIs relative to the .gltf, percent-decoded) that the
    /// splats need, in buffer order: fetch these and hand them to `decode`.
    pub fn external_buffers(&self) -> Vec<String> {
        let mut seen = BTreeSet::new();
        self.buffers
            .iter()
            .filter_map(|b| match b {
                BufferSource::External(uri) if seen.insert(uri.clone()) => Some(uri.clone()),
                _ => None,
            })
            .collect()
    }

    /// Whether the file came as GLB.
    pub fn is_glb(&self) -> bool {
        self.bin.is_some()
    }
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Parses a `.gltf` (JSON) or `.glb` file, told apart by content.
pub fn parse(bytes: &[u8]) -> Result<GltfDocument<'_>, GltfError> {
    let (json, bin) = if bytes.starts_with(&glb::MAGIC) {
        let chunks = glb::split(bytes)?;
        (chunks.json, chunks.bin)
    } else {
        let text = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
        if text.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Err(GltfError::NotGltf {
                found: bytes.iter().take(4).copied().collect(),
            });
        }
        (text, None)
    };
    // The JSON chunk of a GLB may carry a BOM too, although the spec forbids it.
    let json = json.strip_prefix(UTF8_BOM).unwrap_or(json);
    let root: Root = serde_json::from_slice(json).map_err(|e| GltfError::Json(e.to_string()))?;
    check_version(&root)?;
    extensions::check_required(&root)?;

    let needed = needed_buffers(&root)?;
    let buffers = root
        .buffers
        .iter()
        .enumerate()
        .map(|(index, buffer)| {
            if !needed.contains(&index) {
                return Ok(BufferSource::Unused);
            }
            match &buffer.uri {
                None if index == 0 && bin.is_some() => Ok(BufferSource::Bin),
                None => Ok(BufferSource::Missing),
                Some(u) => match uri::resolve(u) {
                    Ok(BufferUri::Data(data)) => Ok(BufferSource::Embedded(data)),
                    Ok(BufferUri::External(path)) => Ok(BufferSource::External(path)),
                    Err(UriProblem::Data(reason)) => Err(GltfError::DataUri {
                        buffer: index,
                        reason,
                    }),
                    Err(UriProblem::Path) => Err(GltfError::InvalidUri {
                        buffer: index,
                        uri: u.clone(),
                    }),
                },
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(GltfDocument { root, bin, buffers })
}

fn check_version(root: &Root) -> Result<(), GltfError> {
    let major = |v: &str| v.split('.').next().map(str::to_owned);
    let unsupported = |version: &str| GltfError::UnsupportedVersion {
        version: version.to_owned(),
    };
    if major(&root.asset.version).as_deref() != Some("2") {
        return Err(unsupported(&root.asset.version));
    }
    if let Some(min) = &root.asset.min_version {
        let mut parts = min.split('.');
        if !matches!((parts.next(), parts.next()), (Some("2"), Some("0"))) {
            return Err(unsupported(min));
        }
    }
    Ok(())
}

/// The buffers that any splat primitive reads. Indices that point nowhere are skipped
/// here; decoding reports them where they are used.
fn needed_buffers(root: &Root) -> Result<BTreeSet<usize>, GltfError> {
    let mut views = BTreeSet::new();
    for (mesh_index, mesh) in root.meshes.iter().enumerate() {
        for (primitive_index, primitive) in mesh.primitives.iter().enumerate() {
            let site = super::error::Site {
                mesh: mesh_index,
                primitive: primitive_index,
            };
            let Ok(splat) = extensions::classify(site, primitive)? else {
                continue;
            };
            match splat.source {
                Source::Spz { buffer_view } => {
                    views.insert(buffer_view);
                }
                Source::Accessors => {
                    for (name, &accessor) in &primitive.attributes {
                        if !attributes::is_read(name) {
                            continue;
                        }
                        let Some(accessor) = root.accessors.get(accessor) else {
                            continue;
                        };
                        views.extend(accessor.buffer_view);
                        if let Some(sparse) = &accessor.sparse {
                            views.insert(sparse.indices.buffer_view);
                            views.insert(sparse.values.buffer_view);
                        }
                    }
                }
            }
        }
    }
    Ok(views
        .into_iter()
        .filter_map(|v| root.buffer_views.get(v).map(|view| view.buffer))
        .collect())
}
