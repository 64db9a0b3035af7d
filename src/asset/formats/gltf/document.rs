//! The parts of the glTF 2.0 JSON that splats need, as plain serde structs.
//!
//! Every field the splat path does not read is left out, so unknown properties and
//! extensions never fail the parse. Sizes and offsets are `u64` so a 32-bit target
//! (wasm32) cannot truncate them before they are checked.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Root {
    pub asset: Asset,
    pub extensions_used: Vec<String>,
    pub extensions_required: Vec<String>,
    pub scene: Option<usize>,
    pub scenes: Vec<Scene>,
    pub nodes: Vec<Node>,
    pub meshes: Vec<Mesh>,
    pub accessors: Vec<Accessor>,
    pub buffer_views: Vec<BufferView>,
    pub buffers: Vec<Buffer>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Asset {
    pub version: String,
    pub min_version: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Scene {
    pub nodes: Vec<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Node {
    pub name: Option<String>,
    pub mesh: Option<usize>,
    pub children: Vec<usize>,
    pub matrix: Option<[f32; 16]>,
    pub translation: Option<[f32; 3]>,
    pub rotation: Option<[f32; 4]>,
    pub scale: Option<[f32; 3]>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Mesh {
    pub primitives: Vec<Primitive>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Primitive {
    pub attributes: BTreeMap<String, usize>,
    /// glTF's default is 4 (TRIANGLES).
    pub mode: Option<u32>,
    pub extensions: BTreeMap<String, Value>,
    pub extras: Value,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Accessor {
    pub buffer_view: Option<usize>,
    pub byte_offset: u64,
    pub component_type: u32,
    pub normalized: bool,
    pub count: u64,
    #[serde(rename = "type")]
    pub type_name: String,
    pub sparse: Option<Sparse>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Sparse {
    pub count: u64,
    pub indices: SparseIndices,
    pub values: SparseValues,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct SparseIndices {
    pub buffer_view: usize,
    pub byte_offset: u64,
    pub component_type: u32,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct SparseValues {
    pub buffer_view: usize,
    pub byte_offset: u64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct BufferView {
    pub buffer: usize,
    pub byte_offset: u64,
    pub byte_length: u64,
    pub byte_stride: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Buffer {
    pub uri: Option<String>,
    pub byte_length: u64,
}

/// The `KHR_gaussian_splatting` object of a primitive. Every property is optional here
/// although the spec requires `kernel` and `colorSpace`: real files (Cesium's) omit them.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct GaussianSplatting {
    pub kernel: Option<String>,
    pub color_space: Option<String>,
    pub projection: Option<String>,
    pub sorting_method: Option<String>,
    pub extensions: BTreeMap<String, Value>,
}

/// `KHR_gaussian_splatting_compression_spz_2` and the older
/// `KHR_spz_gaussian_splats_compression`: both only point at the SPZ blob.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SpzCompression {
    pub buffer_view: usize,
}
