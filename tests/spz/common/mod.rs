//! Shared test helpers: fixture paths, a binary-PLY reader, and SPZ byte builders.
#![allow(dead_code)]

pub mod encode;
pub mod ply;

pub use bevy_splat::asset::decoded::sh_stride;
use std::io::Read;
use std::path::PathBuf;

/// A file of `tests/data/`.
pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A file of `tests/data/spz/` (see its `FIXTURES.md`).
pub fn fixture(name: &str) -> PathBuf {
    data("spz").join(name)
}

pub fn read(path: PathBuf) -> Vec<u8> {
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Reads a fixture, inflating it when its name ends in `.gz`.
pub fn read_fixture(name: &str) -> Vec<u8> {
    let bytes = read(fixture(name));
    if name.ends_with(".gz") {
        gunzip(&bytes)
    } else {
        bytes
    }
}

/// The first gzip member, whole.
pub fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("valid gzip");
    out
}

pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

pub fn normalised(q: [f32; 4]) -> [f32; 4] {
    let n = q.iter().map(|c| c * c).sum::<f32>().sqrt();
    q.map(|c| c / n)
}

/// xorshift32: a fixed, dependency-free random stream.
pub struct XorShift(pub u32);

impl XorShift {
    pub fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() as usize) % n.max(1)
    }
}

/// Largest absolute difference seen, and where, for readable failures.
#[derive(Default, Debug)]
pub struct MaxError {
    pub value: f32,
    pub at: usize,
}

impl MaxError {
    pub fn update(&mut self, error: f32, at: usize) {
        if error > self.value || error.is_nan() {
            self.value = error;
            self.at = at;
        }
    }
}
