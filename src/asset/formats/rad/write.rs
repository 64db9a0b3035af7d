//! Writing a `.rad` file: chunks of 65,536 splats (Spark's pager addresses a child's
//! chunk as `index >> 16`), every property DEFLATE-compressed in the encoding
//! [`RadEncoding`] picks.

use std::io::Write;

use flate2::Compression;
use flate2::write::DeflateEncoder;

use super::container::{CHUNK_MAGIC, FILE_MAGIC, padded};
use super::encoding::{Encoding, encode_floats, encode_quaternions, encode_u32};
use super::error::RadError;
use super::meta::{ChunkMeta, ChunkRange, FileMeta, PropertyMeta, SplatEncoding, VERSION};
use crate::asset::decoded::{DecodedSplats, SH_C0};

/// Splats per chunk.
const CHUNK_SPLATS: usize = 65_536;

/// How [`write`](fn@write) stores the values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RadEncoding {
    /// f32 throughout (centres as byte planes, quaternions as x, y, z with w ≥ 0):
    /// what is read back is what was written, to f32 (the quaternion's w to its
    /// square root).
    #[default]
    Exact,
    /// Spark's own choices (`build-lod`'s defaults): 8-bit colours, opacities and
    /// log-scales over ranges taken from the data's percentiles, octahedral
    /// quaternions, 8-bit SH. About a fifth of `Exact`'s size.
    Compact,
}

/// Writes `nodes` as a `.rad` file; `children` (`[first child, count]` per node, the
/// root at node 0, children contiguous and after their parent) makes it a
/// level-of-detail tree, as [`crate::lod::SplatLodTree::breadth_first`] lays one out.
pub fn write(
    nodes: &DecodedSplats,
    children: Option<&[[u32; 2]]>,
    encoding: RadEncoding,
) -> Result<Vec<u8>, RadError> {
    write_chunked(nodes, children, encoding, CHUNK_SPLATS)
}

/// [`write`](fn@write) with `chunk_splats` nodes a chunk (Spark writes 65,536) instead: smaller
/// chunks let a streaming reader fetch finer pieces of the tree.
pub fn write_chunked(
    nodes: &DecodedSplats,
    children: Option<&[[u32; 2]]>,
    encoding: RadEncoding,
    chunk_splats: usize,
) -> Result<Vec<u8>, RadError> {
    let count = nodes.len();
    if chunk_splats == 0 || chunk_splats as u64 > super::decode::MAX_CHUNK_SPLATS {
        return Err(RadError::Write(format!(
            "{chunk_splats} splats a chunk: between 1 and {} are read back",
            super::decode::MAX_CHUNK_SPLATS
        )));
    }
    if let Some(children) = children {
        if children.len() != count {
            return Err(RadError::Write(format!(
                "{} child ranges for {count} nodes",
                children.len()
            )));
        }
        if children.iter().any(|&[_, n]| n > u32::from(u16::MAX)) {
            return Err(RadError::Write(
                "a node has more than 65,535 children".to_owned(),
            ));
        }
    }
    if u32::try_from(count).is_err() {
        return Err(RadError::Write(format!(
            "{count} splats: more than a u32 counts"
        )));
    }
    let values = Activated::of(nodes);
    let choice = Choice::new(&values, encoding, children.is_some());
    let degree = u64::from(nodes.sh_degree);
    let lod_tree = children.is_some().then_some(true);

    let mut chunks = Vec::new();
    for base in (0..count).step_by(chunk_splats) {
        let end = (base + chunk_splats).min(count);
        let properties = choice.properties(&values, base..end, children.map(|c| &c[base..end]));
        chunks.push(chunk_bytes(
            ChunkMeta {
                version: VERSION,
                base: base as u64,
                count: (end - base) as u64,
                payload_bytes: 0,
                max_sh: Some(degree),
                lod_tree,
                splat_encoding: choice.splat_encoding.clone(),
                properties: Vec::new(),
            },
            properties,
        ));
    }
    let mut offset = 0;
    let ranges = chunks
        .iter()
        .map(|chunk| {
            let range = ChunkRange {
                offset,
                bytes: chunk.len() as u64,
                filename: None,
            };
            offset += chunk.len() as u64;
            range
        })
        .collect();
    let header = FileMeta {
        version: VERSION,
        kind: "gsplat".to_owned(),
        count: count as u64,
        max_sh: Some(degree),
        lod_tree,
        chunk_size: Some(chunk_splats as u64),
        all_chunk_bytes: offset,
        chunks: ranges,
        splat_encoding: choice.splat_encoding.clone(),
        sh_code_count: None,
        comment: Some(format!(
            "written by bevy_splat {}",
            env!("CARGO_PKG_VERSION")
        )),
    };
    let mut file = framed(FILE_MAGIC, &header);
    for chunk in chunks {
        file.extend_from_slice(&chunk);
    }
    Ok(file)
}

/// Magic, JSON length, JSON, zero padding to 8 bytes.
fn framed<T: serde::Serialize>(magic: [u8; 4], meta: &T) -> Vec<u8> {
    // Serialising these plain structs cannot fail.
    let json = serde_json::to_vec(meta).unwrap_or_default();
    let mut out = Vec::with_capacity(8 + json.len() + 8);
    out.extend_from_slice(&magic);
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&json);
    out.resize(padded(out.len() as u64) as usize, 0);
    out
}

/// A chunk: its framed JSON, the payload's length, the blobs padded to 8 bytes.
fn chunk_bytes(mut meta: ChunkMeta, blobs: Vec<(PropertyMeta, Vec<u8>)>) -> Vec<u8> {
    let mut payload = Vec::new();
    for (mut property, data) in blobs {
        let mut deflate = DeflateEncoder::new(Vec::new(), Compression::new(6));
        // Writing into a Vec cannot fail.
        let compressed = deflate
            .write_all(&data)
            .and_then(|()| deflate.finish())
            .unwrap_or_default();
        property.offset = payload.len() as u64;
        property.bytes = compressed.len() as u64;
        property.compression = Some("gz".to_owned());
        payload.extend_from_slice(&compressed);
        payload.resize(padded(payload.len() as u64) as usize, 0);
        meta.properties.push(property);
    }
    meta.payload_bytes = payload.len() as u64;
    let mut out = framed(CHUNK_MAGIC, &meta);
    out.extend_from_slice(&meta.payload_bytes.to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// The splats as `.rad` stores them: linear opacity and scales, the base colour, `[x,
/// y, z, w]` unit quaternions, each band's SH.
struct Activated {
    center: Vec<[f32; 3]>,
    alpha: Vec<f32>,
    rgb: Vec<[f32; 3]>,
    scale: Vec<[f32; 3]>,
    rotation: Vec<[f32; 4]>,
    /// Per band 1..=degree: `3 · (2b + 1)` values a splat.
    bands: Vec<Vec<f32>>,
}

impl Activated {
    fn of(nodes: &DecodedSplats) -> Self {
        let stride = nodes.sh_stride();
        let mut bands: Vec<Vec<f32>> = (1..=nodes.sh_degree).map(|_| Vec::new()).collect();
        let mut values = Self {
            center: Vec::with_capacity(nodes.len()),
            alpha: Vec::with_capacity(nodes.len()),
            rgb: Vec::with_capacity(nodes.len()),
            scale: Vec::with_capacity(nodes.len()),
            rotation: Vec::with_capacity(nodes.len()),
            bands: Vec::new(),
        };
        for (i, g) in nodes.geometry.iter().enumerate() {
            let sh = &nodes.sh[i * stride..(i + 1) * stride];
            values.center.push(g.position);
            values.alpha.push(1.0 / (1.0 + (-g.opacity_logit).exp()));
            values.rgb.push([0, 1, 2].map(|c| 0.5 + SH_C0 * sh[c]));
            values.scale.push(g.log_scale.map(f32::exp));
            let [w, x, y, z] = g.rotation;
            let length = (w * w + x * x + y * y + z * z).sqrt();
            values.rotation.push(if length > 0.0 && length.is_finite() {
                [x, y, z, w].map(|v| v / length)
            } else {
                [0.0, 0.0, 0.0, 1.0]
            });
            let mut first = 1;
            for (band, out) in bands.iter_mut().enumerate() {
                let coefficients = 2 * band + 3;
                out.extend_from_slice(&sh[3 * first..3 * (first + coefficients)]);
                first += coefficients;
            }
        }
        values.bands = bands;
        values
    }
}

/// The encodings chosen for a file, with their ranges.
struct Choice {
    alpha: (Encoding, f32, f32),
    rgb: (Encoding, f32, f32),
    scales: (Encoding, f32, f32),
    orientation: Encoding,
    /// Per band: encoding and `max`.
    sh: Vec<(Encoding, f32)>,
    splat_encoding: Option<SplatEncoding>,
}

impl Choice {
    fn new(values: &Activated, encoding: RadEncoding, lod_tree: bool) -> Self {
        if encoding == RadEncoding::Exact {
            return Self {
                alpha: (Encoding::F32, 0.0, 0.0),
                rgb: (Encoding::F32, 0.0, 0.0),
                scales: (Encoding::F32, 0.0, 0.0),
                orientation: Encoding::F32,
                sh: values.bands.iter().map(|_| (Encoding::F32, 0.0)).collect(),
                splat_encoding: None,
            };
        }
        // Spark's rules: colours over their 1st–99th percentiles (widened to 0..1),
        // the two larger scales' over theirs (widened to e^-12..e^9), SH over the
        // 5th–95th percentile of their magnitude (at least ±1).
        let rgb: Vec<f32> = values.rgb.iter().flatten().copied().collect();
        let rgb_min = percentile(&rgb, 0.01).min(0.0);
        let rgb_max = percentile(&rgb, 0.99).max(1.0);
        let rgb = if rgb_min < -1.0 || rgb_max > 2.0 {
            (Encoding::F16, 0.0, 0.0)
        } else {
            (Encoding::R8Delta, rgb_min, rgb_max)
        };
        let larger: Vec<f32> = values
            .scale
            .iter()
            .flat_map(|s| {
                let mut s = *s;
                s.sort_by(f32::total_cmp);
                [s[1], s[2]]
            })
            .collect();
        let ln_min = percentile(&larger, 0.01).ln().min(-12.0);
        let ln_max = percentile(&larger, 0.99).ln().max(9.0);
        let scales = if ln_max - ln_min > 25.0 {
            (Encoding::LnF16, 0.0, 0.0)
        } else {
            (Encoding::Ln0R8, ln_min, ln_max)
        };
        let sh: Vec<(Encoding, f32)> = values
            .bands
            .iter()
            .map(|band| {
                let max = percentile(band, 0.05)
                    .abs()
                    .max(percentile(band, 0.95).abs())
                    .max(1.0);
                (Encoding::S8, max)
            })
            .collect();
        let band_max = |b: usize| sh.get(b).map(|s| s.1);
        let alpha_max = if lod_tree { 2.0 } else { 1.0 };
        Self {
            alpha: (Encoding::R8, 0.0, alpha_max),
            splat_encoding: Some(SplatEncoding {
                rgb_min: Some(rgb.1),
                rgb_max: Some(if rgb.0 == Encoding::R8Delta {
                    rgb.2
                } else {
                    1.0
                }),
                ln_scale_min: Some(scales.1),
                ln_scale_max: Some(scales.2),
                sh1_max: band_max(0),
                sh2_max: band_max(1),
                sh3_max: band_max(2),
                lod_opacity: Some(lod_tree),
            }),
            rgb,
            scales,
            orientation: Encoding::Oct88R8,
            sh,
        }
    }

    /// The chunk `range`'s blobs, in Spark's order.
    fn properties(
        &self,
        values: &Activated,
        range: std::ops::Range<usize>,
        children: Option<&[[u32; 2]]>,
    ) -> Vec<(PropertyMeta, Vec<u8>)> {
        let n = range.len();
        let planar = |rows: &[[f32; 3]]| -> Vec<f32> {
            (0..3)
                .flat_map(|d| rows[range.clone()].iter().map(move |r| r[d]))
                .collect()
        };
        let float = |name: &str, (encoding, min, max): (Encoding, f32, f32), planar: &[f32]| {
            let ranged = encoding.needs_max();
            (
                property(
                    name,
                    encoding,
                    encoding.needs_min().then_some(min),
                    ranged.then_some(max),
                ),
                encode_floats(encoding, planar, n, min, max),
            )
        };
        let mut blobs = vec![
            float(
                "center",
                (Encoding::F32LeBytes, 0.0, 0.0),
                &planar(&values.center),
            ),
            float("alpha", self.alpha, &values.alpha[range.clone()]),
            float("rgb", self.rgb, &planar(&values.rgb)),
            float("scales", self.scales, &planar(&values.scale)),
        ];
        let rotations = &values.rotation[range.clone()];
        blobs.push(if self.orientation == Encoding::Oct88R8 {
            (
                property("orientation", Encoding::Oct88R8, None, None),
                encode_quaternions(rotations),
            )
        } else {
            // x, y, z of the quaternion with w ≥ 0 (the reader restores w).
            let xyz: Vec<f32> = (0..3)
                .flat_map(|d| {
                    rotations
                        .iter()
                        .map(move |q| if q[3] < 0.0 { -q[d] } else { q[d] })
                })
                .collect();
            float("orientation", (self.orientation, 0.0, 0.0), &xyz)
        });
        for (band, &(encoding, max)) in self.sh.iter().enumerate() {
            let dims = 3 * (2 * band + 3);
            let values = &values.bands[band];
            let planar: Vec<f32> = (0..dims)
                .flat_map(|e| range.clone().map(move |i| values[i * dims + e]))
                .collect();
            blobs.push(float(
                &format!("sh{}", band + 1),
                (encoding, -max, max),
                &planar,
            ));
        }
        if let Some(children) = children {
            let starts: Vec<u32> = children.iter().map(|c| c[0]).collect();
            let counts: Vec<u32> = children.iter().map(|c| c[1]).collect();
            blobs.push((
                property("child_count", Encoding::U16, None, None),
                encode_u32(Encoding::U16, &counts),
            ));
            blobs.push((
                property("child_start", Encoding::U32, None, None),
                encode_u32(Encoding::U32, &starts),
            ));
        }
        blobs
    }
}

fn property(name: &str, encoding: Encoding, min: Option<f32>, max: Option<f32>) -> PropertyMeta {
    PropertyMeta {
        offset: 0,
        bytes: 0,
        property: name.to_owned(),
        encoding: encoding.name().to_owned(),
        compression: None,
        min,
        max,
    }
}

/// The `q`-quantile of the finite values (0 when there are none).
fn percentile(values: &[f32], q: f32) -> f32 {
    let mut finite: Vec<f32> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return 0.0;
    }
    let at = ((finite.len() as f32 * q).round() as usize).min(finite.len() - 1);
    *finite.select_nth_unstable_by(at, f32::total_cmp).1
}
