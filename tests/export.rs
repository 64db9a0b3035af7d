//! Export: every format's splats written as an Inria PLY and as a GLB read back the same,
//! and PLY → GLB → PLY gives the same file.
#![cfg(feature = "gltf")]

use std::path::Path;

use bevy_splat::asset::DecodedSplats;
use bevy_splat::asset::formats::{self, gltf, ply};

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// One file of every format the tests hold, decoded.
fn samples() -> Vec<(&'static str, DecodedSplats)> {
    [
        "fruit_drops_sh3.ply",
        "train_3pts_sh3.ply",
        "degenerate_lod_tile_sh3.ply",
        "formats/angel.compressed.ply",
        "formats/seal.splat",
        "formats/tower_v2.spz",
        "spz/fruit_drops_sh3_v4.spz",
        "formats/angel.sog",
        "formats/playbot_lod3_sog/meta.json",
    ]
    .into_iter()
    .map(|name| {
        let splats = formats::decode_path(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        (name, splats)
    })
    .collect()
}

/// The splats of a GLB that holds one cloud.
fn only_cloud(glb: &[u8]) -> DecodedSplats {
    let mut scene = gltf::decode_bytes(glb).expect("our GLB decodes");
    let mut clouds: Vec<_> = scene
        .nodes
        .iter_mut()
        .flat_map(|n| n.splats.drain(..))
        .collect();
    assert_eq!(clouds.len(), 1);
    clouds.remove(0)
}

#[test]
fn every_format_round_trips_through_ply_and_glb() {
    for (name, splats) in samples() {
        let mut back = ply::decode(&ply::write(&splats)).unwrap_or_else(|e| panic!("{name}: {e}"));
        // PLY has no place for the antialiased flag.
        back.antialiased = splats.antialiased;
        assert!(back == splats, "{name}: PLY round trip differs");
        let back = only_cloud(&gltf::write_glb(&splats));
        assert!(back == splats, "{name}: GLB round trip differs");
    }
}

#[test]
fn ply_to_glb_to_ply_is_the_same_file() {
    for name in ["fruit_drops_sh3.ply", "angel_sh0.ply"] {
        let original = ply::decode(&std::fs::read(data(name)).unwrap()).unwrap();
        let first = ply::write(&original);
        let through_glb = only_cloud(&gltf::write_glb(&ply::decode(&first).unwrap()));
        assert_eq!(ply::write(&through_glb), first, "{name}");
    }
}
