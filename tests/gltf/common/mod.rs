//! Shared helpers: fixture paths, a seeded generator, exact comparisons.

#![allow(dead_code)]

pub mod glb;
pub mod synthetic;

use std::path::PathBuf;

use bevy_splat::asset::decoded::DecodedSplats;
use bevy_splat::asset::formats::gltf::{self, SplatScene};

pub fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/formats")).join(name)
}

pub fn read(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Decodes a self-contained fixture.
pub fn scene(name: &str) -> SplatScene {
    gltf::decode_bytes(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every splat primitive of the scene, in node order.
pub fn all_splats(scene: &SplatScene) -> Vec<&DecodedSplats> {
    scene.nodes.iter().flat_map(|n| &n.splats).collect()
}

pub struct XorShift(pub u64);

impl XorShift {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in -1..1.
    pub fn signed(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
}

/// Bit-for-bit equality (NaN equal to the same NaN), with the first difference named.
pub fn assert_same_bits(a: &DecodedSplats, b: &DecodedSplats, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: splat count");
    assert_eq!(a.sh_degree, b.sh_degree, "{what}: SH degree");
    assert_eq!(a.antialiased, b.antialiased, "{what}: antialiased");
    assert_eq!(a.non_finite, b.non_finite, "{what}: non-finite count");
    let ga: &[u32] = bytemuck::cast_slice(&a.geometry);
    let gb: &[u32] = bytemuck::cast_slice(&b.geometry);
    if let Some(i) = ga.iter().zip(gb).position(|(x, y)| x != y) {
        panic!(
            "{what}: geometry float {i} (splat {}) differs: {} vs {}",
            i / 12,
            f32::from_bits(ga[i]),
            f32::from_bits(gb[i])
        );
    }
    let sa: &[u32] = bytemuck::cast_slice(&a.sh);
    let sb: &[u32] = bytemuck::cast_slice(&b.sh);
    assert_eq!(sa.len(), sb.len(), "{what}: SH length");
    if let Some(i) = sa.iter().zip(sb).position(|(x, y)| x != y) {
        panic!(
            "{what}: SH float {i} differs: {} vs {}",
            f32::from_bits(sa[i]),
            f32::from_bits(sb[i])
        );
    }
}
