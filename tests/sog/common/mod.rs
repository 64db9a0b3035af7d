//! Shared test helpers: fixture paths, a minimal PLY reader, and a builder for small
//! synthetic SOG scenes.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

use bevy_splat::asset::decoded::DecodedSplats;
use bevy_splat::asset::formats::sog::{DecodeOptions, SogError, decode_images_with, parse_meta};
use image_webp::{ColorType, WebPEncoder};

pub const FORMATS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/formats");

/// A file of `tests/data/`.
pub fn data(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data")).join(name)
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(FORMATS).join(name)
}

pub fn read(path: impl AsRef<Path>) -> Vec<u8> {
    let path = path.as_ref();
    std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Every file of an unbundled SOG folder, by name.
pub fn folder_files(dir: &Path) -> HashMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("fixture folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                read(&p),
            )
        })
        .collect()
}

/// Decodes meta.json plus images from an in-memory file set.
pub fn decode_files(
    files: &HashMap<String, Vec<u8>>,
    options: &DecodeOptions,
) -> Result<DecodedSplats, SogError> {
    let meta = parse_meta(files.get("meta.json").expect("meta.json in file set"))?;
    decode_images_with(&meta, |n| files.get(n).map(Vec::as_slice), options)
}

pub fn decode_folder(dir: &Path) -> DecodedSplats {
    decode_files(&folder_files(dir), &DecodeOptions::default()).expect("fixture decodes")
}

/// A binary little-endian PLY whose vertex properties are all `float`.
pub struct Ply {
    pub names: Vec<String>,
    pub count: usize,
    pub values: Vec<f32>,
}

impl Ply {
    pub fn read(path: &Path) -> Ply {
        let bytes = read(path);
        let end = b"end_header\n";
        let header_end = bytes
            .windows(end.len())
            .position(|w| w == end)
            .expect("PLY end_header")
            + end.len();
        let header = std::str::from_utf8(&bytes[..header_end]).expect("ASCII header");
        assert!(
            header.contains("format binary_little_endian 1.0"),
            "only binary LE PLY"
        );
        let mut names = Vec::new();
        let mut count = 0;
        let mut in_vertex = false;
        for line in header.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["element", "vertex", n] => {
                    count = n.parse().expect("vertex count");
                    in_vertex = true;
                }
                ["element", ..] => in_vertex = false,
                ["property", "float", name] if in_vertex => names.push((*name).to_owned()),
                ["property", ..] if in_vertex => panic!("only float properties: {line}"),
                _ => {}
            }
        }
        let body = &bytes[header_end..header_end + count * names.len() * 4];
        let values = body
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ply {
            names,
            count,
            values,
        }
    }

    pub fn column(&self, name: &str) -> Vec<f32> {
        let k = self
            .names
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("no {name}"));
        let n = self.names.len();
        (0..self.count).map(|i| self.values[i * n + k]).collect()
    }

    pub fn has(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
}

/// Encodes RGBA texels as a lossless WebP.
pub fn webp(width: u32, height: u32, rgba: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    WebPEncoder::new(&mut out)
        .encode(rgba, width, height, ColorType::Rgba8)
        .expect("encode webp");
    out
}

/// Zips `files` (stored, in order) the way splat-transform bundles a `.sog`.
pub fn zip(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for (name, bytes) in files {
            zip.start_file(*name, options).expect("zip entry");
            zip.write_all(bytes).expect("zip write");
        }
        zip.finish().expect("zip finish");
    }
    out.into_inner()
}

/// The files of a bundle, by name.
pub fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("zip");
    (0..zip.len())
        .map(|i| {
            let mut entry = zip.by_index(i).expect("entry");
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut data).expect("read");
            (entry.name().expect("entry name").into_owned(), data)
        })
        .collect()
}

pub fn rezip(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    zip(&refs)
}

#[path = "../../common/mutation.rs"]
mod mutation;
pub use mutation::{XorShift, outcome};

/// A small v2 scene built texel by texel, for layout and error tests.
pub struct Synthetic {
    pub width: u32,
    pub height: u32,
    pub count: usize,
    pub means_l: Vec<u8>,
    pub means_u: Vec<u8>,
    pub quats: Vec<u8>,
    pub scales: Vec<u8>,
    pub sh0: Vec<u8>,
    /// (bands, palette entries, centroid RGBA, label RGBA)
    pub sh_n: Option<(u8, usize, Vec<u8>, Vec<u8>)>,
    pub codebook: Vec<f64>,
}

impl Synthetic {
    /// `count` splats with deterministic pseudo-random bytes in every channel.
    pub fn random(count: usize, bands: u8, seed: u64) -> Self {
        let width = 8u32;
        let height = count.div_ceil(8).max(1) as u32;
        let texels = (width * height) as usize;
        let mut rng = XorShift(seed);
        let mut bytes = |alpha: Option<u8>| -> Vec<u8> {
            let mut v = vec![0u8; texels * 4];
            for t in v.chunks_exact_mut(4) {
                for c in t.iter_mut() {
                    *c = rng.next() as u8;
                }
                if let Some(a) = alpha {
                    t[3] = a;
                }
            }
            v
        };
        let means_l = bytes(Some(255));
        let means_u = bytes(Some(255));
        let mut quats = bytes(None);
        for t in quats.chunks_exact_mut(4) {
            t[3] = 252 + t[3] % 4;
        }
        let scales = bytes(Some(255));
        let sh0 = bytes(None);
        let codebook: Vec<f64> = (0..256).map(|i| (i as f64 - 128.0) / 32.0).collect();
        let sh_n = (bands > 0).then(|| {
            let coeffs = [0, 3, 8, 15][bands as usize];
            let entries = 128usize;
            let rows = entries / 64;
            let mut centroids = vec![0u8; 64 * coeffs * rows * 4];
            for (i, c) in centroids.iter_mut().enumerate() {
                *c = if i % 4 == 3 { 255 } else { (i * 7 % 251) as u8 };
            }
            let mut labels = vec![0u8; texels * 4];
            for (i, t) in labels.chunks_exact_mut(4).enumerate() {
                let label = (i * 37 % entries) as u16;
                t.copy_from_slice(&[label as u8, (label >> 8) as u8, 0, 255]);
            }
            (bands, entries, centroids, labels)
        });
        Synthetic {
            width,
            height,
            count,
            means_l,
            means_u,
            quats,
            scales,
            sh0,
            sh_n,
            codebook,
        }
    }

    pub fn meta_json(&self) -> serde_json::Value {
        let mut meta = serde_json::json!({
            "version": 2,
            "count": self.count,
            "means": { "mins": [-1.0, -2.0, -0.5], "maxs": [1.0, 0.5, 2.0], "files": ["means_l.webp", "means_u.webp"] },
            "scales": { "codebook": self.codebook, "files": ["scales.webp"] },
            "quats": { "files": ["quats.webp"] },
            "sh0": { "codebook": self.codebook, "files": ["sh0.webp"] },
        });
        if let Some((bands, entries, _, _)) = &self.sh_n {
            meta["shN"] = serde_json::json!({
                "count": entries, "bands": bands, "codebook": self.codebook,
                "files": ["shN_centroids.webp", "shN_labels.webp"],
            });
        }
        meta
    }

    pub fn files_with_meta(&self, meta: &serde_json::Value) -> HashMap<String, Vec<u8>> {
        let (w, h) = (self.width, self.height);
        let mut files = HashMap::from([
            ("meta.json".to_owned(), serde_json::to_vec(meta).unwrap()),
            ("means_l.webp".to_owned(), webp(w, h, &self.means_l)),
            ("means_u.webp".to_owned(), webp(w, h, &self.means_u)),
            ("quats.webp".to_owned(), webp(w, h, &self.quats)),
            ("scales.webp".to_owned(), webp(w, h, &self.scales)),
            ("sh0.webp".to_owned(), webp(w, h, &self.sh0)),
        ]);
        if let Some((bands, entries, centroids, labels)) = &self.sh_n {
            let coeffs = [0, 3, 8, 15][*bands as usize] as u32;
            let rows = (*entries / 64) as u32;
            files.insert(
                "shN_centroids.webp".into(),
                webp(64 * coeffs, rows, centroids),
            );
            files.insert("shN_labels.webp".into(), webp(w, h, labels));
        }
        files
    }

    pub fn files(&self) -> HashMap<String, Vec<u8>> {
        self.files_with_meta(&self.meta_json())
    }

    pub fn bundle(&self) -> Vec<u8> {
        let files = self.files();
        let mut names: Vec<&String> = files.keys().collect();
        names.sort();
        let entries: Vec<(&str, &[u8])> = names
            .iter()
            .map(|n| (n.as_str(), files[*n].as_slice()))
            .collect();
        zip(&entries)
    }
}
