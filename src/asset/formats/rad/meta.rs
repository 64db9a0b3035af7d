//! The JSON blocks of a `.rad` file: the file's header (`RadMeta` in Spark) and each
//! chunk's (`RadChunkMeta`), as serde types. Unknown keys are ignored, as Spark does.

use serde::{Deserialize, Serialize};

/// The only version of the container there is.
pub const VERSION: u32 = 1;

/// The file header's JSON.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileMeta {
    pub version: u32,
    #[serde(rename = "type")]
    pub kind: String,
    pub count: u64,
    #[serde(rename = "maxSh", default, skip_serializing_if = "Option::is_none")]
    pub max_sh: Option<u64>,
    #[serde(rename = "lodTree", default, skip_serializing_if = "Option::is_none")]
    pub lod_tree: Option<bool>,
    #[serde(rename = "chunkSize", default, skip_serializing_if = "Option::is_none")]
    pub chunk_size: Option<u64>,
    #[serde(rename = "allChunkBytes")]
    pub all_chunk_bytes: u64,
    pub chunks: Vec<ChunkRange>,
    #[serde(
        rename = "splatEncoding",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub splat_encoding: Option<SplatEncoding>,
    #[serde(
        rename = "shCodeCount",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub sh_code_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// Where a chunk's bytes are: after the header (or in `filename`, beside the file).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChunkRange {
    pub offset: u64,
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
}

/// The ranges Spark's own renderer packs into its 8-bit GPU layout; informational for
/// a reader (each property carries its own `min`/`max`), written for Spark.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SplatEncoding {
    #[serde(rename = "rgbMin", default, skip_serializing_if = "Option::is_none")]
    pub rgb_min: Option<f32>,
    #[serde(rename = "rgbMax", default, skip_serializing_if = "Option::is_none")]
    pub rgb_max: Option<f32>,
    #[serde(
        rename = "lnScaleMin",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ln_scale_min: Option<f32>,
    #[serde(
        rename = "lnScaleMax",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ln_scale_max: Option<f32>,
    #[serde(rename = "sh1Max", default, skip_serializing_if = "Option::is_none")]
    pub sh1_max: Option<f32>,
    #[serde(rename = "sh2Max", default, skip_serializing_if = "Option::is_none")]
    pub sh2_max: Option<f32>,
    #[serde(rename = "sh3Max", default, skip_serializing_if = "Option::is_none")]
    pub sh3_max: Option<f32>,
    #[serde(
        rename = "lodOpacity",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub lod_opacity: Option<bool>,
}

/// A chunk's JSON.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChunkMeta {
    pub version: u32,
    pub base: u64,
    pub count: u64,
    #[serde(rename = "payloadBytes")]
    pub payload_bytes: u64,
    #[serde(rename = "maxSh", default, skip_serializing_if = "Option::is_none")]
    pub max_sh: Option<u64>,
    #[serde(rename = "lodTree", default, skip_serializing_if = "Option::is_none")]
    pub lod_tree: Option<bool>,
    #[serde(
        rename = "splatEncoding",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub splat_encoding: Option<SplatEncoding>,
    pub properties: Vec<PropertyMeta>,
}

/// One property's blob in a chunk's payload. Names are kept as strings so that a
/// property this reader does not know is skipped rather than failing the file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PropertyMeta {
    pub offset: u64,
    pub bytes: u64,
    pub property: String,
    pub encoding: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f32>,
}
