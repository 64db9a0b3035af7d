//! How fast each format's decoder runs from memory, in splats per second, on the
//! shipped test files (best of 7 runs; files and images read before timing):
//!
//! ```text
//! cargo run --release --example decode_speed
//! ```

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use bevy_splat::asset::DecodedSplats;
use bevy_splat::asset::formats::{self, Format, gltf, rad, sog};

const RUNS: usize = 7;

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn time(name: &str, decode: impl Fn() -> usize) {
    let mut best = Duration::MAX;
    let mut splats = 0;
    for _ in 0..RUNS {
        let start = Instant::now();
        splats = decode();
        best = best.min(start.elapsed());
    }
    println!(
        "{name:<42} {splats:>8} splats {:>8.2} ms {:>7.1} M splats/s",
        best.as_secs_f64() * 1e3,
        splats as f64 / best.as_secs_f64() / 1e6
    );
}

fn one_file(name: &str) {
    let bytes = std::fs::read(data(name)).expect("a test file");
    let format = Format::of_path(name).expect("a splat extension");
    time(name, || {
        let splats: DecodedSplats = formats::decode(format, &bytes).expect("decodes");
        splats.len()
    });
}

fn main() {
    for name in [
        "angel_sh0.ply",
        "formats/angel.compressed.ply",
        "formats/seal.splat",
        "formats/tower_v2.spz",
        "spz/fruit_drops_sh3_v3.spz",
        "spz/fruit_drops_sh3_v4.spz",
        "formats/angel.sog",
        "ksplat/angel_l1.ksplat",
        "ksplat/fruit_l0_sh2.ksplat",
        "ksplat/fruit_l1_sh2.ksplat",
        "ksplat/fruit_l2_sh2.ksplat",
    ] {
        one_file(name);
    }
    for folder in ["formats/playbot_lod3_sog", "formats/playcanvas_logo_sog_v1"] {
        let meta_bytes = std::fs::read(data(&format!("{folder}/meta.json"))).expect("meta");
        let meta = sog::parse_meta(&meta_bytes).expect("a SOG meta.json");
        let images: HashMap<String, Vec<u8>> = meta
            .image_files()
            .into_iter()
            .map(|f| {
                (
                    f.to_owned(),
                    std::fs::read(data(&format!("{folder}/{f}"))).expect("image"),
                )
            })
            .collect();
        time(&format!("{folder}/meta.json"), || {
            sog::decode_images(&meta, |n| images.get(n).map(Vec::as_slice))
                .expect("decodes")
                .len()
        });
    }
    // `.rad`: every node of the tree counts (leaves and merged nodes alike).
    for name in [
        "rad/fruit_drops_sh3-lod.rad",
        "rad/fruit_drops_sh3-nolod-f32.rad",
        "rad/angel_sh0-chunked/angel_sh0-lod.rad",
    ] {
        let bytes = std::fs::read(data(name)).expect("a test file");
        let folder = Path::new(name).parent().unwrap_or(Path::new(""));
        let chunks: HashMap<String, Vec<u8>> = rad::chunk_files(&bytes)
            .expect("a header")
            .into_iter()
            .map(|file| {
                let chunk = std::fs::read(data(&folder.join(&file).to_string_lossy()));
                (file, chunk.expect("a chunk file"))
            })
            .collect();
        time(&format!("{name} (nodes)"), || {
            rad::decode_nodes_with(&bytes, |f| chunks.get(f).map(Vec::as_slice))
                .expect("decodes")
                .nodes
                .len()
        });
    }
    let glb = std::fs::read(data("formats/tower_legacy_spz.glb")).expect("the tower");
    time("formats/tower_legacy_spz.glb", || {
        let scene = gltf::decode_bytes(&glb).expect("decodes");
        scene
            .nodes
            .iter()
            .flat_map(|n| &n.splats)
            .map(DecodedSplats::len)
            .sum()
    });
}
