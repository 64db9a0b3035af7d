use bevy::math::{DMat3, DQuat, DVec3};

use super::*;
use crate::asset::{GaussianSplats, SplatGeometry};

/// splitmix64 as floats in [0, 1).
pub(super) fn rng(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn splat(position: [f32; 3], opacity: f32, rotation: [f32; 4], scale: [f32; 3]) -> SplatGeometry {
    SplatGeometry {
        position,
        opacity_logit: (opacity / (1.0 - opacity)).ln(),
        rotation,
        log_scale: scale.map(f32::ln),
        _pad: 0.0,
    }
}

pub(super) fn random_cloud(count: usize, seed: u64) -> GaussianSplats {
    let mut next = rng(seed);
    let geometry: Vec<SplatGeometry> = (0..count)
        .map(|_| {
            let mut v = || next() as f32;
            splat(
                [v() * 4.0 - 2.0, v() * 2.0, v() * 4.0 - 2.0],
                0.05 + 0.9 * v(),
                [v() - 0.5, v() - 0.5, v() - 0.5, v() - 0.5],
                [0.005 + 0.05 * v(), 0.005 + 0.05 * v(), 0.001 + 0.02 * v()],
            )
        })
        .collect();
    let sh = (0..count * 12).map(|_| next() as f32 * 2.0 - 1.0).collect();
    GaussianSplats::new(geometry, sh, 1).expect("lengths agree")
}

fn close(a: &DMat3, b: &DMat3, tolerance: f64) -> bool {
    let scale = a
        .to_cols_array()
        .iter()
        .map(|v| v.abs())
        .fold(0.0, f64::max);
    a.to_cols_array()
        .iter()
        .zip(b.to_cols_array())
        .all(|(x, y)| (x - y).abs() <= tolerance * scale.max(1e-30))
}

#[test]
fn principal_axes_rebuild_the_matrix() {
    let mut next = rng(7);
    for case in 0..500 {
        let rotation = DMat3::from_quat(
            DQuat::from_xyzw(next() - 0.5, next() - 0.5, next() - 0.5, next() - 0.5).normalize(),
        );
        // Some with equal or zero axes, most distinct.
        let mut scale = DVec3::new(next(), next() * 3.0, next() * 0.01);
        if case % 7 == 0 {
            scale.y = scale.x;
        }
        if case % 11 == 0 {
            scale.z = 0.0;
        }
        let matrix = rotation * DMat3::from_diagonal(scale * scale) * rotation.transpose();
        let (axes, found) = principal_axes(&matrix);
        let rebuilt = axes * DMat3::from_diagonal(found * found) * axes.transpose();
        assert!(
            close(&matrix, &rebuilt, 1e-10),
            "case {case}: {matrix:?} vs {rebuilt:?}"
        );
        assert!(
            (axes.determinant() - 1.0).abs() < 1e-10,
            "case {case}: a rotation"
        );
        assert!(close(&(axes.transpose() * axes), &DMat3::IDENTITY, 1e-10));
    }
}

#[test]
fn a_splat_survives_the_round_trip_through_its_moments() {
    let cloud = random_cloud(200, 3);
    for original in cloud.geometry() {
        let moments = Moments::of_splat(original);
        let again = Moments::of_splat(&moments.to_splat());
        assert!(close(&moments.covariance(), &again.covariance(), 1e-5));
        assert!((moments.mean - again.mean).length() < 1e-5);
        assert!((moments.opacity - again.opacity).abs() < 1e-5);
        assert!((moments.weight - again.weight).abs() <= 1e-5 * moments.weight);
    }
}

#[test]
fn two_splats_merge_into_their_mixtures_moments() {
    // Two equal round splats of σ = 0.1 at x = ±0.5: the mixture's mean is 0, its
    // variance along x σ² + 0.25, along y and z σ².
    let a = Moments::of_splat(&splat(
        [-0.5, 0.0, 0.0],
        0.5,
        [1.0, 0.0, 0.0, 0.0],
        [0.1; 3],
    ));
    let b = Moments::of_splat(&splat([0.5, 0.0, 0.0], 0.5, [1.0, 0.0, 0.0, 0.0], [0.1; 3]));
    let merged = Moments::merge([&a, &b]).expect("both weigh something");
    assert!(merged.mean.length() < 1e-12);
    let expected = DMat3::from_diagonal(DVec3::new(0.01 + 0.25, 0.01, 0.01));
    // (The scales went through f32 logs: 1e-7 of the largest entry.)
    assert!(
        close(&merged.covariance(), &expected, 1e-7),
        "{:?}",
        merged.covariance()
    );
    // Coverage is kept: opacity × area of the parent is the children's sum (below 1).
    let (_, scale) = principal_axes(&merged.covariance());
    let area = scale.x * scale.y + scale.y * scale.z + scale.z * scale.x;
    assert!((merged.opacity * area - (a.weight + b.weight)).abs() < 1e-12);
    assert!((merged.weight - (a.weight + b.weight)).abs() < 1e-12);
    // Nothing visible merges into nothing.
    let clear = Moments::of_splat(&splat([0.0; 3], 0.5, [0.0; 4], [0.1; 3]));
    assert_eq!(clear.weight, 0.0);
    assert!(Moments::merge([&clear, &clear]).is_none());
}

#[test]
fn the_tree_links_every_splat_to_one_root_through_merges_of_two_or_more() {
    let cloud = random_cloud(20_000, 11);
    let tree = SplatLodTree::build(&cloud);
    let leaves = tree.leaves();
    assert_eq!(leaves, cloud.len());
    let interior = tree.interior().len();
    assert!(
        interior > 0 && interior < leaves,
        "{interior} interior nodes"
    );
    assert_eq!(tree.len(), leaves + interior);
    assert_eq!(tree.interior_sh().len(), interior * cloud.sh_stride());
    let roots: Vec<usize> = (0..tree.len())
        .filter(|&n| tree.parent(n) == NO_PARENT)
        .collect();
    assert_eq!(roots, vec![tree.len() - 1], "one root, made last");
    for node in 0..tree.len() {
        let parent = tree.parent(node);
        if parent != NO_PARENT {
            assert!(parent as usize > node, "parents come after their children");
            assert!(tree.children(parent as usize).contains(&(node as u32)));
            assert!(tree.radius(parent as usize) > 0.0);
        }
        let children = tree.children(node);
        if node < leaves {
            assert!(children.is_empty());
        } else {
            assert!(
                children.len() >= 2,
                "node {node}: {} children",
                children.len()
            );
            assert!(
                children
                    .iter()
                    .all(|&c| tree.parent(c as usize) == node as u32)
            );
        }
    }
    // Every interior node is a valid splat whose colour lies within its children's.
    for (i, node) in tree.interior().iter().enumerate() {
        let values = node
            .position
            .iter()
            .chain(&node.log_scale)
            .chain(&node.rotation);
        assert!(values.chain([&node.opacity_logit]).all(|v| v.is_finite()));
        let dc = &tree.interior_sh()[i * cloud.sh_stride()..][..3];
        assert!(dc.iter().all(|c| c.is_finite() && c.abs() <= 1.0 + 1e-5));
    }
    // A parent holds its children: their centres lie within its 3σ sphere.
    let centre = |n: usize| {
        let g = match n.checked_sub(leaves) {
            Some(i) => &tree.interior()[i],
            None => &cloud.geometry()[n],
        };
        DVec3::from(g.position.map(f64::from))
    };
    for node in leaves..tree.len() {
        for &child in tree.children(node) {
            let distance = (centre(child as usize) - centre(node)).length();
            assert!(distance <= f64::from(tree.radius(node)) * 1.0001 + 1e-6);
        }
    }
}

#[test]
fn broken_splats_neither_panic_nor_poison_their_parents() {
    let mut next = rng(5);
    let mut geometry = random_cloud(2_000, 9).geometry().to_vec();
    for (i, g) in geometry.iter_mut().enumerate() {
        match i % 9 {
            0 => g.rotation = [0.0; 4],
            1 => g.position = [f32::NAN, 0.0, 1.0],
            2 => g.log_scale = [f32::INFINITY, 0.0, 0.0],
            3 => g.opacity_logit = f32::NAN,
            4 => g.log_scale = [-200.0; 3],
            5 => g.position = [f32::INFINITY; 3],
            _ => g.position[0] += next() as f32,
        }
    }
    let sh = vec![0.25; geometry.len() * 3];
    let cloud = GaussianSplats::new(geometry, sh, 0).expect("lengths agree");
    let tree = SplatLodTree::build(&cloud);
    assert!(!tree.interior().is_empty());
    for node in tree.interior() {
        let values = node
            .position
            .iter()
            .chain(&node.log_scale)
            .chain(&node.rotation);
        assert!(
            values.chain([&node.opacity_logit]).all(|v| v.is_finite()),
            "{node:?}"
        );
    }
    assert!(tree.interior_sh().iter().all(|c| c.is_finite()));
    // An empty cloud and a single splat make trees without interior nodes.
    let empty = GaussianSplats::new(Vec::new(), Vec::new(), 0).expect("empty");
    assert!(SplatLodTree::build(&empty).is_empty());
    let one =
        GaussianSplats::new(cloud.geometry()[6..7].to_vec(), vec![0.0; 3], 0).expect("one splat");
    let tree = SplatLodTree::build(&one);
    assert_eq!((tree.len(), tree.parent(0)), (1, NO_PARENT));
}

/// The tree of the shipped angel holds no more bytes than its splats do.
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn the_angels_tree_is_smaller_than_its_splats() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/angel.ply");
    let clouds = crate::headless::scene::load(&path).expect("the angel loads");
    for (cloud, _) in clouds {
        let tree = SplatLodTree::build(&cloud);
        let leaf_bytes = cloud.len() * (size_of::<SplatGeometry>() + 4 * cloud.sh_stride());
        println!(
            "angel: {} splats, {} interior nodes ({:.3} per splat), tree {} bytes, {:.3}× \
             the splats' {leaf_bytes}",
            cloud.len(),
            tree.interior().len(),
            tree.interior().len() as f64 / cloud.len() as f64,
            tree.heap_bytes(),
            tree.heap_bytes() as f64 / leaf_bytes as f64,
        );
        assert!(tree.heap_bytes() <= leaf_bytes);
    }
}
