//! glTF scenes of splats as Bevy assets: [`GaussianScene`] is the node hierarchy, its
//! clouds are labeled [`GaussianSplats`] sub-assets (`Node{n}/Splats{p}`), and
//! [`SplatSceneLoader`] reads `.gltf` and `.glb` files into it.

use bevy::asset::io::Reader;
use bevy::asset::{Asset, AssetLoader, Handle, LoadContext};
use bevy::log::{debug, info, warn};
use bevy::math::{Quat, Vec3};
use bevy::reflect::TypePath;
use bevy::transform::components::Transform;

use super::beside::read_beside;
use super::formats::gltf::{self, GltfError};
use super::splats::GaussianSplats;

/// The splat nodes of one glTF scene, as its file arranges them (glTF's frame: +Y up,
/// as Bevy's). Spawn it with [`GaussianSceneRoot`](crate::GaussianSceneRoot).
#[derive(Asset, TypePath, Clone, Debug)]
pub struct GaussianScene {
    /// Parents before their children.
    pub nodes: Vec<GaussianSceneNode>,
    /// Indices into `nodes`.
    pub roots: Vec<usize>,
}

/// One node: its transform relative to its parent and the clouds of its mesh.
#[derive(Clone, Debug)]
pub struct GaussianSceneNode {
    /// The glTF node's `name`, if it has one.
    pub name: Option<String>,
    /// Relative to the parent node (to the scene root for a root).
    pub transform: Transform,
    /// Indices into [`GaussianScene::nodes`].
    pub children: Vec<usize>,
    /// One cloud per splat primitive of the node's mesh.
    pub clouds: Vec<Handle<GaussianSplats>>,
}

impl GaussianScene {
    /// Clouds in all nodes, counting a cloud once per node that shows it.
    pub fn cloud_count(&self) -> usize {
        self.nodes.iter().map(|n| n.clouds.len()).sum()
    }
}

/// Loads `.gltf` and `.glb` files whose `POINTS` primitives carry
/// `KHR_gaussian_splatting` (or its SPZ-compressed and draft forms).
#[derive(Default, TypePath)]
pub struct SplatSceneLoader;

/// The loader's name before the crate's naming scheme.
#[deprecated(note = "renamed to SplatSceneLoader")]
pub type GltfSplatLoader = SplatSceneLoader;
/// The loader's value under its former name: a unit struct's name is a value too,
/// which a type alias is not.
#[deprecated(note = "renamed to SplatSceneLoader")]
#[allow(non_upper_case_globals)]
pub const GltfSplatLoader: SplatSceneLoader = SplatSceneLoader;

/// Why a glTF splat scene did not load.
#[derive(Debug, thiserror::Error)]
pub enum SplatSceneLoadError {
    /// The file could not be read.
    #[error("could not read the glTF file: {0}")]
    Io(#[from] std::io::Error),
    /// A buffer file the glTF file names could not be read.
    #[error("could not read {path}, which the glTF file names: {message}")]
    ExternalBuffer {
        /// Its asset path (its name as written, where that did not resolve).
        path: String,
        /// Why it could not be read.
        message: String,
    },
    /// The file is not a valid glTF splat scene.
    #[error("invalid glTF splat file: {0}")]
    Gltf(#[from] GltfError),
}

/// The error's name before the crate's naming scheme.
#[deprecated(note = "renamed to SplatSceneLoadError")]
pub type GltfSplatLoadError = SplatSceneLoadError;

impl AssetLoader for SplatSceneLoader {
    type Asset = GaussianScene;
    type Settings = ();
    type Error = SplatSceneLoadError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        load_context: &mut LoadContext<'_>,
    ) -> Result<GaussianScene, SplatSceneLoadError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        let document = gltf::parse(&bytes)?;
        let mut buffers = std::collections::HashMap::new();
        for uri in document.external_buffers() {
            let data = read_beside(load_context, &uri).await.map_err(|e| {
                SplatSceneLoadError::ExternalBuffer {
                    path: e.path,
                    message: e.message,
                }
            })?;
            buffers.insert(uri, data);
        }
        let decoded = gltf::decode(&document, &|uri| buffers.get(uri).map(Vec::as_slice))?;

        let path = load_context.path().to_string();
        if !decoded.ignored_extensions.is_empty() {
            debug!(
                "{path}: skipped unknown splat extensions {:?}",
                decoded.ignored_extensions
            );
        }
        for note in &decoded.notes {
            info!("{path}: {note}");
        }
        let mut nodes = Vec::with_capacity(decoded.nodes.len());
        let mut splats = 0;
        for (n, node) in decoded.nodes.into_iter().enumerate() {
            let mut clouds = Vec::with_capacity(node.splats.len());
            for (p, cloud) in node.splats.into_iter().enumerate() {
                if cloud.non_finite > 0 {
                    warn!(
                        "{path}: node {n} primitive {p}: {} of {} splats hold NaN or infinite \
                         values; the renderer culls them",
                        cloud.non_finite,
                        cloud.len()
                    );
                }
                splats += cloud.len();
                let asset = GaussianSplats::from(cloud);
                clouds.push(load_context.add_labeled_asset(format!("Node{n}/Splats{p}"), asset));
            }
            let [x, y, z, w] = node.rotation;
            nodes.push(GaussianSceneNode {
                name: node.name,
                transform: Transform {
                    translation: Vec3::from(node.translation),
                    rotation: Quat::from_xyzw(x, y, z, w),
                    scale: Vec3::from(node.scale),
                },
                children: node.children,
                clouds,
            });
        }
        info!(
            "{path}: {} nodes, {} clouds, {splats} splats",
            nodes.len(),
            nodes.iter().map(|n| n.clouds.len()).sum::<usize>()
        );
        Ok(GaussianScene {
            nodes,
            roots: decoded.scene_roots,
        })
    }

    fn extensions(&self) -> &[&str] {
        &["gltf", "glb"]
    }
}
