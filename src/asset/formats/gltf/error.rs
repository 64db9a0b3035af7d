//! Everything that can go wrong reading a glTF splat file, each case named so a caller
//! (or a test) can tell a truncated download from a file of the wrong kind.

use std::fmt;

use crate::asset::formats::spz::SpzError;

/// A mesh primitive, for messages: "mesh 3 primitive 0".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    /// Index of the mesh in the document's `meshes`.
    pub mesh: usize,
    /// Index of the primitive in the mesh's `primitives`.
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
    /// An entry of `accessors`.
    Accessor,
    /// An entry of `buffers`.
    Buffer,
    /// An entry of `bufferViews`.
    BufferView,
    /// An entry of `meshes`.
    Mesh,
    /// An entry of `nodes`.
    Node,
    /// An entry of `scenes`.
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

/// Why a glTF or GLB file did not decode into splats. Indices are the document's own
/// (`accessor 4` is `accessors[4]`).
#[derive(Debug, thiserror::Error)]
pub enum GltfError {
    /// The bytes are neither a GLB container nor a JSON document.
    #[error(
        "not a glTF file: it starts with {found:02x?}, neither the GLB magic \"glTF\" nor a JSON object"
    )]
    NotGltf {
        /// The file's first bytes.
        found: Vec<u8>,
    },
    /// A GLB container of a version other than 2.
    #[error("GLB container version {0} is not supported (only version 2)")]
    UnsupportedGlbVersion(u32),
    /// The GLB header's length disagrees with the bytes that arrived (a truncated
    /// download, usually).
    #[error("GLB header says the file is {declared} bytes, but {actual} bytes arrived")]
    GlbLength {
        /// The length in the header.
        declared: u64,
        /// The length of the file.
        actual: u64,
    },
    /// A GLB chunk runs past the end of the file.
    #[error(
        "GLB chunk {index} at byte {offset} claims {length} bytes, past the end of the {file_len}-byte file"
    )]
    GlbChunkPastEnd {
        /// The chunk's position among the chunks.
        index: usize,
        /// Where its data starts, in bytes.
        offset: u64,
        /// The length it claims.
        length: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A GLB whose first chunk is not the JSON chunk.
    #[error("GLB's first chunk has type {found:#010x}, not JSON (0x4e4f534a)")]
    GlbFirstChunkNotJson {
        /// The chunk's type.
        found: u32,
    },
    /// The JSON does not parse, or does not have glTF's shape.
    #[error("glTF JSON is invalid: {0}")]
    Json(String),
    /// `asset.version` is not 2.x.
    #[error("glTF version {version} is not supported (only 2.x)")]
    UnsupportedVersion {
        /// The version the file declares.
        version: String,
    },
    /// An index points past the end of its array.
    #[error("{kind} {index} does not exist (there are {len}), referenced by {referrer}")]
    IndexOutOfRange {
        /// The array it indexes.
        kind: Kind,
        /// The index.
        index: usize,
        /// The array's length.
        len: usize,
        /// What holds the index, for the message.
        referrer: String,
    },
    /// A buffer's data is shorter than its `byteLength`.
    #[error("buffer {buffer} declares {declared} bytes but its data holds {actual}")]
    BufferTooShort {
        /// The buffer.
        buffer: usize,
        /// Its `byteLength`.
        declared: u64,
        /// The bytes its data holds.
        actual: u64,
    },
    /// A buffer without a `uri` in a file with no GLB binary chunk.
    #[error("buffer {buffer} has no uri and there is no GLB binary chunk to stand for it")]
    MissingBinChunk {
        /// The buffer.
        buffer: usize,
    },
    /// A buffer view reaches past the end of its buffer.
    #[error("bufferView {view} ends at byte {end}, past the end of its {buffer_len}-byte buffer")]
    BufferViewOutOfBounds {
        /// The buffer view.
        view: usize,
        /// The byte it ends at.
        end: u64,
        /// Its buffer's length.
        buffer_len: u64,
    },
    /// An accessor reaches past the end of its buffer view.
    #[error(
        "accessor {accessor} needs bytes up to {end} of bufferView {view}, which holds {view_len}"
    )]
    AccessorOutOfBounds {
        /// The accessor.
        accessor: usize,
        /// Its buffer view.
        view: usize,
        /// The byte of the view its last element ends at.
        end: u64,
        /// The view's length.
        view_len: u64,
    },
    /// An accessor's elements overlap: its stride is smaller than an element.
    #[error("accessor {accessor}: byteStride {stride} is smaller than its {element}-byte elements")]
    StrideTooSmall {
        /// The accessor.
        accessor: usize,
        /// Its view's `byteStride`.
        stride: u64,
        /// Bytes of one of its elements.
        element: u64,
    },
    /// An accessor's `componentType` is none of glTF's.
    #[error("accessor {accessor} has unknown componentType {component_type}")]
    UnknownComponentType {
        /// The accessor.
        accessor: usize,
        /// Its `componentType`.
        component_type: u32,
    },
    /// An accessor's `type` is none of glTF's (`SCALAR`, `VEC3`, …).
    #[error("accessor {accessor} has unknown type \"{type_name}\"")]
    UnknownAccessorType {
        /// The accessor.
        accessor: usize,
        /// Its `type`.
        type_name: String,
    },
    /// A splat attribute's accessor has a type or component type the extension does
    /// not allow for it.
    #[error(
        "{site}: attribute {attribute} (accessor {accessor}) is {found}, but it must be {expected}"
    )]
    WrongAccessorFormat {
        /// The primitive.
        site: Site,
        /// The attribute's name.
        attribute: String,
        /// Its accessor.
        accessor: usize,
        /// The accessor's format.
        found: String,
        /// The formats allowed.
        expected: &'static str,
    },
    /// Two attributes of one primitive have different element counts.
    #[error(
        "{site}: {attribute} has {count} elements but {reference} has {reference_count}; all attributes of a primitive must agree"
    )]
    MismatchedCounts {
        /// The primitive.
        site: Site,
        /// The attribute that disagrees.
        attribute: String,
        /// Its element count.
        count: u64,
        /// The attribute it is compared with.
        reference: String,
        /// That attribute's element count.
        reference_count: u64,
    },
    /// A splat primitive lacks an attribute every splat needs.
    #[error("{site}: the required attribute {attribute} is missing")]
    MissingAttribute {
        /// The primitive.
        site: Site,
        /// The attribute's name.
        attribute: &'static str,
    },
    /// An attribute's accessor has no buffer view, so no data behind it (POSITION
    /// must have data: its count, the splat count, is then bounded by the file's size).
    #[error("{site}: {attribute} (accessor {accessor}) has no bufferView, so no data behind it")]
    NoData {
        /// The primitive.
        site: Site,
        /// The attribute's name.
        attribute: String,
        /// Its accessor.
        accessor: usize,
    },
    /// The spherical-harmonic attributes stop part-way through a degree.
    #[error("{site}: SH degree {degree} is incomplete: {missing} is missing")]
    ShDegreeIncomplete {
        /// The primitive.
        site: Site,
        /// The incomplete degree.
        degree: u8,
        /// The first attribute of it that is missing.
        missing: String,
    },
    /// A spherical-harmonic attribute names a coefficient past its degree.
    #[error("{site}: {attribute} names a spherical-harmonic coefficient that does not exist")]
    ShCoefficientOutOfRange {
        /// The primitive.
        site: Site,
        /// The attribute's name.
        attribute: String,
    },
    /// `extensionsRequired` lists an extension this decoder does not implement.
    #[error("the file requires the glTF extension {0}, which this loader does not support")]
    UnsupportedRequiredExtension(String),
    /// A splat extension's object does not have the shape its specification gives.
    #[error("{site}: the {name} extension object is invalid: {message}")]
    InvalidExtension {
        /// The primitive.
        site: Site,
        /// The extension.
        name: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// An SPZ-compressed primitive's SPZ data does not decode.
    #[error("{site}: SPZ data is invalid: {source}")]
    Spz {
        /// The primitive.
        site: Site,
        /// Why the SPZ decoder refused it.
        #[source]
        source: SpzError,
    },
    /// A `data:` URI that does not decode.
    #[error("buffer {buffer}: data URI is invalid: {reason}")]
    DataUri {
        /// The buffer.
        buffer: usize,
        /// What is wrong with the URI.
        reason: String,
    },
    /// A buffer URI that is not a valid percent-encoded UTF-8 path.
    #[error("buffer {buffer}: uri {uri:?} is not a valid percent-encoded UTF-8 path")]
    InvalidUri {
        /// The buffer.
        buffer: usize,
        /// Its `uri`.
        uri: String,
    },
    /// A buffer names a file the caller did not supply.
    #[error("buffer {buffer}: the external file {uri:?} was not provided")]
    MissingExternalBuffer {
        /// The buffer.
        buffer: usize,
        /// Its `uri`.
        uri: String,
    },
    /// A node is its own ancestor.
    #[error("the node hierarchy has a cycle through node {node}")]
    NodeCycle {
        /// A node on the cycle.
        node: usize,
    },
    /// A node is listed among the children of two nodes.
    #[error("node {node} is a child of both node {first} and node {second}")]
    NodeWithTwoParents {
        /// The node.
        node: usize,
        /// One parent.
        first: usize,
        /// The other.
        second: usize,
    },
    /// A scene lists as a root a node that has a parent.
    #[error("scene root node {node} is a child of node {parent}")]
    SceneRootIsChild {
        /// The node.
        node: usize,
        /// Its parent.
        parent: usize,
    },
    /// A node's matrix or translation, rotation and scale hold a NaN or an infinity.
    #[error("node {node} has a non-finite transform")]
    NonFiniteTransform {
        /// The node.
        node: usize,
    },
    /// The scene, or one primitive, holds more splats than the decoder accepts.
    #[error("the scene holds {count} splats, more than the {max} this loader accepts")]
    TooManySplats {
        /// The splats counted.
        count: u64,
        /// The most accepted.
        max: u64,
    },
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
