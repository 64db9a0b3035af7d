//! A `.rad` read a chunk at a time, as a streaming viewer reads one: the header says
//! where every chunk lies (in the file after the header, or in a file of its own), so
//! chunks can be fetched in any order and decoded alone. The first chunk holds the
//! root and the coarsest levels of the tree (nodes are stored breadth first), and the
//! clustered-SH codebook when the file has one, so it is read with the header.

use super::container::{Chunk, FILE_MAGIC, Header, padded, parse_chunk, parse_header};
use super::decode::{Codebook, Columns, MAX_CHUNK_SPLATS};
use super::error::RadError;
use crate::asset::decoded::DecodedSplats;

/// Bytes of a `.rad`'s start that say how long its header is (magic and JSON length).
pub const HEADER_PREFIX_BYTES: usize = 8;

/// The most header bytes read before they are parsed.
const MAX_HEADER_BYTES: u64 = 64 << 20;

/// Where a chunk's bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkLocation {
    /// The file beside the header that holds it, or `None` for the header's own file.
    pub file: Option<String>,
    /// Its first byte in that file.
    pub offset: u64,
    /// Its length.
    pub bytes: u64,
}

/// One chunk's nodes, numbered from `base` in the whole file.
#[derive(Clone, Debug, PartialEq)]
pub struct RadChunk {
    /// The file's index of the chunk's first node.
    pub base: u32,
    /// Its nodes as splats (interior nodes of opacity above 1 widened, as a whole
    /// file's are).
    pub nodes: DecodedSplats,
    /// Per node, `[first child, child count]` in the whole file's numbering.
    pub children: Vec<[u32; 2]>,
}

/// A `.rad` file's header and first chunk: enough to fetch and decode any other chunk.
pub struct RadStreamIndex {
    header: Header,
    codebook: Option<Codebook>,
    chunk_size: u32,
}

impl std::fmt::Debug for RadStreamIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RadStreamIndex")
            .field("nodes", &self.header.meta.count)
            .field("chunks", &self.header.meta.chunks.len())
            .field("chunk_size", &self.chunk_size)
            .finish()
    }
}

/// How many bytes the header of a `.rad` starting with `prefix` (at least
/// [`HEADER_PREFIX_BYTES`]) takes, padding included.
pub fn header_bytes(prefix: &[u8]) -> Result<u64, RadError> {
    if prefix.len() < HEADER_PREFIX_BYTES || !prefix.starts_with(&FILE_MAGIC) {
        return Err(RadError::BadMagic);
    }
    let json = u64::from(u32::from_le_bytes([
        prefix[4], prefix[5], prefix[6], prefix[7],
    ]));
    let total = 8 + padded(json);
    if total > MAX_HEADER_BYTES {
        return Err(RadError::Unsupported {
            what: "the header's length",
            found: total.to_string(),
            expected: "at most 64 MiB",
        });
    }
    Ok(total)
}

impl RadStreamIndex {
    /// Parses `header` (the file's first [`header_bytes`]) and checks that it can be
    /// streamed: a level-of-detail tree, in chunks of one size.
    pub fn new(header: &[u8]) -> Result<Self, RadError> {
        let header = parse_header(header)?;
        let meta = &header.meta;
        if meta.max_sh.unwrap_or(0) > 3 {
            return Err(RadError::ShDegree(meta.max_sh.unwrap_or(0)));
        }
        if !meta.lod_tree.unwrap_or(false) {
            return Err(RadError::NotStreamable(
                "it has no level-of-detail tree".to_owned(),
            ));
        }
        let chunk_size = meta.chunk_size.unwrap_or(65_536);
        if chunk_size == 0 || chunk_size > MAX_CHUNK_SPLATS {
            return Err(RadError::ChunkTooLarge {
                chunk: 0,
                count: chunk_size,
                max: MAX_CHUNK_SPLATS,
            });
        }
        let chunks = meta.chunks.len() as u64;
        if meta.count > chunk_size.saturating_mul(chunks) || meta.count > u64::from(u32::MAX) {
            return Err(RadError::NotStreamable(format!(
                "{} nodes do not fit {chunks} chunks of {chunk_size}",
                meta.count
            )));
        }
        if meta.count == 0 {
            return Err(RadError::NotStreamable("it holds no nodes".to_owned()));
        }
        Ok(Self {
            header,
            codebook: None,
            chunk_size: chunk_size as u32,
        })
    }

    /// Nodes in the file, leaves and interior.
    pub fn nodes(&self) -> u32 {
        self.header.meta.count as u32
    }

    /// Chunks in the file.
    pub fn chunks(&self) -> usize {
        self.header.meta.chunks.len()
    }

    /// Nodes a chunk holds (the last may hold fewer).
    pub fn chunk_size(&self) -> u32 {
        self.chunk_size
    }

    /// The SH degree of every node.
    pub fn sh_degree(&self) -> u8 {
        self.header.meta.max_sh.unwrap_or(0) as u8
    }

    /// The nodes chunk `index` holds: `base..base + count`.
    pub fn chunk_nodes(&self, index: usize) -> std::ops::Range<u32> {
        let base = (index as u64 * u64::from(self.chunk_size)).min(self.header.meta.count);
        let end = (base + u64::from(self.chunk_size)).min(self.header.meta.count);
        base as u32..end as u32
    }

    /// The chunk that holds node `node`.
    pub fn chunk_of(&self, node: u32) -> usize {
        (node / self.chunk_size) as usize
    }

    /// The most bytes a chunk may take: room for every property of its nodes at f32
    /// and four times over, so that a header's byte counts cannot size an allocation
    /// beyond what its chunk size could use.
    pub fn max_chunk_bytes(&self) -> u64 {
        u64::from(self.chunk_size) * 1024 + (1 << 20)
    }

    /// Where chunk `index` lies; an error past the last chunk, or for a chunk claiming
    /// more than [`max_chunk_bytes`](Self::max_chunk_bytes).
    pub fn location(&self, index: usize) -> Result<ChunkLocation, RadError> {
        let range = self.header.meta.chunks.get(index).ok_or_else(|| {
            RadError::NotStreamable(format!(
                "chunk {index} is past the header's {}",
                self.chunks()
            ))
        })?;
        if range.bytes > self.max_chunk_bytes() {
            return Err(RadError::NotStreamable(format!(
                "chunk {index} claims {} bytes; {} nodes take at most {}",
                range.bytes,
                self.chunk_size,
                self.max_chunk_bytes()
            )));
        }
        Ok(match &range.filename {
            Some(file) => ChunkLocation {
                file: Some(file.clone()),
                offset: range.offset,
                bytes: range.bytes,
            },
            None => ChunkLocation {
                file: None,
                offset: self.header.chunks_start.saturating_add(range.offset),
                bytes: range.bytes,
            },
        })
    }

    /// Decodes chunk 0 from its bytes (the [`location`](Self::location)'s range),
    /// keeping the clustered-SH codebook it holds when the file has one: call it before
    /// [`decode_chunk`](Self::decode_chunk).
    pub fn decode_first(&mut self, bytes: &[u8]) -> Result<RadChunk, RadError> {
        let chunk = parse_chunk(bytes, 0, 0)?;
        if self.header.meta.sh_code_count.is_some() {
            self.codebook = Some(Codebook::read(&chunk, &self.header)?);
        }
        self.decode_parsed(0, &chunk)
    }

    /// Decodes chunk `index` from its bytes, checking that it holds the nodes the
    /// header places there and that each node's children come after it within the
    /// file.
    pub fn decode_chunk(&self, index: usize, bytes: &[u8]) -> Result<RadChunk, RadError> {
        if self.header.meta.sh_code_count.is_some() && self.codebook.is_none() {
            return Err(RadError::NotStreamable(
                "its SH codebook (in chunk 0) was not read first".to_owned(),
            ));
        }
        let chunk = parse_chunk(bytes, 0, index)?;
        self.decode_parsed(index, &chunk)
    }

    fn decode_parsed(&self, index: usize, chunk: &Chunk<'_>) -> Result<RadChunk, RadError> {
        if index >= self.chunks() {
            return Err(RadError::NotStreamable(format!(
                "chunk {index} is past the header's {}",
                self.chunks()
            )));
        }
        let expected = self.chunk_nodes(index);
        if chunk.meta.base != u64::from(expected.start) {
            return Err(RadError::ChunkBase {
                chunk: index,
                base: chunk.meta.base,
                expected: u64::from(expected.start),
            });
        }
        if chunk.meta.count != u64::from(expected.end - expected.start) {
            return Err(RadError::NotStreamable(format!(
                "chunk {index} holds {} nodes where the header's chunk size places {}",
                chunk.meta.count,
                expected.end - expected.start
            )));
        }
        let degree = self.sh_degree();
        let mut columns = Columns::new(degree, true);
        columns.add_chunk(chunk, index, self.codebook.as_ref())?;
        let children = columns.children.take().unwrap_or_default();
        let total = u64::from(self.nodes());
        for (i, &[start, count]) in children.iter().enumerate() {
            let node = u64::from(expected.start) + i as u64;
            if count > 0
                && (u64::from(start) <= node || u64::from(start) + u64::from(count) > total)
            {
                return Err(RadError::Tree(format!(
                    "node {node}'s children {start}..{} do not lie after it within the \
                     file's {total} nodes",
                    u64::from(start) + u64::from(count)
                )));
            }
        }
        let decoded = Columns::finish(vec![columns], degree, None, true);
        Ok(RadChunk {
            base: expected.start,
            nodes: decoded.nodes,
            children,
        })
    }
}
