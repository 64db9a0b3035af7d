//! A `.rad`'s own level-of-detail tree: taken as it is by `SplatLod` (no build), with
//! parents and bounding spheres worked out over it; a tree that does not fit its
//! cloud is set aside and one built.

use crate::common::*;
use bevy_splat::asset::GaussianSplats;
use bevy_splat::lod::{CloudLod, NO_PARENT, SplatLodTree};

fn fruit_with_its_tree() -> GaussianSplats {
    let (leaves, tree) = decode_fixture("rad/fruit_drops_sh3-lod.rad").leaves_and_tree();
    GaussianSplats::from(leaves).with_file_tree(tree.expect("the file has a tree"))
}

#[test]
fn build_lods_tree_is_the_clouds_level_of_detail() {
    let splats = fruit_with_its_tree();
    let lod = CloudLod::build(&splats).expect("a tree");
    let tree = &lod.tree;
    // Spark's tree as it is: 4,721 leaves and 1,323 merged nodes (ours would differ).
    assert_eq!((tree.leaves(), tree.len()), (4_721, 6_044));
    assert_eq!(lod.interior.len(), 1_323);
    assert_ne!(SplatLodTree::build(&splats).len(), tree.len());
    let root = (0..tree.len())
        .filter(|&n| tree.parent(n) == NO_PARENT)
        .collect::<Vec<_>>();
    assert_eq!(root.len(), 1, "one root");
    let centre = |node: usize| -> [f32; 3] {
        match node.checked_sub(tree.leaves()) {
            None => splats.geometry()[node].position,
            Some(i) => tree.interior()[i].position,
        }
    };
    for node in 0..tree.len() {
        // Every node reaches the root, and its parent's sphere holds its own.
        let mut at = node;
        let mut steps = 0;
        while tree.parent(at) != NO_PARENT {
            at = tree.parent(at) as usize;
            steps += 1;
            assert!(steps < 64, "node {node}: no root above it");
        }
        assert_eq!(at, root[0]);
        let parent = tree.parent(node);
        if parent != NO_PARENT {
            let (a, b) = (centre(node), centre(parent as usize));
            let distance = (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f32>().sqrt();
            let holds = tree.radius(parent as usize) * 1.0001 + 1e-6;
            assert!(
                distance + tree.radius(node) <= holds,
                "node {node} pokes out"
            );
        }
    }
    // The file's merged nodes are drawn as the file stores them.
    let (_, file_tree) = decode_fixture("rad/fruit_drops_sh3-lod.rad").leaves_and_tree();
    assert_eq!(tree.interior(), file_tree.unwrap().interior.as_slice());
}

#[test]
fn a_tree_that_does_not_fit_its_cloud_is_rebuilt() {
    // The angel's tree given to the fruit's splats.
    let (_, angel_tree) =
        decode_fixture("rad/angel_sh0-chunked/angel_sh0-lod.rad").leaves_and_tree();
    let (fruit, _) = decode_fixture("rad/fruit_drops_sh3-lod.rad").leaves_and_tree();
    let splats = GaussianSplats::from(fruit).with_file_tree(angel_tree.unwrap());
    assert!(SplatLodTree::from_file(splats.file_tree().unwrap(), &splats).is_none());
    let lod = CloudLod::build(&splats).expect("a tree built instead");
    assert_eq!(lod.tree.len(), SplatLodTree::build(&splats).len());
}
