//! meta.json exactly as serde sees it. Every key is optional here so that a missing
//! key becomes `SogError::MissingKey` naming it, rather than serde's generic message;
//! a key of the wrong JSON type still fails in serde, with serde's message.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub(super) struct RawMeta {
    /// Absent in v1. Kept as a JSON value so that `"2"` or `2.5` is reported as an
    /// unsupported version instead of a type error.
    pub version: Option<serde_json::Value>,
    pub count: Option<u64>,
    /// The boolean that the bevy_splat brief names; PlayCanvas itself writes `model`.
    pub antialias: Option<bool>,
    /// splat-transform ≥ 3.2 and the SOG spec: `"antialiased"`, `"2dgs"` or absent.
    pub model: Option<String>,
    pub means: Option<RawProperty>,
    pub scales: Option<RawProperty>,
    pub quats: Option<RawProperty>,
    pub sh0: Option<RawProperty>,
    #[serde(rename = "shN")]
    pub sh_n: Option<RawShN>,
}

/// One per-splat property (means, scales, quats, sh0) of either version.
#[derive(Debug, Deserialize)]
pub(super) struct RawProperty {
    pub files: Option<Vec<String>>,
    /// v1 (all properties) and v2 (means only): per-channel ranges.
    pub mins: Option<Vec<f64>>,
    pub maxs: Option<Vec<f64>>,
    /// v2: 256 entries. Old writers emitted `null` for a non-finite centroid.
    pub codebook: Option<Vec<Option<f64>>>,
    /// v1: `[count, channels...]`.
    pub shape: Option<Vec<u64>>,
    /// v1 quats: `"quaternion_packed"`.
    pub encoding: Option<String>,
}

/// The SH palette. v1 quantises it linearly between scalar `mins`/`maxs`, v2 through
/// a codebook.
#[derive(Debug, Deserialize)]
pub(super) struct RawShN {
    pub files: Option<Vec<String>>,
    pub count: Option<u64>,
    pub bands: Option<u64>,
    pub codebook: Option<Vec<Option<f64>>>,
    pub mins: Option<f64>,
    pub maxs: Option<f64>,
}
