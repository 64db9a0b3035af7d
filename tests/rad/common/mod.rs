//! Fixture paths, Spark's reference decodings, and the source scans by centre.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bevy_splat::asset::decoded::{DecodedSplats, SH_C0};
use bevy_splat::asset::formats::{ply, rad};

/// A file of `tests/data/`.
pub fn data(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data")).join(name)
}

pub fn read(name: &str) -> Vec<u8> {
    let path = data(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// A `.rad` fixture, its chunk files read from beside it.
pub fn decode_fixture(name: &str) -> rad::RadSplats {
    let bytes = read(name);
    let dir = Path::new(name).parent().unwrap_or(Path::new(""));
    let chunks: HashMap<String, Vec<u8>> = rad::chunk_files(&bytes)
        .expect("header")
        .into_iter()
        .map(|file| {
            let data = read(&dir.join(&file).to_string_lossy());
            (file, data)
        })
        .collect();
    rad::decode_nodes_with(&bytes, |f| chunks.get(f).map(Vec::as_slice))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// One splat as Spark's decoder hands it out (activated values).
#[derive(serde::Deserialize)]
pub struct SparkSplat {
    pub index: usize,
    pub center: [f32; 3],
    pub opacity: f32,
    pub rgb: [f32; 3],
    pub scales: [f32; 3],
    pub quaternion_xyzw: [f32; 4],
    #[serde(default)]
    pub sh1: Vec<f32>,
    #[serde(default)]
    pub sh2: Vec<f32>,
    #[serde(default)]
    pub sh3: Vec<f32>,
    #[serde(default)]
    pub child_start: Option<u32>,
    #[serde(default)]
    pub child_count: Option<u32>,
}

#[derive(serde::Deserialize)]
pub struct SparkDecoding {
    pub count: usize,
    pub splats: Vec<SparkSplat>,
}

/// `tests/data/rad/NAME.spark.json`: the first splats of Spark's own decoding.
pub fn spark(name: &str) -> SparkDecoding {
    serde_json::from_slice(&read(&format!("rad/{name}.spark.json"))).expect("reference JSON")
}

/// A splat in `.rad`'s terms (what the file stores), from the crate's layout.
pub struct Activated {
    pub center: [f32; 3],
    pub opacity: f32,
    pub rgb: [f32; 3],
    pub scales: [f32; 3],
    /// `[x, y, z, w]`, unit length.
    pub quaternion: [f32; 4],
    /// The coefficients after DC, the crate's order.
    pub rest: Vec<f32>,
}

pub fn activated(splats: &DecodedSplats, i: usize) -> Activated {
    let g = &splats.geometry[i];
    let stride = splats.sh_stride();
    let sh = &splats.sh[i * stride..(i + 1) * stride];
    let [w, x, y, z] = g.rotation;
    let length = (w * w + x * x + y * y + z * z).sqrt();
    Activated {
        center: g.position,
        opacity: 1.0 / (1.0 + (-g.opacity_logit).exp()),
        rgb: [0, 1, 2].map(|c| 0.5 + SH_C0 * sh[c]),
        scales: g.log_scale.map(f32::exp),
        quaternion: [x, y, z, w].map(|v| v / length),
        rest: sh[3..].to_vec(),
    }
}

/// The source scan's splats by their centre's bits (`.rad` keeps centres exactly;
/// a quantised scan may hold several splats at one centre).
pub fn by_centre(splats: &DecodedSplats) -> HashMap<[u32; 3], Vec<usize>> {
    let mut index: HashMap<[u32; 3], Vec<usize>> = HashMap::new();
    for (i, g) in splats.geometry.iter().enumerate() {
        index
            .entry(g.position.map(f32::to_bits))
            .or_default()
            .push(i);
    }
    index
}

pub fn source(name: &str) -> DecodedSplats {
    ply::decode(&read(name)).expect("source PLY")
}

/// The angle between two rotations given as quaternions (any sign), in radians.
pub fn rotation_angle(a: [f32; 4], b: [f32; 4]) -> f32 {
    let dot: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    2.0 * dot.abs().min(1.0).acos()
}
