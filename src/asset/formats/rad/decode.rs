//! From a `.rad` file's chunks to splats: each property decoded from its encoding,
//! placed by splat, and turned into the crate's layout (log scales, opacity logits,
//! w-first quaternions, the DC colour as an SH coefficient).

use super::container::{Chunk, Header, parse_chunk, parse_header, property_data};
use super::encoding::{Encoding, ZERO_LN, decode_floats, decode_quaternions, decode_u32};
use super::error::RadError;
use super::meta::PropertyMeta;
use super::parallel::map_in_order;
use crate::asset::decoded::{
    DecodedSplats, DecodedTree, SH_C0, SplatGeometry, opacity_logit, sh_stride,
};

/// The most splats one chunk may hold here (Spark writes 65,536): what bounds the
/// memory a chunk's claims can cost before its data is seen.
pub const MAX_CHUNK_SPLATS: u64 = 1 << 20;

/// What a `.rad` file holds: every node, and its level-of-detail tree if it has one.
#[derive(Clone, Debug, PartialEq)]
pub struct RadSplats {
    /// Every splat of the file in its order, interior nodes of a tree included. An
    /// interior node stored with Spark's opacity above 1 (a merge whose children
    /// cover more than one Gaussian can) is widened to the Gaussian of the same
    /// coverage at full opacity, as this crate's own trees draw such nodes.
    pub nodes: DecodedSplats,
    /// Per node, `[first child, child count]` (children are contiguous; a leaf has
    /// none); `None` when the file has no tree, and every node is a leaf.
    pub children: Option<Vec<[u32; 2]>>,
}

impl RadSplats {
    /// The leaves: the splats as trained, the finest level, in file order.
    pub fn leaves(&self) -> DecodedSplats {
        let Some(children) = &self.children else {
            return self.nodes.clone();
        };
        let stride = self.nodes.sh_stride();
        let mut geometry = Vec::new();
        let mut sh = Vec::new();
        for (node, [_, count]) in children.iter().enumerate() {
            if *count == 0 {
                geometry.push(self.nodes.geometry[node]);
                sh.extend_from_slice(&self.nodes.sh[node * stride..(node + 1) * stride]);
            }
        }
        DecodedSplats::from_parts(geometry, sh, self.nodes.sh_degree, false)
    }
}

impl RadSplats {
    /// The leaves (as [`RadSplats::leaves`]) and the file's tree over them, renumbered
    /// as the crate's trees are: leaves first in file order, then the interior nodes,
    /// each after its children. `None` for a file without a tree.
    pub fn leaves_and_tree(&self) -> (DecodedSplats, Option<DecodedTree>) {
        let leaves = self.leaves();
        let Some(children) = &self.children else {
            return (leaves, None);
        };
        let stride = self.nodes.sh_stride();
        let leaf_count = leaves.len() as u32;
        // File node -> new id: leaves in file order.
        let mut id = vec![u32::MAX; children.len()];
        let mut next_leaf = 0;
        for (node, [_, count]) in children.iter().enumerate() {
            if *count == 0 {
                id[node] = next_leaf;
                next_leaf += 1;
            }
        }
        // Interior nodes in post-order (children first), from the root; the tree was
        // checked to be one tree, so each node is met once.
        let mut tree = DecodedTree::default();
        let mut stack = vec![(0usize, false)];
        while let Some((node, expanded)) = stack.pop() {
            let [start, count] = children[node];
            if count == 0 {
                continue;
            }
            if !expanded {
                stack.push((node, true));
                stack.extend((start as usize..(start + count) as usize).map(|c| (c, false)));
                continue;
            }
            id[node] = leaf_count + tree.interior.len() as u32;
            let first = tree.children.len() as u32;
            tree.children
                .extend((start as usize..(start + count) as usize).map(|c| id[c]));
            tree.child_ranges.push([first, tree.children.len() as u32]);
            tree.interior.push(self.nodes.geometry[node]);
            tree.interior_sh
                .extend_from_slice(&self.nodes.sh[node * stride..(node + 1) * stride]);
        }
        (leaves, Some(tree))
    }
}

/// Decodes a single-file `.rad`.
pub fn decode_nodes(bytes: &[u8]) -> Result<RadSplats, RadError> {
    decode_nodes_with(bytes, |_| None)
}

/// Decodes a `.rad` whose chunks may sit in files of their own (Spark's chunked
/// output: the header names each chunk's `filename`); `chunk_file` returns a named
/// file's bytes.
pub fn decode_nodes_with<'a>(
    bytes: &'a [u8],
    chunk_file: impl Fn(&str) -> Option<&'a [u8]>,
) -> Result<RadSplats, RadError> {
    let header = parse_header(bytes)?;
    let meta = &header.meta;
    let degree = meta.max_sh.unwrap_or(0);
    if degree > 3 {
        return Err(RadError::ShDegree(degree));
    }
    let lod_tree = meta.lod_tree.unwrap_or(false);
    let lod_opacity = lod_tree
        || meta
            .splat_encoding
            .as_ref()
            .and_then(|e| e.lod_opacity)
            .unwrap_or(false);
    // The chunks' framing first, in order: where each starts and how many it holds.
    let mut chunks = Vec::with_capacity(meta.chunks.len().min(bytes.len() / 16 + 1));
    let mut decoded = 0u64;
    for (index, range) in meta.chunks.iter().enumerate() {
        let chunk = match &range.filename {
            Some(name) => {
                let file = chunk_file(name).ok_or_else(|| RadError::MissingChunkFile {
                    chunk: index,
                    file: name.clone(),
                })?;
                parse_chunk(file, range.offset, index)?
            }
            None => parse_chunk(
                bytes,
                header.chunks_start.saturating_add(range.offset),
                index,
            )?,
        };
        let count = chunk.meta.count;
        if count > MAX_CHUNK_SPLATS {
            return Err(RadError::ChunkTooLarge {
                chunk: index,
                count,
                max: MAX_CHUNK_SPLATS,
            });
        }
        if chunk.meta.base != decoded {
            return Err(RadError::ChunkBase {
                chunk: index,
                base: chunk.meta.base,
                expected: decoded,
            });
        }
        decoded += count;
        chunks.push((index, chunk));
    }
    if decoded != meta.count {
        return Err(RadError::CountMismatch {
            header: meta.count,
            chunks: decoded,
        });
    }
    let codebook = match (meta.sh_code_count, chunks.first()) {
        (Some(_), Some((_, first))) => Some(Codebook::read(first, &header)?),
        _ => None,
    };
    // Then their properties, on several threads where there are.
    let parts = map_in_order(&chunks, |(index, chunk)| {
        let mut columns = Columns::new(degree as u8, lod_tree);
        columns.add_chunk(chunk, *index, codebook.as_ref())?;
        Ok(columns)
    });
    let parts = parts
        .into_iter()
        .collect::<Result<Vec<Columns>, RadError>>()?;
    let children = match lod_tree {
        true => {
            let all: Vec<[u32; 2]> = parts
                .iter()
                .flat_map(|part| part.children.iter().flatten().copied())
                .collect();
            check_tree(&all)?;
            Some(all)
        }
        false => None,
    };
    Ok(Columns::finish(parts, degree as u8, children, lod_opacity))
}

/// The properties as read, per splat.
pub(super) struct Columns {
    degree: u8,
    position: Vec<[f32; 3]>,
    alpha: Vec<f32>,
    rgb: Vec<[f32; 3]>,
    scale: Vec<[f32; 3]>,
    /// `[x, y, z, w]`.
    rotation: Vec<[f32; 4]>,
    /// The SH coefficients after DC, `rest_len()` a splat, in the crate's order.
    rest: Vec<f32>,
    pub(super) children: Option<Vec<[u32; 2]>>,
}

/// A band's place: its property name, its code property, its first coefficient after
/// DC, and its coefficients.
const BANDS: [(&str, &str, usize, usize); 3] = [
    ("sh1", "sh1_code", 0, 3),
    ("sh2", "sh2_code", 3, 5),
    ("sh3", "sh3_code", 8, 7),
];

const SH_ENCODINGS: &[Encoding] = &[
    Encoding::F32,
    Encoding::F16,
    Encoding::R8,
    Encoding::R8Delta,
    Encoding::S8,
    Encoding::S8Delta,
];

impl Columns {
    pub(super) fn new(degree: u8, lod_tree: bool) -> Self {
        Self {
            degree,
            position: Vec::new(),
            alpha: Vec::new(),
            rgb: Vec::new(),
            scale: Vec::new(),
            rotation: Vec::new(),
            rest: Vec::new(),
            children: lod_tree.then(Vec::new),
        }
    }

    fn len(&self) -> usize {
        self.position.len()
    }

    fn rest_len(&self) -> usize {
        sh_stride(self.degree) - 3
    }

    pub(super) fn add_chunk(
        &mut self,
        chunk: &Chunk<'_>,
        index: usize,
        codebook: Option<&Codebook>,
    ) -> Result<(), RadError> {
        let count = chunk.meta.count;
        let n = count as usize;
        let reader = ChunkReader { chunk, index, n };

        let position = reader.floats(
            "center",
            3,
            &[
                Encoding::F32,
                Encoding::F16,
                Encoding::F32LeBytes,
                Encoding::F16LeBytes,
            ],
        )?;
        let alpha = reader.floats("alpha", 1, &[Encoding::F32, Encoding::F16, Encoding::R8])?;
        let rgb = reader.floats(
            "rgb",
            3,
            &[
                Encoding::F32,
                Encoding::F16,
                Encoding::R8,
                Encoding::R8Delta,
            ],
        )?;
        let scale = reader.floats(
            "scales",
            3,
            &[Encoding::F32, Encoding::LnF16, Encoding::Ln0R8],
        )?;
        let rotation = reader.rotations()?;
        let rest = self.chunk_sh(&reader, codebook)?;
        let children = match self.children.is_some() {
            true => Some((
                reader.integers("child_start", Encoding::U32)?,
                reader.integers("child_count", Encoding::U16)?,
            )),
            false => None,
        };

        for i in 0..n {
            let at = |values: &[f32], d: usize| values[d * n + i];
            self.position
                .push(std::array::from_fn(|d| at(&position, d)));
            self.alpha.push(alpha[i]);
            self.rgb.push(std::array::from_fn(|d| at(&rgb, d)));
            self.scale.push(std::array::from_fn(|d| at(&scale, d)));
        }
        self.rotation.extend(rotation);
        self.rest.extend(rest);
        if let (Some(all), Some((start, count))) = (&mut self.children, children) {
            all.extend(start.iter().zip(&count).map(|(&s, &c)| [s, c]));
        }
        Ok(())
    }

    /// The chunk's SH after DC, splat by splat: from its band properties, or from the
    /// codebook its labels index.
    fn chunk_sh(
        &self,
        reader: &ChunkReader<'_, '_>,
        codebook: Option<&Codebook>,
    ) -> Result<Vec<f32>, RadError> {
        let n = reader.n;
        let rest_len = self.rest_len();
        let mut rest = vec![0.0; n * rest_len];
        if rest_len == 0 {
            return Ok(rest);
        }
        if let Some(codebook) = codebook {
            let labels = reader.find("sh_label").ok_or(RadError::MissingProperty {
                chunk: reader.index,
                property: "sh_label",
            })?;
            let encoding = reader.encoding(labels, &[Encoding::U16, Encoding::U32])?;
            let data = reader.data(labels, encoding, 1)?;
            for (i, label) in decode_u32(encoding, &data).into_iter().enumerate() {
                let code = codebook.entry(label).ok_or(RadError::ShLabel {
                    splat: reader.chunk.meta.base + i as u64,
                    label,
                    codes: codebook.entries as u64,
                })?;
                rest[i * rest_len..(i + 1) * rest_len].copy_from_slice(code);
            }
            return Ok(rest);
        }
        for &(name, _, first, coefficients) in &BANDS[..self.degree as usize] {
            let dims = 3 * coefficients;
            let values = reader.floats(name, dims, SH_ENCODINGS)?;
            for i in 0..n {
                for e in 0..dims {
                    rest[i * rest_len + 3 * first + e] = values[e * n + i];
                }
            }
        }
        Ok(rest)
    }

    /// The chunks' columns, in order, as the crate's splats (each part freed once
    /// it is converted).
    pub(super) fn finish(
        parts: Vec<Columns>,
        degree: u8,
        children: Option<Vec<[u32; 2]>>,
        lod_opacity: bool,
    ) -> RadSplats {
        let total: usize = parts.iter().map(Columns::len).sum();
        let rest_len = sh_stride(degree) - 3;
        let stride = rest_len + 3;
        let mut geometry = Vec::with_capacity(total);
        let mut sh = Vec::with_capacity(total * stride);
        for part in parts {
            for i in 0..part.len() {
                let [x, y, z, w] = part.rotation[i];
                let (opacity, widen) = match part.alpha[i] {
                    alpha if lod_opacity && alpha > 1.0 => (1.0, lod_widening(alpha)),
                    alpha => (alpha, 1.0),
                };
                geometry.push(SplatGeometry {
                    position: part.position[i],
                    opacity_logit: opacity_logit(opacity),
                    rotation: [w, x, y, z],
                    log_scale: part.scale[i].map(|s| {
                        if s > 0.0 {
                            (s * widen).ln().max(ZERO_LN)
                        } else {
                            ZERO_LN
                        }
                    }),
                    _pad: 0.0,
                });
                sh.extend(part.rgb[i].map(|c| (c - 0.5) / SH_C0));
                sh.extend_from_slice(&part.rest[i * rest_len..(i + 1) * rest_len]);
            }
        }
        RadSplats {
            nodes: DecodedSplats::from_parts(geometry, sh, degree, false),
            children,
        }
    }
}

/// How much to widen a node Spark stores with opacity `alpha` in `(1, 2]`. Spark draws
/// such a node with opacity `O = exp((d² − 1)/e)`, `d = min(4α − 3, 5)`, as
/// `1 − (1 − G)^O` for a Gaussian `G`, which covers `2π·H(O)` (H the harmonic number)
/// where a Gaussian of opacity 1 covers `2π`; the same coverage at opacity 1 is that
/// Gaussian widened by `√H(O)`.
fn lod_widening(alpha: f32) -> f32 {
    let d = f64::from((4.0 * alpha - 3.0).min(5.0));
    let o = ((d * d - 1.0) / std::f64::consts::E).exp();
    harmonic(o).max(1.0).sqrt() as f32
}

/// The harmonic number `H(x) = ψ(x + 1) + γ` for real `x ≥ 0`.
fn harmonic(x: f64) -> f64 {
    const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;
    // ψ(y) = ψ(y + 1) − 1/y carries y above 10, where the asymptotic series is good
    // to 1e-12.
    let mut y = x + 1.0;
    let mut shift = 0.0;
    while y < 10.0 {
        shift -= 1.0 / y;
        y += 1.0;
    }
    let y2 = 1.0 / (y * y);
    let digamma =
        y.ln() - 0.5 / y - y2 * (1.0 / 12.0 - y2 * (1.0 / 120.0 - y2 * (1.0 / 252.0 - y2 / 240.0)));
    digamma + shift + EULER_GAMMA
}

/// One chunk's properties, found by name and checked against their counts.
struct ChunkReader<'c, 'a> {
    chunk: &'c Chunk<'a>,
    index: usize,
    n: usize,
}

impl ChunkReader<'_, '_> {
    fn find(&self, name: &str) -> Option<&PropertyMeta> {
        self.chunk
            .meta
            .properties
            .iter()
            .find(|p| p.property == name)
    }

    fn require(&self, name: &'static str) -> Result<&PropertyMeta, RadError> {
        self.find(name).ok_or(RadError::MissingProperty {
            chunk: self.index,
            property: name,
        })
    }

    fn encoding(
        &self,
        property: &PropertyMeta,
        allowed: &[Encoding],
    ) -> Result<Encoding, RadError> {
        Encoding::parse(&property.encoding)
            .filter(|e| allowed.contains(e))
            .ok_or_else(|| RadError::BadEncoding {
                chunk: self.index,
                property: property.property.clone(),
                encoding: property.encoding.clone(),
            })
    }

    fn data(
        &self,
        property: &PropertyMeta,
        encoding: Encoding,
        dims: usize,
    ) -> Result<Vec<u8>, RadError> {
        let expected = self.n as u64 * dims as u64 * encoding.bytes_per_value();
        property_data(self.chunk, property, self.index, expected)
    }

    fn range(&self, property: &PropertyMeta, encoding: Encoding) -> Result<(f32, f32), RadError> {
        let missing = |bound| RadError::MissingRange {
            chunk: self.index,
            property: property.property.clone(),
            encoding: property.encoding.clone(),
            bound,
        };
        let min = match encoding.needs_min() {
            true => property.min.ok_or_else(|| missing("min"))?,
            false => 0.0,
        };
        let max = match encoding.needs_max() {
            true => property.max.ok_or_else(|| missing("max"))?,
            false => 0.0,
        };
        Ok((min, max))
    }

    /// A float property, planar (`dims · n` values).
    fn floats(
        &self,
        name: &'static str,
        dims: usize,
        allowed: &[Encoding],
    ) -> Result<Vec<f32>, RadError> {
        let property = self.require(name)?;
        self.floats_of(property, dims, allowed, self.n)
    }

    fn floats_of(
        &self,
        property: &PropertyMeta,
        dims: usize,
        allowed: &[Encoding],
        n: usize,
    ) -> Result<Vec<f32>, RadError> {
        let encoding = self.encoding(property, allowed)?;
        let (min, max) = self.range(property, encoding)?;
        let expected = n as u64 * dims as u64 * encoding.bytes_per_value();
        let data = property_data(self.chunk, property, self.index, expected)?;
        Ok(decode_floats(encoding, &data, n, dims, min, max))
    }

    /// `[x, y, z, w]` quaternions: octahedral, or x, y, z as floats with `w ≥ 0`.
    fn rotations(&self) -> Result<Vec<[f32; 4]>, RadError> {
        let property = self.require("orientation")?;
        let encoding =
            self.encoding(property, &[Encoding::Oct88R8, Encoding::F32, Encoding::F16])?;
        if encoding == Encoding::Oct88R8 {
            return Ok(decode_quaternions(&self.data(property, encoding, 3)?));
        }
        let xyz = self.floats_of(property, 3, &[encoding], self.n)?;
        let n = self.n;
        Ok((0..n)
            .map(|i| {
                let [x, y, z] = [xyz[i], xyz[n + i], xyz[2 * n + i]];
                [x, y, z, (1.0 - x * x - y * y - z * z).max(0.0).sqrt()]
            })
            .collect())
    }

    fn integers(&self, name: &'static str, encoding: Encoding) -> Result<Vec<u32>, RadError> {
        let property = self.require(name)?;
        let encoding = self.encoding(property, &[encoding])?;
        Ok(decode_u32(encoding, &self.data(property, encoding, 1)?))
    }
}

/// A clustered file's SH codebook (in chunk 0): `entries` vectors of every band's
/// coefficients after DC, in the crate's order.
pub(super) struct Codebook {
    entries: usize,
    rest_len: usize,
    values: Vec<f32>,
}

impl Codebook {
    pub(super) fn read(chunk: &Chunk<'_>, header: &Header) -> Result<Self, RadError> {
        let degree = header.meta.max_sh.unwrap_or(0) as usize;
        let rest_len = sh_stride(degree as u8) - 3;
        let claimed = header.meta.sh_code_count.unwrap_or(0);
        if claimed > MAX_CHUNK_SPLATS {
            return Err(RadError::ChunkTooLarge {
                chunk: 0,
                count: claimed,
                max: MAX_CHUNK_SPLATS,
            });
        }
        let entries = claimed as usize;
        let reader = ChunkReader {
            chunk,
            index: 0,
            n: entries,
        };
        let mut values = vec![0.0; entries * rest_len];
        for &(_, name, first, coefficients) in &BANDS[..degree] {
            let dims = 3 * coefficients;
            let property = reader.require(name)?;
            let band = reader.floats_of(property, dims, SH_ENCODINGS, entries)?;
            for entry in 0..entries {
                for e in 0..dims {
                    values[entry * rest_len + 3 * first + e] = band[e * entries + entry];
                }
            }
        }
        Ok(Self {
            entries,
            rest_len,
            values,
        })
    }

    fn entry(&self, label: u32) -> Option<&[f32]> {
        let start = (label as usize).checked_mul(self.rest_len)?;
        self.values.get(start..start + self.rest_len)
    }
}

/// Checks that the child ranges make one tree rooted at node 0: every range inside
/// the file, every other node some node's child exactly once, and every node reached
/// from the root.
fn check_tree(children: &[[u32; 2]]) -> Result<(), RadError> {
    let total = children.len();
    if total == 0 {
        return Ok(());
    }
    let mut parent_seen = vec![false; total];
    for (node, &[start, count]) in children.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let end = u64::from(start) + u64::from(count);
        if end > total as u64 {
            return Err(RadError::Tree(format!(
                "node {node}'s children {start}..{end} pass the last node, {}",
                total - 1
            )));
        }
        let first = start as usize;
        for (child, seen) in parent_seen[first..end as usize].iter_mut().enumerate() {
            if first + child == 0 || *seen {
                return Err(RadError::Tree(format!(
                    "node {} is a child twice (or the root is a child)",
                    first + child
                )));
            }
            *seen = true;
        }
    }
    // Reachability from the root: with one parent each, what is not reached is a cycle.
    let mut stack = vec![0usize];
    let mut reached = 0;
    while let Some(node) = stack.pop() {
        reached += 1;
        let [start, count] = children[node];
        stack.extend(start as usize..start as usize + count as usize);
    }
    if reached != total {
        return Err(RadError::Tree(format!(
            "{} of {total} nodes are not reached from the root",
            total - reached
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harmonic_numbers() {
        assert!((harmonic(1.0) - 1.0).abs() < 1e-11);
        assert!((harmonic(4.0) - (1.0 + 0.5 + 1.0 / 3.0 + 0.25)).abs() < 1e-11);
        assert!(harmonic(0.0).abs() < 1e-11);
        // α = 1 is opacity 1: no widening; a larger α widens more.
        assert!((lod_widening(1.0) - 1.0).abs() < 1e-6);
        assert!(lod_widening(1.5) > lod_widening(1.2));
    }

    #[test]
    fn trees_must_be_one_tree_from_node_zero() {
        assert!(check_tree(&[[1, 2], [0, 0], [0, 0]]).is_ok());
        assert!(check_tree(&[[1, 3], [0, 0], [0, 0]]).is_err());
        assert!(check_tree(&[[1, 1], [0, 0], [0, 0]]).is_err());
        assert!(check_tree(&[[1, 2], [2, 1], [0, 0]]).is_err());
        assert!(check_tree(&[[0, 1]]).is_err());
    }
}
