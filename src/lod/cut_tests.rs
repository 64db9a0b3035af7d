//! The cut's invariants on random clouds and cameras: the spheres nest, sizes never
//! grow from parent to child, a hard cut draws exactly one node on every path from a
//! root to a leaf, blended weights sum to one on every path, and the threshold the
//! controller picks from the counts holds the budget.

use bevy::math::Vec3;

use super::cut::{
    LOD_BINS, LodController, LodFeedback, blend_step, node_size, node_weight, size_bin,
};
use super::tests::{random_cloud, rng};
use super::{LodSpheres, NO_PARENT, ROOT_RADIUS, SplatLodTree};

fn centre(sphere: [f32; 4]) -> Vec3 {
    Vec3::new(sphere[0], sphere[1], sphere[2])
}

/// Node `node`'s size and its parent's (`None`: a leaf's own, a root's parent).
fn sizes(spheres: &LodSpheres, node: usize, camera: Vec3) -> (Option<f32>, Option<f32>) {
    let own = (node >= spheres.leaves())
        .then(|| spheres.sphere(node))
        .flatten()
        .map(|s| node_size(centre(s), s[3], camera, None));
    let parent = spheres.parent_sphere(node);
    let parent =
        (parent[3] != ROOT_RADIUS).then(|| node_size(centre(parent), parent[3], camera, None));
    (own, parent)
}

fn cameras(count: usize, seed: u64) -> Vec<Vec3> {
    let mut next = rng(seed);
    (0..count)
        .map(|i| {
            // Inside the cloud, at its edge and far away.
            let reach = [0.5, 3.0, 40.0][i % 3];
            Vec3::new(
                ((next() * 2.0 - 1.0) * reach) as f32,
                ((next() * 2.0 - 1.0) * reach) as f32,
                ((next() * 2.0 - 1.0) * reach) as f32,
            )
        })
        .collect()
}

/// Every path from `leaf` to its root, as node ids.
fn path(tree: &SplatLodTree, leaf: usize) -> Vec<usize> {
    let mut nodes = vec![leaf];
    let mut node = leaf;
    while tree.parent(node) != NO_PARENT {
        node = tree.parent(node) as usize;
        nodes.push(node);
    }
    nodes
}

#[test]
fn child_spheres_nest_in_their_parents_and_sizes_never_grow_downwards() {
    let splats = random_cloud(3000, 21);
    let tree = SplatLodTree::build(&splats);
    let spheres = LodSpheres::new(&tree, &splats);
    for node in 0..tree.len() {
        let parent = tree.parent(node);
        if parent == NO_PARENT || node < tree.leaves() {
            continue;
        }
        let (child, outer) = (
            spheres.sphere(node).unwrap(),
            spheres.sphere(parent as usize).unwrap(),
        );
        let reach = (centre(child) - centre(outer)).length() + child[3];
        assert!(reach <= outer[3], "node {node} pokes out of its parent");
    }
    for camera in cameras(30, 4) {
        for node in tree.leaves()..tree.len() {
            let (own, parent) = sizes(&spheres, node, camera);
            if let (Some(own), Some(parent)) = (own, parent) {
                assert!(
                    own <= parent,
                    "node {node} is larger than its parent from {camera}"
                );
            }
        }
    }
}

#[test]
fn a_hard_cut_draws_one_node_on_every_path_and_blends_sum_to_one() {
    let splats = random_cloud(2000, 5);
    let tree = SplatLodTree::build(&splats);
    let spheres = LodSpheres::new(&tree, &splats);
    for (case, camera) in cameras(12, 9).into_iter().enumerate() {
        for threshold in [0.0, 1e-4, 3e-3, 0.02, 0.1, 0.5, 5.0] {
            for half_octaves in [0.0, 0.5, 1.5] {
                let weights: Vec<f32> = (0..tree.len())
                    .map(|node| {
                        let (own, parent) = sizes(&spheres, node, camera);
                        node_weight(own, parent, threshold, half_octaves)
                    })
                    .collect();
                for leaf in 0..tree.leaves() {
                    let nodes = path(&tree, leaf);
                    let sum: f32 = nodes.iter().map(|&n| weights[n]).sum();
                    assert!(
                        (sum - 1.0).abs() < 1e-4,
                        "case {case}, τ {threshold}, h {half_octaves}: leaf {leaf}'s path sums to {sum}"
                    );
                    if half_octaves == 0.0 {
                        let drawn = nodes.iter().filter(|&&n| weights[n] > 0.0).count();
                        assert_eq!(drawn, 1, "a hard cut draws one node a path");
                    }
                }
                if threshold == 0.0 {
                    assert!(weights[..tree.leaves()].iter().all(|&w| w == 1.0));
                    assert!(weights[tree.leaves()..].iter().all(|&w| w == 0.0));
                }
            }
        }
    }
}

/// What the GPU would count for `camera` (every node in view).
fn feedback(tree: &SplatLodTree, spheres: &LodSpheres, camera: Vec3) -> LodFeedback {
    let mut counts = LodFeedback {
        leaves_in_view: tree.leaves() as u32,
        own: vec![0; LOD_BINS],
        parent: vec![0; LOD_BINS],
    };
    for node in 0..tree.len() {
        let (own, parent) = sizes(spheres, node, camera);
        if let Some(bin) = own.and_then(size_bin) {
            counts.own[bin] += 1;
        }
        if let Some(bin) = parent.and_then(size_bin) {
            counts.parent[bin] += 1;
        }
    }
    counts
}

#[test]
fn the_controller_holds_the_budget_and_draws_every_leaf_when_it_allows() {
    let splats = random_cloud(4000, 33);
    let tree = SplatLodTree::build(&splats);
    let spheres = LodSpheres::new(&tree, &splats);
    let camera = Vec3::new(0.5, 1.0, 9.0);
    let counts = feedback(&tree, &spheres, camera);
    for half_octaves in [0.0, 0.5] {
        for budget in [50, 300, 1000, 2500, 4000, 10_000] {
            let mut controller = LodController::default();
            // The first frame draws the roots, unless every leaf fits.
            let first = controller.threshold(tree.leaves() as u64, budget);
            assert_eq!(first == 0.0, budget as usize >= tree.leaves());
            // Counts from the same camera, frame after frame: the threshold settles.
            let mut threshold = first;
            for _ in 0..200 {
                controller.update(&counts, budget, 0.0, half_octaves);
                threshold = controller.threshold(tree.leaves() as u64, budget);
            }
            let drawn = (0..tree.len())
                .filter(|&node| {
                    let (own, parent) = sizes(&spheres, node, camera);
                    node_weight(own, parent, threshold, half_octaves) > 0.0
                })
                .count();
            if budget as usize >= tree.leaves() {
                assert_eq!(threshold, 0.0, "the budget covers every leaf: exact");
                assert_eq!(drawn, tree.leaves());
            } else {
                assert!(threshold > 0.0);
                // Within the budget, allowing for ties at bin edges (a few percent).
                assert!(
                    drawn as f64 <= f64::from(budget) * 1.05 + 2.0,
                    "budget {budget}, h {half_octaves}: {drawn} drawn"
                );
                // And not needlessly coarse: a finer bin would break the budget.
                let finer = threshold / 2f32.powf(0.125);
                let drawn_finer = (0..tree.len())
                    .filter(|&node| {
                        let (own, parent) = sizes(&spheres, node, camera);
                        node_weight(own, parent, finer, half_octaves) > 0.0
                    })
                    .count();
                assert!(
                    drawn_finer as f64 > f64::from(budget) * 0.95 || drawn_finer == drawn,
                    "budget {budget}: {drawn} drawn, {drawn_finer} one bin finer"
                );
            }
        }
    }
}

#[test]
fn the_ramp_and_bins_take_any_size() {
    for size in [0.0, -1.0, f32::NAN, f32::INFINITY, 1e-30, 1e30, 0.01] {
        let step = blend_step(size, 0.01, 0.5);
        assert!((0.0..=1.0).contains(&step), "{size}: {step}");
        if let Some(bin) = size_bin(size) {
            assert!(bin < LOD_BINS);
        }
    }
    assert_eq!(size_bin(f32::INFINITY), None);
    assert_eq!(size_bin(0.0), Some(0));
}

#[test]
fn a_pixel_floor_stops_splitting_however_large_the_budget() {
    let splats = random_cloud(4000, 17);
    let tree = SplatLodTree::build(&splats);
    let spheres = LodSpheres::new(&tree, &splats);
    let camera = Vec3::new(0.5, 1.0, 9.0);
    let counts = feedback(&tree, &spheres, camera);
    let floor = 0.01;
    let mut controller = LodController::default();
    for _ in 0..100 {
        controller.update(&counts, u32::MAX, floor, 0.0);
    }
    let threshold = controller.threshold(tree.leaves() as u64, u32::MAX);
    assert!(
        threshold >= floor,
        "threshold {threshold} under the floor {floor}"
    );
    // Within a bin of it.
    assert!(threshold < floor * 2f32.powf(0.126));
    let drawn = (0..tree.len())
        .filter(|&node| {
            let (own, parent) = sizes(&spheres, node, camera);
            node_weight(own, parent, threshold, 0.0) > 0.0
        })
        .count();
    assert!(
        drawn < tree.leaves(),
        "merged nodes stand for the small leaves"
    );
}

/// Under an unlimited budget the counts steer nothing: the controller takes the same
/// thresholds, frame after frame, from real counts as from none (all zeros), with and
/// without a pixel floor and a blend. Shadow views rely on it to skip the counting
/// (`ViewLod::counts_for`).
#[test]
fn an_unlimited_budget_takes_the_same_thresholds_without_counts() {
    let splats = random_cloud(3000, 29);
    let tree = SplatLodTree::build(&splats);
    let spheres = LodSpheres::new(&tree, &splats);
    let none = LodFeedback::none();
    for (camera, floor, half_octaves) in [
        (Vec3::new(0.5, 1.0, 9.0), 0.01, 0.0),
        (Vec3::new(0.2, -0.3, 3.0), 0.004, 0.5),
        (Vec3::new(-1.0, 0.5, 30.0), 0.0, 0.25),
    ] {
        let counts = feedback(&tree, &spheres, camera);
        let mut counted = LodController::default();
        let mut uncounted = LodController::default();
        for frame in 0..12 {
            counted.update(&counts, u32::MAX, floor, half_octaves);
            uncounted.update(&none, u32::MAX, floor, half_octaves);
            let leaves = tree.leaves() as u64;
            assert_eq!(
                counted.threshold(leaves, u32::MAX),
                uncounted.threshold(leaves, u32::MAX),
                "frame {frame}, floor {floor}, blend {half_octaves}"
            );
        }
    }
}
