//! Files this crate writes: a scan with its level-of-detail tree, read back as written
//! (exactly with `Exact`, within Spark's steps with `Compact`), in one chunk or many.

use crate::common::*;
use bevy_splat::asset::GaussianSplats;
use bevy_splat::asset::decoded::DecodedSplats;
use bevy_splat::asset::formats::rad::{self, RadEncoding};
use bevy_splat::lod::SplatLodTree;

/// The scan's tree, breadth first, as `convert IN OUT.rad` writes it.
fn tree_nodes(scan: &str) -> (DecodedSplats, Vec<[u32; 2]>, DecodedSplats) {
    let source = source(scan);
    let asset = GaussianSplats::from(source.clone());
    let tree = SplatLodTree::build(&asset);
    let (nodes, children) = tree.breadth_first(&asset).expect("one root");
    assert_eq!(nodes.len(), tree.len());
    (nodes, children, source)
}

#[test]
fn an_exact_file_reads_back_as_written_with_its_tree() {
    let (nodes, children, source) = tree_nodes("fruit_drops_sh3.ply");
    let bytes = rad::write(&nodes, Some(&children), RadEncoding::Exact).expect("writes");
    let back = rad::decode_nodes(&bytes).expect("reads back");
    assert_eq!(back.children.as_deref(), Some(children.as_slice()));
    assert_eq!(back.nodes.len(), nodes.len());
    for i in 0..nodes.len() {
        let (a, b) = (activated(&nodes, i), activated(&back.nodes, i));
        assert_eq!(a.center, b.center, "node {i}");
        assert!((a.opacity - b.opacity).abs() < 1e-6, "node {i}: opacity");
        for c in 0..3 {
            assert!((a.rgb[c] - b.rgb[c]).abs() < 1e-6, "node {i}: rgb");
            assert!(
                (a.scales[c] / b.scales[c] - 1.0).abs() < 1e-5,
                "node {i}: scale"
            );
        }
        // w is rebuilt from x, y, z: its precision falls as w nears 0.
        assert!(
            rotation_angle(a.quaternion, b.quaternion) < 2e-3,
            "node {i}: rotation"
        );
        assert_eq!(a.rest, b.rest, "node {i}: SH");
    }
    // The leaves are the scan's splats, each once.
    let leaves = back.leaves();
    assert_eq!(leaves.len(), source.len());
    let index = by_centre(&source);
    let mut seen = vec![0usize; source.len()];
    for g in &leaves.geometry {
        let same_centre = &index[&g.position.map(f32::to_bits)];
        seen[same_centre[0]] += 1;
    }
    for (centre, splats) in &index {
        assert_eq!(seen[splats[0]], splats.len(), "the splats at {centre:?}");
    }
}

#[test]
fn a_compact_file_stays_within_sparks_steps() {
    let (nodes, children, _) = tree_nodes("fruit_drops_sh3.ply");
    let exact = rad::write(&nodes, Some(&children), RadEncoding::Exact).unwrap();
    let bytes = rad::write(&nodes, Some(&children), RadEncoding::Compact).expect("writes");
    assert!(
        bytes.len() * 2 < exact.len(),
        "{} vs {} bytes",
        bytes.len(),
        exact.len()
    );
    let back = rad::decode_nodes(&bytes).expect("reads back");
    assert_eq!(back.children.as_deref(), Some(children.as_slice()));
    let (mut rotation, mut ln_scale) = (0f32, 0f32);
    for i in 0..nodes.len() {
        let (a, b) = (activated(&nodes, i), activated(&back.nodes, i));
        assert_eq!(a.center, b.center, "node {i}");
        // Opacity in 255 steps over 0..2 (the range Spark gives trees).
        assert!(
            (a.opacity - b.opacity).abs() <= 1.0 / 255.0 + 1e-6,
            "node {i}: opacity"
        );
        for c in 0..3 {
            if (0.0..=1.0).contains(&a.rgb[c]) {
                assert!((a.rgb[c] - b.rgb[c]).abs() <= 1.1 / 255.0, "node {i}: rgb");
            }
            if a.scales[c].ln() > -12.0 {
                ln_scale = ln_scale.max((a.scales[c].ln() - b.scales[c].ln()).abs());
            }
        }
        rotation = rotation.max(rotation_angle(a.quaternion, b.quaternion));
        for (x, y) in a.rest.iter().zip(&b.rest) {
            if x.abs() <= 1.0 {
                assert!((x - y).abs() <= 0.51 / 127.0, "node {i}: SH {x} -> {y}");
            }
        }
    }
    println!("compact: largest ln-scale error {ln_scale}, rotation {rotation} rad");
    assert!(ln_scale <= 21.0 / 254.0 / 2.0 + 1e-4);
    assert!(rotation <= 0.05);
}

#[test]
fn a_file_of_several_chunks_and_no_tree() {
    // The angel's tree is 98 k nodes: two chunks of 65,536.
    let (nodes, children, source) = tree_nodes("angel_sh0.ply");
    assert!(nodes.len() > 65_536);
    let bytes = rad::write(&nodes, Some(&children), RadEncoding::Compact).unwrap();
    let back = rad::decode_nodes(&bytes).expect("reads back");
    assert_eq!(back.children.as_deref(), Some(children.as_slice()));
    assert_eq!(back.leaves().len(), source.len());

    let bytes = rad::write(&source, None, RadEncoding::Exact).unwrap();
    let back = rad::decode_nodes(&bytes).unwrap();
    assert!(back.children.is_none());
    assert_eq!(back.leaves().geometry.len(), source.len());
    for (a, b) in back.nodes.geometry.iter().zip(&source.geometry) {
        assert_eq!(a.position, b.position);
    }
}

#[test]
fn what_cannot_be_a_rad_file_is_refused() {
    let (nodes, mut children, _) = tree_nodes("fruit_drops_sh3.ply");
    let error = rad::write(&nodes, Some(&children[1..]), RadEncoding::Exact).unwrap_err();
    assert!(error.to_string().contains("child ranges for"), "{error}");
    children[0][1] = 70_000;
    let error = rad::write(&nodes, Some(&children), RadEncoding::Exact).unwrap_err();
    assert!(error.to_string().contains("65,535"), "{error}");
}
