//! Any splat file from disk as clouds with their transforms, without an asset
//! server: one cloud at the origin for the single-cloud formats, one per splat
//! primitive at its node's world transform for a glTF scene.

use std::path::Path;

#[cfg(feature = "gltf")]
use bevy::math::{Quat, Vec3};
use bevy::transform::components::Transform;

use crate::asset::GaussianSplats;
use crate::asset::formats::{self, Format, PathDecodeError};

/// Why [`load`] failed. The text names the file.
#[derive(Debug, thiserror::Error)]
pub enum SceneFileError {
    /// The file could not be read or decoded (boxed: decode errors are large).
    #[error(transparent)]
    Decode(Box<PathDecodeError>),
    /// A glTF scene decoded but has no splat primitive.
    #[error("{0}: the scene holds no splats")]
    NoSplats(String),
}

impl From<PathDecodeError> for SceneFileError {
    fn from(error: PathDecodeError) -> Self {
        SceneFileError::Decode(Box::new(error))
    }
}

/// Reads the splat file at `path` (any format the crate reads: `.ply`, `.splat`,
/// `.spz`, `.sog`, a SOG `meta.json`, `.gltf`, `.glb`), each cloud's splats with the
/// transform to spawn it at. A single-cloud format gives one cloud at
/// [`Transform::IDENTITY`]; a glTF scene gives one cloud per splat primitive, at its
/// node's world transform (parents' transforms applied), in node order.
pub fn load(path: impl AsRef<Path>) -> Result<Vec<(GaussianSplats, Transform)>, SceneFileError> {
    let path = path.as_ref();
    if Format::of_path(&path.to_string_lossy()) != Some(Format::Gltf) {
        let splats = formats::decode_path(path)?;
        return Ok(vec![(GaussianSplats::from(splats), Transform::IDENTITY)]);
    }
    load_gltf(path)
}

#[cfg(feature = "gltf")]
fn load_gltf(path: &Path) -> Result<Vec<(GaussianSplats, Transform)>, SceneFileError> {
    let scene = formats::decode_gltf_path(path)?;
    // Nodes come parents first: each world transform is its parent's times its own.
    let mut world = vec![Transform::IDENTITY; scene.nodes.len()];
    let mut parent = vec![None; scene.nodes.len()];
    for (i, node) in scene.nodes.iter().enumerate() {
        for &child in &node.children {
            if let Some(slot) = parent.get_mut(child) {
                *slot = Some(i);
            }
        }
    }
    let mut clouds = Vec::new();
    for (i, node) in scene.nodes.into_iter().enumerate() {
        let [x, y, z, w] = node.rotation;
        let local = Transform {
            translation: Vec3::from(node.translation),
            rotation: Quat::from_xyzw(x, y, z, w),
            scale: Vec3::from(node.scale),
        };
        world[i] = match parent[i] {
            Some(p) => world[p].mul_transform(local),
            None => local,
        };
        for splats in node.splats {
            clouds.push((GaussianSplats::from(splats), world[i]));
        }
    }
    if clouds.is_empty() {
        return Err(SceneFileError::NoSplats(path.display().to_string()));
    }
    Ok(clouds)
}

#[cfg(not(feature = "gltf"))]
fn load_gltf(path: &Path) -> Result<Vec<(GaussianSplats, Transform)>, SceneFileError> {
    Err(PathDecodeError::Decode {
        path: path.display().to_string(),
        source: formats::DecodeError::FeatureDisabled {
            format: Format::Gltf,
            feature: "gltf",
        },
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name)
    }

    #[test]
    fn a_single_cloud_file_is_one_cloud_at_the_origin() {
        let clouds = load(data("train_3pts_sh3.ply")).expect("the PLY decodes");
        assert_eq!(clouds.len(), 1);
        assert_eq!(clouds[0].0.len(), 3);
        assert_eq!(clouds[0].1, Transform::IDENTITY);
    }

    #[cfg(feature = "gltf")]
    #[test]
    fn a_gltf_scene_is_one_cloud_per_splat_primitive() {
        // 15 splat nodes of one splat each, all roots, plus a camera node.
        let clouds = load(data("formats/khr_conformance_matrix.glb")).expect("the GLB decodes");
        assert_eq!(clouds.len(), 15);
        assert!(clouds.iter().all(|(splats, _)| splats.len() == 1));
    }

    #[test]
    fn errors_name_the_file() {
        let missing = load("/nonexistent/x.ply").unwrap_err();
        assert!(
            missing.to_string().contains("/nonexistent/x.ply"),
            "{missing}"
        );
        let unknown = load("/nonexistent/x.txt").unwrap_err();
        assert!(unknown.to_string().contains("x.txt"), "{unknown}");
    }
}
