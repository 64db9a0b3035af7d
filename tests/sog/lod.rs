//! Streamed SOG: the `lod-meta.json` is told from glTF and from a plain SOG meta.json,
//! each level reads its leaves' ranges, and a broken tree is named.

use std::collections::HashMap;

use crate::common::*;
use bevy_splat::asset::decoded::DecodedSplats;
use bevy_splat::asset::formats::Format;
use bevy_splat::asset::formats::sog::{
    SogError, beside_chunk, decode_images, decode_lod_level, is_sog_lod_meta, is_sog_meta,
    parse_lod_meta, parse_meta,
};

fn lod_meta() -> Vec<u8> {
    read(data("sog/fruit_lod/lod-meta.json"))
}

/// Every chunk of the fixture, decoded, by the name `filenames` gives it.
fn chunks() -> HashMap<String, DecodedSplats> {
    let meta = parse_lod_meta(&lod_meta()).unwrap();
    let names: Vec<String> = (0..meta.levels())
        .flat_map(|level| meta.level_files(level))
        .map(str::to_owned)
        .collect();
    names
        .into_iter()
        .map(|chunk| {
            let chunk_meta = parse_meta(&read(data(&format!("sog/fruit_lod/{chunk}")))).unwrap();
            let images: HashMap<&str, Vec<u8>> = chunk_meta
                .image_files()
                .into_iter()
                .map(|f| {
                    (
                        f,
                        read(data(&format!("sog/fruit_lod/{}", beside_chunk(&chunk, f)))),
                    )
                })
                .collect();
            let splats = decode_images(&chunk_meta, |f| images.get(f).map(Vec::as_slice)).unwrap();
            (chunk, splats)
        })
        .collect()
}

#[test]
fn a_lod_meta_json_is_neither_gltf_nor_a_plain_sog() {
    let bytes = lod_meta();
    assert!(is_sog_lod_meta(&bytes));
    assert!(!is_sog_meta(&bytes));
    assert_eq!(Format::sniff(&bytes), Some(Format::SogLod));
    assert_eq!(Format::of_path("city/lod-meta.json"), Some(Format::SogLod));
    assert_eq!(Format::of_path("city/0_0/meta.json"), Some(Format::SogMeta));
    assert!(Format::SogLod.confirm(&bytes).is_ok());
    let plain = read(fixture("playbot_lod3_sog/meta.json"));
    assert!(!is_sog_lod_meta(&plain));
}

#[test]
fn each_level_reads_its_leaves_ranges() {
    let meta = parse_lod_meta(&lod_meta()).unwrap();
    assert_eq!(meta.levels(), 2);
    assert_eq!(meta.level_files(0), ["0_0/meta.json", "0_1/meta.json"]);
    assert_eq!(meta.level_files(1), ["1_0/meta.json"]);
    assert_eq!((meta.level_count(0), meta.level_count(1)), (4_721, 2_361));
    let chunks = chunks();
    let finest = decode_lod_level(&meta, 0, |name| chunks.get(name)).unwrap();
    let coarse = decode_lod_level(&meta, 1, |name| chunks.get(name)).unwrap();
    assert_eq!((finest.len(), finest.sh_degree), (4_721, 3));
    assert_eq!((coarse.len(), coarse.sh_degree), (2_361, 3));
    // The finest level is the two level-0 chunks, each row once, in the tree's order.
    let rows = chunks["0_0/meta.json"].len() + chunks["0_1/meta.json"].len();
    assert_eq!(rows, finest.len());
    let error = decode_lod_level(&meta, 2, |name| chunks.get(name)).unwrap_err();
    assert!(
        error.to_string().contains("level 2 asked of 2 levels"),
        "{error}"
    );
}

#[test]
fn the_coarser_level_becomes_the_finest_levels_tree() {
    let meta = parse_lod_meta(&lod_meta()).unwrap();
    let chunks = chunks();
    let levels: Vec<DecodedSplats> = (0..meta.levels())
        .map(|level| decode_lod_level(&meta, level, |name| chunks.get(name)).unwrap())
        .collect();
    let tree = bevy_splat::lod::tree_from_levels(&levels).expect("a tree");
    let finest = bevy_splat::GaussianSplats::from(levels[0].clone());
    let built = bevy_splat::lod::SplatLodTree::from_file(&tree, &finest).expect("it fits");
    // splat-transform's coarse level halves the count: nearly every coarse splat is
    // some fine splats' nearest, and one root holds them.
    let coarse_kept = tree.interior.len() - 1;
    println!("{coarse_kept} of {} coarse splats kept", levels[1].len());
    assert!(coarse_kept * 10 >= levels[1].len() * 9, "{coarse_kept}");
    assert_eq!(built.len(), finest.len() + tree.interior.len());
    // The coarse nodes are the file's own splats, as splat-transform wrote them.
    for node in &tree.interior[..coarse_kept] {
        assert!(
            levels[1]
                .geometry
                .iter()
                .any(|s| s.position == node.position),
            "{node:?}"
        );
    }
}

/// The fixture's lod-meta.json, changed by `edit`.
fn edited(edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let mut json: serde_json::Value = serde_json::from_slice(&lod_meta()).unwrap();
    edit(&mut json);
    serde_json::to_vec(&json).unwrap()
}

/// The first leaf of the tree.
fn first_leaf(json: &mut serde_json::Value) -> &mut serde_json::Value {
    let mut node = &mut json["tree"];
    while node.get("children").is_some() {
        node = &mut node["children"][0];
    }
    node
}

#[test]
fn a_broken_lod_meta_json_is_named() {
    let message = |bytes: Vec<u8>| parse_lod_meta(&bytes).unwrap_err().to_string();
    assert!(message(edited(|j| j["version"] = 7.into())).contains("unsupported SOG version 7"));
    assert!(message(edited(|j| j["lodLevels"] = 0.into())).contains("lodLevels"));
    let climbing = edited(|j| j["filenames"][0] = "../../etc/meta.json".into());
    assert!(message(climbing).contains("not a plain relative path"));
    let far = edited(|j| first_leaf(j)["lods"]["0"]["file"] = 9.into());
    assert!(message(far).contains("is in file 9; 3 are listed"));
    let level = edited(|j| first_leaf(j)["lods"]["5"] = first_leaf(j)["lods"]["0"].clone());
    assert!(message(level).contains("names level \"5\""));
    let bare = edited(|j| *first_leaf(j) = serde_json::json!({"bound": {}}));
    assert!(message(bare).contains("neither children nor lods"));
    // A range past its chunk's rows is found when the level is put together.
    let past = edited(|j| first_leaf(j)["lods"]["0"]["offset"] = 1_000_000.into());
    let meta = parse_lod_meta(&past).unwrap();
    let chunks = chunks();
    let error = decode_lod_level(&meta, 0, |name| chunks.get(name)).unwrap_err();
    assert!(
        matches!(error, SogError::InvalidMeta { key: "tree", .. }),
        "{error}"
    );
    assert!(error.to_string().contains("rows 1000000.."), "{error}");
}
