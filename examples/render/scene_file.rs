//! Any splat file from disk as clouds with their transforms: one cloud at the origin
//! for the single-cloud formats, one per splat primitive at its node's world
//! transform for a glTF scene.

use std::path::Path;

use bevy::math::{Quat, Vec3};
use bevy::transform::components::Transform;
use bevy_splat::GaussianSplats;
use bevy_splat::asset::formats::{self, Format};

pub fn load(path: &Path) -> Result<Vec<(GaussianSplats, Transform)>, String> {
    let shown = path.display();
    if Format::of_path(&path.to_string_lossy()) != Some(Format::Gltf) {
        let splats = formats::decode_path(path).map_err(|e| e.to_string())?;
        return Ok(vec![(GaussianSplats::from(splats), Transform::IDENTITY)]);
    }
    let scene = formats::decode_gltf_path(path).map_err(|e| e.to_string())?;
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
        return Err(format!("{shown}: the scene holds no splats"));
    }
    Ok(clouds)
}
