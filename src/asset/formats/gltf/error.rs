//! Everything that can go wrong reading a glTF splat file, each case named so a caller
//! (or a test) can tell a truncated download from a file of the wrong kind.

use std::fmt;

use crate::asset::formats::spz::SpzError;

/// A mesh primitive, for messages: "mesh 3 primitive 0".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    pub mesh: usize,
    pub primitive: usize,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mesh {} primitive {}", self.mesh, self.primitive)
    }
}

/// The kinds of object a glTF index can point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Accessor,
    Buffer,
    BufferView,
    Mesh,
    Node,
    Scene,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Accessor => "accessor",
            Kind::Buffer => "buffer",
            Kind::BufferView => "bufferView",
            Kind::Mesh => "mesh",
            Kind::Node => "node",
            Kind::Scene => "scene",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GltfError {
    #[error(
        "not a glTF file: it starts with {found:02x?}, neither the GLB magic \"glTF\" nor a JSON object"
    )]
    NotGltf { found: Vec<u8> },
    #[error("GLB container version {0} is not supported (only version 2)")]
    UnsupportedGlbVersion(u32),
    #[error("GLB header says the file is {declared} bytes, but {actual} bytes arrived")]
    GlbLength { declared: u64, actual: u64 },
    #[error(
        "GLB chunk {index} at byte {offset} claims {length} bytes, past the end of the {file_len}-byte file"
    )]
    GlbChunkPastEnd {
        index: usize,
        offset: u64,
        length: u64,
        file_len: u64,
    },
    #[error("GLB's first chunk has type {found:#010x}, not JSON (0x4e4f534a)")]
    GlbFirstChunkNotJson { found: u32 },
    #[error("glTF JSON is invalid: {0}")]
    Json(String),
    #[error("glTF version {version} is not supported (only 2.x)")]
    UnsupportedVersion { version: String },
    #[error("{kind} {index} does not exist (there are {len}), referenced by {referrer}")]
    IndexOutOfRange {
        kind: Kind,
        index: usize,
        len: usize,
        referrer: String,
    },
    #[error("buffer {buffer} declares {declared} bytes but its data holds {actual}")]
    BufferTooShort {
        buffer: usize,
        declared: u64,
        actual: u64,
    },
    #[error("buffer {buffer} has no uri and there is no GLB binary chunk to stand for it")]
    MissingBinChunk { buffer: usize },
    #[error("bufferView {view} ends at byte {end}, past the end of its {buffer_len}-byte buffer")]
    BufferViewOutOfBounds {
        view: usize,
        end: u64,
        buffer_len: u64,
    },
    #[error(
        "accessor {accessor} needs bytes up to {end} of bufferView {view}, which holds {view_len}"
    )]
    AccessorOutOfBounds {
        accessor: usize,
        view: usize,
        end: u64,
        view_len: u64,
    },
    #[error("accessor {accessor}: byteStride {stride} is smaller than its {element}-byte elements")]
    StrideTooSmall {
        accessor: usize,
        stride: u64,
        element: u64,
    },
    #[error("accessor {accessor} has unknown componentType {component_type}")]
    UnknownComponentType {
        accessor: usize,
        component_type: u32,
    },
    #[error("accessor {accessor} has unknown type \"{type_name}\"")]
    UnknownAccessorType { accessor: usize, type_name: String },
    #[error(
        "{site}: attribute {attribute} (accessor {accessor}) is {found}, but it must be {expected}"
    )]
    WrongAccessorFormat {
        site: Site,
        attribute: String,
        accessor: usize,
        found: String,
        expected: &'static str,
    },
    #[error(
        "{site}: {attribute} has {count} elements but {reference} has {reference_count}; all attributes of a primitive must agree"
    )]
    MismatchedCounts {
        site: Site,
        attribute: String,
        count: u64,
        reference: String,
        reference_count: u64,
    },
    #[error("{site}: the required attribute {attribute} is missing")]
    MissingAttribute { site: Site, attribute: &'static str },
    #[error("{site}: {attribute} (accessor {accessor}) has no bufferView, so no data behind it")]
    NoData {
        site: Site,
        attribute: String,
        accessor: usize,
    },
    #[error("{site}: SH degree {degree} is incomplete: {missing} is missing")]
    ShDegreeIncomplete {
        site: Site,
        degree: u8,
        missing: String,
    },
    #[error("{site}: {attribute} names a spherical-harmonic coefficient that does not exist")]
    ShCoefficientOutOfRange { site: Site, attribute: String },
    #[error("the file requires the glTF extension {0}, which this loader does not support")]
    UnsupportedRequiredExtension(String),
    #[error("{site}: the {name} extension object is invalid: {message}")]
    InvalidExtension {
        site: Site,
        name: &'static str,
        message: String,
    },
    #[error("{site}: SPZ data is invalid: {source}")]
    Spz {
        site: Site,
        #[source]
        source: SpzError,
    },
    #[error("buffer {buffer}: data URI is invalid: {reason}")]
    DataUri { buffer: usize, reason: String },
    #[error("buffer {buffer}: uri {uri:?} is not a valid percent-encoded UTF-8 path")]
    InvalidUri { buffer: usize, uri: String },
    #[error("buffer {buffer}: the external file {uri:?} was not provided")]
    MissingExternalBuffer { buffer: usize, uri: String },
    #[error("the node hierarchy has a cycle through node {node}")]
    NodeCycle { node: usize },
    #[error("node {node} is a child of both node {first} and node {second}")]
    NodeWithTwoParents {
        node: usize,
        first: usize,
        second: usize,
    },
    #[error("scene root node {node} is a child of node {parent}")]
    SceneRootIsChild { node: usize, parent: usize },
    #[error("node {node} has a non-finite transform")]
    NonFiniteTransform { node: usize },
    #[error("the scene holds {count} splats, more than the {max} this loader accepts")]
    TooManySplats { count: u64, max: u64 },
}

impl GltfError {
    pub(crate) fn index(kind: Kind, index: usize, len: usize, referrer: impl Into<String>) -> Self {
        GltfError::IndexOutOfRange {
            kind,
            index,
            len,
            referrer: referrer.into(),
        }
    }
}

/// `items[index]`, or an error naming what pointed at it.
pub(crate) fn get<T>(
    items: &[T],
    kind: Kind,
    index: usize,
    referrer: impl FnOnce() -> String,
) -> Result<&T, GltfError> {
    items
        .get(index)
        .ok_or_else(|| GltfError::index(kind, index, items.len(), referrer()))
}
