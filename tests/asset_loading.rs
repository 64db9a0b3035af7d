//! Every format through Bevy's asset server: the loader picks the decoder by extension,
//! reads an unbundled SOG's images beside its meta.json, and refuses a file whose
//! content is another format, naming both.

mod common;

use bevy::prelude::*;

fn app(root: &str) -> App {
    common::asset_app(root)
}

/// Loads `file`: its splat count and SH degree, or why it failed.
fn load(app: &mut App, file: &str) -> Result<(usize, u8), String> {
    common::load_splats(app, file).map(|splats| (splats.len(), splats.sh_degree()))
}

#[test]
fn every_format_loads_through_the_asset_server() {
    let mut app = app(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"));
    let cases = [
        ("fruit_drops_sh3.ply", (4_721, 3)),
        ("formats/angel.compressed.ply", (71_377, 0)),
        ("formats/seal.splat", (101_780, 0)),
        ("formats/tower_v2.spz", (73_172, 3)),
        ("spz/fruit_drops_sh3_v4.spz", (4_721, 3)),
        ("formats/angel.sog", (71_359, 0)),
        ("formats/playbot_lod3_sog/meta.json", (31_000, 2)),
        ("formats/playcanvas_logo_sog_v1/meta.json", (307_128, 0)),
        // Spark's chunked .rad: the header and its chunk files, read beside it.
        ("rad/angel_sh0-chunked/angel_sh0-lod.rad", (71_377, 0)),
        ("rad/fruit_drops_sh3-lod.rad", (4_721, 3)),
        ("ksplat/fruit_l1_sh2.ksplat", (4_681, 2)),
    ];
    for (file, expected) in cases {
        assert_eq!(load(&mut app, file), Ok(expected), "{file}");
    }
}

#[test]
fn a_file_whose_content_is_another_format_is_refused_naming_both() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("asset_loading");
    std::fs::create_dir_all(&dir).unwrap();
    let ply = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/train_3pts_sh3.ply"
    ))
    .unwrap();
    std::fs::write(dir.join("really_a_ply.splat"), &ply).unwrap();
    std::fs::write(dir.join("really_a_ply.spz"), &ply).unwrap();
    std::fs::write(dir.join("text.ply"), b"hello").unwrap();
    let mut app = app(&dir.to_string_lossy());
    let error = load(&mut app, "really_a_ply.splat").unwrap_err();
    assert!(
        error.contains("not a .splat file: its content is PLY"),
        "{error}"
    );
    let error = load(&mut app, "really_a_ply.spz").unwrap_err();
    assert!(
        error.contains("not a SPZ file: its content is PLY"),
        "{error}"
    );
    let error = load(&mut app, "text.ply").unwrap_err();
    assert!(error.contains("not a PLY file"), "{error}");
    // A SOG meta.json whose images are missing names the file it could not read.
    std::fs::write(
        dir.join("meta.json"),
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/formats/playbot_lod3_sog/meta.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let error = load(&mut app, "meta.json").unwrap_err();
    assert!(error.contains("means_l.webp"), "{error}");
}

#[test]
fn a_streamed_sogs_coarser_levels_load_as_its_tree() {
    let mut app = app(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"));
    let splats = common::load_splats(&mut app, "sog/fruit_lod/lod-meta.json").expect("it loads");
    assert_eq!((splats.len(), splats.sh_degree()), (4_721, 3));
    let tree = splats.file_tree().expect("its levels as a tree");
    assert!(tree.interior.len() > 2_000, "{}", tree.interior.len());
    assert!(bevy_splat::lod::SplatLodTree::from_file(tree, &splats).is_some());
}
