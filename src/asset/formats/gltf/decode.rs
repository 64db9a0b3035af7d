//! From a parsed document to the scene's nodes and their splats.

use std::collections::{BTreeMap, BTreeSet};

use super::activation::{self, ScaleEncoding, ScaleEvidence};
use super::buffers::Buffers;
use super::color::{self, ColorSpace};
use super::compressed;
use super::document::{GaussianSplatting, Root};
use super::error::{GltfError, Kind, Site, get};
use super::extensions::{self, NotSplats, Source, SplatPrimitive};
use super::notes::Note;
use super::scene;
use super::source::GltfDocument;
use super::splats::{self, Colors, RawSplats};
use crate::asset::decoded::{DecodedSplats, sh_stride};

/// How to read what the file leaves open.
#[derive(Clone, Debug)]
pub struct DecodeOptions {
    /// How SCALE values are read: linear (the ratified spec) or logs (its draft).
    pub scale_encoding: ScaleEncoding,
    /// The most splats the whole scene may hold, counting a mesh once per node that
    /// shows it (each node gets its own copy).
    pub max_scene_splats: u64,
}

/// 2^27 splats, about 32 GB decoded at SH degree 3.
pub const DEFAULT_MAX_SCENE_SPLATS: u64 = 1 << 27;

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            scale_encoding: ScaleEncoding::Auto,
            max_scene_splats: DEFAULT_MAX_SCENE_SPLATS,
        }
    }
}

/// The nodes of the file's default scene. Splats are in their node's local frame,
/// which is glTF's (+Y up, right-handed: Bevy's axes), not the RDF frame of the PLY
/// and SPZ decoders; a node's world transform is its parents' composed with its own.
#[derive(Clone, Debug)]
pub struct SplatScene {
    /// Depth-first from the roots, parents before their children.
    pub nodes: Vec<SplatNode>,
    /// Indices into `nodes`.
    pub scene_roots: Vec<usize>,
    /// Extensions found on splat primitives, or nested in `KHR_gaussian_splatting`,
    /// that were skipped (sorted, each once): worth a debug log.
    pub ignored_extensions: Vec<String>,
    /// What was read in a documented but non-obvious way: worth an info log.
    pub notes: Vec<Note>,
}

/// One node of a [`SplatScene`]: its transform relative to its parent and the splats
/// of its mesh.
#[derive(Clone, Debug)]
pub struct SplatNode {
    /// The node's `name`, if it has one.
    pub name: Option<String>,
    /// The node's index in the glTF file.
    pub gltf_index: usize,
    /// Translation relative to the parent.
    pub translation: [f32; 3],
    /// x, y, z, w, as glTF stores it.
    pub rotation: [f32; 4],
    /// Scale along the node's axes.
    pub scale: [f32; 3],
    /// Indices into `SplatScene::nodes`.
    pub children: Vec<usize>,
    /// One entry per splat primitive of the node's mesh, in primitive order.
    pub splats: Vec<DecodedSplats>,
}

/// Decodes the default scene; `fetch` returns the bytes of each URI that
/// `GltfDocument::external_buffers` listed.
pub fn decode<'b>(
    doc: &GltfDocument<'_>,
    fetch: &dyn Fn(&str) -> Option<&'b [u8]>,
) -> Result<SplatScene, GltfError> {
    decode_with(doc, fetch, &DecodeOptions::default())
}

/// [`decode`] with `options` instead of the defaults.
pub fn decode_with<'b>(
    doc: &GltfDocument<'_>,
    fetch: &dyn Fn(&str) -> Option<&'b [u8]>,
    options: &DecodeOptions,
) -> Result<SplatScene, GltfError> {
    let root = &doc.root;
    let walk = scene::walk(root)?;
    let buffers = Buffers::resolve(doc, fetch)?;
    let mut notes = Vec::new();
    let mut ignored = BTreeSet::new();

    // Each mesh once, however many nodes show it.
    let mut meshes: BTreeMap<usize, Vec<RawSplats>> = BTreeMap::new();
    let mut total: u64 = 0;
    for &node in &walk.order {
        let Some(mesh) = root.nodes[node].mesh else {
            continue;
        };
        get(&root.meshes, Kind::Mesh, mesh, || format!("node {node}"))?;
        if let std::collections::btree_map::Entry::Vacant(slot) = meshes.entry(mesh) {
            slot.insert(decode_mesh(root, &buffers, mesh, &mut notes, &mut ignored)?);
        }
        let count: u64 = meshes[&mesh].iter().map(|p| p.geometry.len() as u64).sum();
        total = total.saturating_add(count);
        if total > options.max_scene_splats {
            return Err(GltfError::TooManySplats {
                count: total,
                max: options.max_scene_splats,
            });
        }
    }

    let evidence: Vec<ScaleEvidence> = meshes
        .values()
        .flatten()
        .filter_map(|p| p.pending_scale)
        .collect();
    let log = activation::resolve(options.scale_encoding, evidence.iter().copied());
    if log && !evidence.is_empty() {
        notes.push(Note::LogScale);
    }
    let finished: BTreeMap<usize, Vec<DecodedSplats>> = meshes
        .into_iter()
        .map(|(mesh, pending)| (mesh, pending.into_iter().map(|p| finish(p, log)).collect()))
        .collect();

    let mut position = vec![usize::MAX; root.nodes.len()];
    for (i, &node) in walk.order.iter().enumerate() {
        position[node] = i;
    }
    let nodes = walk
        .order
        .iter()
        .map(|&index| {
            let node = &root.nodes[index];
            let trs = scene::local_transform(root, index, &mut notes)?;
            Ok(SplatNode {
                name: node.name.clone(),
                gltf_index: index,
                translation: trs.translation,
                rotation: trs.rotation,
                scale: trs.scale,
                children: node.children.iter().map(|&c| position[c]).collect(),
                splats: node
                    .mesh
                    .and_then(|m| finished.get(&m))
                    .cloned()
                    .unwrap_or_default(),
            })
        })
        .collect::<Result<_, GltfError>>()?;
    Ok(SplatScene {
        nodes,
        scene_roots: walk.roots,
        ignored_extensions: ignored.into_iter().collect(),
        notes,
    })
}

/// Settles the SCALE encoding and counts non-finite splats.
fn finish(mut raw: RawSplats, log: bool) -> DecodedSplats {
    if raw.pending_scale.is_some() && !log {
        for g in &mut raw.geometry {
            g.log_scale = g.log_scale.map(activation::log_scale);
        }
    }
    DecodedSplats::from_parts(raw.geometry, raw.sh, raw.degree, raw.antialiased)
}

fn decode_mesh(
    root: &Root,
    buffers: &Buffers<'_>,
    mesh: usize,
    notes: &mut Vec<Note>,
    ignored: &mut BTreeSet<String>,
) -> Result<Vec<RawSplats>, GltfError> {
    let mut out = Vec::new();
    for (index, primitive) in root.meshes[mesh].primitives.iter().enumerate() {
        let site = Site {
            mesh,
            primitive: index,
        };
        let splat = match extensions::classify(site, primitive)? {
            Ok(splat) => splat,
            Err(NotSplats::Plain) => continue,
            Err(NotSplats::NotPoints { mode }) => {
                notes.push(Note::NotPoints { site, mode });
                continue;
            }
        };
        ignored.extend(splat.ignored.iter().cloned());
        let space = describe_extension(&splat, notes);
        let raw = match splat.source {
            Source::Accessors => {
                let colors = Colors {
                    space,
                    color0_is_linear: splat.khr.as_ref().is_some_and(|k| k.color_space.is_some()),
                };
                splats::decode(root, buffers, site, primitive, colors, notes)?
            }
            Source::Spz { buffer_view } => {
                let mut decoded =
                    compressed::decode(root, buffers, site, primitive, buffer_view, notes)?;
                if space == ColorSpace::LinRec709Display {
                    for splat in decoded.sh.chunks_exact_mut(sh_stride(decoded.sh_degree)) {
                        color::linear_sh_to_srgb(splat);
                    }
                }
                RawSplats {
                    geometry: decoded.geometry,
                    sh: decoded.sh,
                    degree: decoded.sh_degree,
                    antialiased: decoded.antialiased,
                    pending_scale: None,
                }
            }
        };
        out.push(raw);
    }
    Ok(out)
}

/// Notes the base extension's unknown property values and returns its colour space.
fn describe_extension(splat: &SplatPrimitive, notes: &mut Vec<Note>) -> ColorSpace {
    let site = splat.site;
    let Some(GaussianSplatting {
        kernel,
        color_space,
        projection,
        sorting_method,
        ..
    }) = &splat.khr
    else {
        return ColorSpace::SrgbRec709Display;
    };
    if let Some(kernel) = kernel.as_ref().filter(|k| *k != "ellipse") {
        notes.push(Note::UnknownKernel {
            site,
            kernel: kernel.clone(),
        });
    }
    if let Some(projection) = projection.as_ref().filter(|p| *p != "perspective") {
        notes.push(Note::UnknownProjection {
            site,
            projection: projection.clone(),
        });
    }
    if let Some(sorting) = sorting_method.as_ref().filter(|s| *s != "cameraDistance") {
        notes.push(Note::UnknownSortingMethod {
            site,
            sorting_method: sorting.clone(),
        });
    }
    let space = color::parse(color_space.as_deref());
    match color_space.as_deref() {
        None | Some(color::SRGB) => {}
        Some(color::LINEAR) => notes.push(Note::LinearColorConverted { site }),
        Some(other) => notes.push(Note::UnknownColorSpace {
            site,
            color_space: other.to_owned(),
        }),
    }
    space
}
