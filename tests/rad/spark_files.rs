//! Files Spark's `build-lod` wrote (`tests/data/rad/README.md`): every value we decode
//! is the value Spark's own reader decodes, and the leaves are the scan they were
//! built from, within the steps of Spark's encodings.

use crate::common::*;
use bevy_splat::asset::formats::rad;

/// (fixture, its reference decoding, whether it has a tree).
const FIXTURES: [(&str, &str, bool); 4] = [
    ("rad/fruit_drops_sh3-lod.rad", "fruit_drops_sh3-lod", true),
    (
        "rad/fruit_drops_sh3-lod-clustersh.rad",
        "fruit_drops_sh3-lod-clustersh",
        true,
    ),
    (
        "rad/fruit_drops_sh3-nolod-f32.rad",
        "fruit_drops_sh3-nolod-f32",
        false,
    ),
    (
        "rad/angel_sh0-chunked/angel_sh0-lod.rad",
        "angel_sh0-chunked",
        true,
    ),
];

#[test]
fn every_value_is_the_one_sparks_reader_decodes() {
    for (file, reference, has_tree) in FIXTURES {
        let ours = decode_fixture(file);
        let theirs = spark(reference);
        assert_eq!(ours.nodes.len(), theirs.count, "{file}: count");
        assert_eq!(ours.children.is_some(), has_tree, "{file}: tree");
        assert_eq!(ours.nodes.non_finite, 0, "{file}: non-finite values");
        let mut widened = 0;
        for spark in &theirs.splats {
            let i = spark.index;
            let at = |what: &str| format!("{file} splat {i}: {what}");
            let node = activated(&ours.nodes, i);
            assert_eq!(node.center, spark.center, "{}", at("centre"));
            for c in 0..3 {
                assert!((node.rgb[c] - spark.rgb[c]).abs() < 2e-6, "{}", at("rgb"));
            }
            let rotation = rotation_angle(node.quaternion, spark.quaternion_xyzw);
            assert!(rotation < 1e-3, "{}: {rotation} rad", at("rotation"));
            let bands = [&spark.sh1, &spark.sh2, &spark.sh3];
            let expected: Vec<f32> = bands.iter().flat_map(|b| b.iter().copied()).collect();
            // (A clustered file's reference holds each splat's codebook entry.)
            assert_eq!(node.rest, expected, "{}", at("SH"));
            if spark.opacity <= 1.0 {
                assert!(
                    (node.opacity - spark.opacity).abs() < 1e-6,
                    "{}",
                    at("opacity")
                );
                for c in 0..3 {
                    let ratio = node.scales[c] / spark.scales[c];
                    assert!((ratio - 1.0).abs() < 1e-5, "{}: {ratio}", at("scale"));
                }
            } else {
                // Spark's merged node of opacity above 1: drawn here at full opacity,
                // every axis widened by one factor.
                widened += 1;
                assert!(node.opacity > 0.999, "{}", at("widened opacity"));
                let ratios = [0, 1, 2].map(|c| node.scales[c] / spark.scales[c]);
                assert!(ratios[0] > 1.0, "{}: {ratios:?}", at("widening"));
                for r in ratios {
                    assert!(
                        (r / ratios[0] - 1.0).abs() < 1e-5,
                        "{}: {ratios:?}",
                        at("widening")
                    );
                }
            }
            if let (Some(children), Some(start), Some(count)) =
                (&ours.children, spark.child_start, spark.child_count)
            {
                assert_eq!(children[i], [start, count], "{}", at("children"));
            }
        }
        if has_tree {
            assert!(
                widened > 0,
                "{file}: no merged node above opacity 1 among the samples"
            );
        }
    }
}

/// The largest differences between a file's leaves and the scan's splats they were
/// made from, matched by centre (which `.rad` stores exactly).
#[derive(Debug, Default)]
struct Differences {
    opacity: f32,
    rgb: f32,
    ln_scale: f32,
    rotation: f32,
    sh: f32,
}

/// Compares the leaves with the source scan; values outside `rgb_range`, below
/// `ln_scale_floor` or SH beyond `sh_max` are clamped by the encoder and skipped.
fn against_source(
    file: &str,
    scan: &str,
    rgb_range: (f32, f32),
    ln_scale_floor: f32,
    sh_max: f32,
) -> Differences {
    let leaves = decode_fixture(file).leaves();
    let source = source(scan);
    assert_eq!(
        leaves.len(),
        source.len(),
        "{file}: every splat of {scan} is a leaf"
    );
    assert_eq!(leaves.sh_degree, source.sh_degree, "{file}: degree");
    let index = by_centre(&source);
    let mut d = Differences::default();
    for leaf in 0..leaves.len() {
        let ours = activated(&leaves, leaf);
        let candidates = index
            .get(&ours.center.map(f32::to_bits))
            .unwrap_or_else(|| panic!("{file}: leaf {leaf}'s centre is no splat of {scan}"));
        // A quantised scan can hold two splats at one centre: the nearer in opacity.
        let theirs = candidates
            .iter()
            .map(|&i| activated(&source, i))
            .min_by(|a, b| {
                let da = (a.opacity - ours.opacity).abs()
                    + rotation_angle(a.quaternion, ours.quaternion);
                let db = (b.opacity - ours.opacity).abs()
                    + rotation_angle(b.quaternion, ours.quaternion);
                da.total_cmp(&db)
            })
            .expect("a candidate");
        d.opacity = d.opacity.max((ours.opacity - theirs.opacity).abs());
        for c in 0..3 {
            if (rgb_range.0..=rgb_range.1).contains(&theirs.rgb[c]) {
                d.rgb = d.rgb.max((ours.rgb[c] - theirs.rgb[c]).abs());
            }
            if theirs.scales[c].ln() > ln_scale_floor {
                d.ln_scale = d
                    .ln_scale
                    .max((ours.scales[c].ln() - theirs.scales[c].ln()).abs());
            }
        }
        d.rotation = d
            .rotation
            .max(rotation_angle(ours.quaternion, theirs.quaternion));
        for (a, b) in ours.rest.iter().zip(&theirs.rest) {
            if b.abs() <= sh_max {
                d.sh = d.sh.max((a - b).abs());
            }
        }
    }
    d
}

#[test]
fn the_leaves_of_build_lods_files_are_the_scans_within_sparks_steps() {
    // Default encodings: r8_delta colours over [-0.0122, 1], f16 opacity, ln_0r8
    // scales over [-12, 9] (a step of 21/254 in ln), oct88r8 quaternions, s8 SH over
    // ±1 (a step of 1/127); Spark also holds values as f16 in memory first (ln-scales
    // above -16 within 2^-8 of theirs).
    let fruit = against_source(
        "rad/fruit_drops_sh3-lod.rad",
        "fruit_drops_sh3.ply",
        (-0.0122, 1.0),
        -12.0,
        1.0,
    );
    println!("fruit, default encodings: {fruit:?}");
    assert!(fruit.opacity <= 1e-3, "{fruit:?}");
    assert!(fruit.rgb <= 1.0122 / 255.0 / 2.0 + 1e-3, "{fruit:?}");
    assert!(fruit.ln_scale <= 21.0 / 254.0 / 2.0 + 4e-3, "{fruit:?}");
    assert!(fruit.sh <= 1.0 / 127.0 / 2.0 + 1e-3, "{fruit:?}");
    // Octahedral axis in 1/255 steps and the angle in π/255: a couple of degrees.
    assert!(fruit.rotation <= 0.05, "{fruit:?}");

    let angel = against_source(
        "rad/angel_sh0-chunked/angel_sh0-lod.rad",
        "angel_sh0.ply",
        (0.0, 1.0),
        -12.0,
        1.0,
    );
    println!("angel, two chunk files: {angel:?}");
    assert!(
        angel.opacity <= 1e-3 && angel.rgb <= 1.0 / 255.0 / 2.0 + 1e-3,
        "{angel:?}"
    );
    assert!(
        angel.ln_scale <= 21.0 / 254.0 / 2.0 + 4e-3 && angel.rotation <= 0.05,
        "{angel:?}"
    );

    // The f32 file (written by Spark's encoder with every property f32): only
    // Spark's f16 storage in memory is left.
    let exact = against_source(
        "rad/fruit_drops_sh3-nolod-f32.rad",
        "fruit_drops_sh3.ply",
        (f32::MIN, f32::MAX),
        f32::MIN,
        f32::MAX,
    );
    println!("fruit, f32 encodings: {exact:?}");
    assert!(
        exact.opacity <= 5e-4 && exact.rgb <= 5e-4 && exact.sh <= 5e-4,
        "{exact:?}"
    );
    // Its quaternions keep x, y, z (as f16) and rebuild w = √(1 − x² − y² − z²), which
    // loses precision as w nears 0: about half a degree at worst here.
    assert!(
        exact.ln_scale <= 1e-2 && exact.rotation <= 0.02,
        "{exact:?}"
    );
}

#[test]
fn a_file_without_a_tree_keeps_the_scans_order() {
    let nodes = decode_fixture("rad/fruit_drops_sh3-nolod-f32.rad");
    let source = source("fruit_drops_sh3.ply");
    assert!(nodes.children.is_none());
    for (i, (a, b)) in nodes
        .nodes
        .geometry
        .iter()
        .zip(&source.geometry)
        .enumerate()
    {
        assert_eq!(a.position, b.position, "splat {i}");
    }
}

#[test]
fn the_format_is_told_by_its_magic_and_its_extension() {
    use bevy_splat::asset::formats::Format;
    let bytes = read("rad/fruit_drops_sh3-lod.rad");
    assert!(rad::is_rad(&bytes));
    assert_eq!(Format::sniff(&bytes), Some(Format::Rad));
    assert_eq!(Format::of_path("scenes/City.RAD"), Some(Format::Rad));
    let leaves = bevy_splat::asset::formats::decode(Format::Rad, &bytes).expect("decodes");
    assert_eq!(leaves.len(), 4_721);
    let error = Format::Rad.confirm(b"ply\n").unwrap_err();
    assert_eq!(
        error.to_string(),
        "not a Spark .rad file: its content is PLY"
    );
    // A chunked header alone names its chunk files, and says which is missing.
    let header = read("rad/angel_sh0-chunked/angel_sh0-lod.rad");
    assert_eq!(
        rad::chunk_files(&header).unwrap(),
        ["angel_sh0-lod-0.radc", "angel_sh0-lod-1.radc"]
    );
    let error = rad::decode(&header).unwrap_err();
    assert_eq!(
        error.to_string(),
        "chunk 0 is in angel_sh0-lod-0.radc, which could not be read"
    );
}
