//! Writes splats as a GLB: one node, one POINTS primitive with ratified
//! `KHR_gaussian_splatting` float attributes.
//!
//! The spec stores linear scales, linear opacities and unit quaternions; the trained
//! values `DecodedSplats` holds (log scales, logits, quaternions of any length) do not
//! all survive exp → ln, sigmoid → logit and normalisation in f32. So where the spec
//! attributes would not read back bit for bit, the trained values are written as well,
//! under application-specific `_BEVY_SPLAT_*` semantics that other readers ignore;
//! this loader's decoder prefers them while they agree with the spec attributes.

use serde_json::{Map, Value, json};

use super::activation::{linear_scale, log_scale, opacity_logit, sigmoid};
use super::attributes::{self, Splat};
use super::color::{self, SRGB};
use super::exact::unit;
use super::extensions::KHR_GAUSSIAN_SPLATTING;
use super::glb;
use crate::asset::decoded::{DecodedSplats, SH_C0, sh_stride};

/// What to write besides the spec attributes.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Add the `_BEVY_SPLAT_*` attributes wherever the spec attributes alone would
    /// not read back exactly.
    pub exact: bool,
    /// Add COLOR_0 (RGBA bytes) for viewers that show the points without splats.
    pub color_fallback: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            exact: true,
            color_fallback: true,
        }
    }
}

/// Writes `splats` as a GLB that `decode` reads back equal. The GLB container holds
/// at most 4 GiB, about 17 million splats at SH degree 3; a larger cloud gives an
/// unreadable file.
pub fn write_glb(splats: &DecodedSplats) -> Vec<u8> {
    write_glb_with(splats, &WriteOptions::default())
}

const FLOAT: u32 = 5126;
const UNSIGNED_BYTE: u32 = 5121;
const ARRAY_BUFFER: u32 = 34962;

/// The binary chunk and the accessor/bufferView JSON being built.
#[derive(Default)]
struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    fn floats(&mut self, values: &[f32], shape: &str, count: usize) -> usize {
        let bytes: &[u8] = bytemuck::cast_slice(values);
        self.accessor(bytes, FLOAT, false, shape, count)
    }

    fn accessor(
        &mut self,
        bytes: &[u8],
        component: u32,
        normalized: bool,
        shape: &str,
        count: usize,
    ) -> usize {
        glb::pad4(&mut self.bin, 0);
        self.views.push(json!({
            "buffer": 0,
            "byteOffset": self.bin.len(),
            "byteLength": bytes.len(),
            "target": ARRAY_BUFFER,
        }));
        self.bin.extend_from_slice(bytes);
        let mut accessor = json!({
            "bufferView": self.views.len() - 1,
            "componentType": component,
            "count": count,
            "type": shape,
        });
        if normalized {
            accessor["normalized"] = Value::Bool(true);
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }
}

fn bits_equal(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// [`write_glb`] with `options` instead of the defaults (exact attributes and a
/// COLOR_0 fallback).
pub fn write_glb_with(splats: &DecodedSplats, options: &WriteOptions) -> Vec<u8> {
    let n = splats.len();
    let mut node = json!({});
    let mut b = Builder::default();
    let mut meshes = Vec::new();
    if n > 0 {
        let primitive = primitive(&mut b, splats, options);
        meshes.push(json!({ "primitives": [primitive] }));
        node["mesh"] = json!(0);
    }
    let mut root = json!({
        "asset": { "version": "2.0", "generator": "bevy_splat" },
        "extensionsUsed": [KHR_GAUSSIAN_SPLATTING],
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        "nodes": [node],
    });
    if n > 0 {
        root["meshes"] = Value::Array(meshes);
        root["accessors"] = Value::Array(b.accessors);
        root["bufferViews"] = Value::Array(b.views);
        root["buffers"] = json!([{ "byteLength": b.bin.len() }]);
    }
    let text = root.to_string();
    glb::assemble(text.as_bytes(), &b.bin)
}

fn primitive(b: &mut Builder, splats: &DecodedSplats, options: &WriteOptions) -> Value {
    let n = splats.len();
    let g = &splats.geometry;
    let mut attributes = Map::new();
    let mut put = |name: String, accessor: usize| {
        attributes.insert(name, json!(accessor));
    };

    let positions: Vec<f32> = g.iter().flat_map(|s| s.position).collect();
    let position = b.floats(&positions, "VEC3", n);
    let (min, max) = bounds(g.iter().map(|s| s.position));
    b.accessors[position]["min"] = json!(min);
    b.accessors[position]["max"] = json!(max);
    put(attributes::POSITION.into(), position);

    // glTF order x y z w; `DecodedSplats` holds w x y z.
    let raw_xyzw: Vec<f32> = g
        .iter()
        .flat_map(|s| {
            let [w, x, y, z] = s.rotation;
            [x, y, z, w]
        })
        .collect();
    let unit_xyzw: Vec<f32> = raw_xyzw
        .chunks_exact(4)
        .flat_map(|q| unit([q[0], q[1], q[2], q[3]]))
        .collect();
    put(
        attributes::khr_name(Splat::Rotation),
        b.floats(&unit_xyzw, "VEC4", n),
    );
    if options.exact && !bits_equal(&unit_xyzw, &raw_xyzw) {
        put(
            attributes::EXACT_ROTATION.into(),
            b.floats(&raw_xyzw, "VEC4", n),
        );
    }

    let logs: Vec<f32> = g.iter().flat_map(|s| s.log_scale).collect();
    let linear: Vec<f32> = logs.iter().map(|&l| linear_scale(l)).collect();
    put(
        attributes::khr_name(Splat::Scale),
        b.floats(&linear, "VEC3", n),
    );
    let relogged: Vec<f32> = linear.iter().map(|&s| log_scale(s)).collect();
    if options.exact && !bits_equal(&relogged, &logs) {
        put(
            attributes::EXACT_LOG_SCALE.into(),
            b.floats(&logs, "VEC3", n),
        );
    }

    let logits: Vec<f32> = g.iter().map(|s| s.opacity_logit).collect();
    let opacity: Vec<f32> = logits.iter().map(|&x| sigmoid(x)).collect();
    put(
        attributes::khr_name(Splat::Opacity),
        b.floats(&opacity, "SCALAR", n),
    );
    let relogit: Vec<f32> = opacity.iter().map(|&o| opacity_logit(o).0).collect();
    if options.exact && !bits_equal(&relogit, &logits) {
        put(
            attributes::EXACT_OPACITY_LOGIT.into(),
            b.floats(&logits, "SCALAR", n),
        );
    }

    let stride = sh_stride(splats.sh_degree);
    for l in 0..=splats.sh_degree {
        for m in 0..=2 * l {
            let k = usize::from(l * l + m);
            let values: Vec<f32> = splats
                .sh
                .chunks_exact(stride)
                .flat_map(|s| [s[3 * k], s[3 * k + 1], s[3 * k + 2]])
                .collect();
            put(attributes::sh_name(l, m), b.floats(&values, "VEC3", n));
        }
    }

    if options.color_fallback {
        let rgba: Vec<u8> = splats
            .sh
            .chunks_exact(stride)
            .zip(&opacity)
            .flat_map(|(s, &alpha)| {
                // The spec's fallback: clamp(0.5 + C0 · f_dc), decoded from sRGB.
                let channel = |c: usize| {
                    let display = (0.5 + f64::from(SH_C0) * f64::from(s[c])).clamp(0.0, 1.0);
                    unorm8(color::srgb_decode(display))
                };
                [channel(0), channel(1), channel(2), unorm8(f64::from(alpha))]
            })
            .collect();
        put(
            attributes::COLOR_0.into(),
            b.accessor(&rgba, UNSIGNED_BYTE, true, "VEC4", n),
        );
    }

    let mut primitive = json!({
        "mode": 0,
        "attributes": attributes,
        "extensions": {
            KHR_GAUSSIAN_SPLATTING: { "kernel": "ellipse", "colorSpace": SRGB }
        },
    });
    if splats.antialiased {
        primitive["extras"] = json!({ "bevy_splat": { "antialiased": true } });
    }
    primitive
}

fn unorm8(v: f64) -> u8 {
    if v.is_nan() {
        return 0;
    }
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// POSITION's min and max, which glTF requires; non-finite positions are left out
/// (JSON has no NaN), and a cloud with none finite gets zeros.
fn bounds(positions: impl Iterator<Item = [f32; 3]>) -> ([f32; 3], [f32; 3]) {
    let mut min = [f32::INFINITY; 3];
    let mut max = [f32::NEG_INFINITY; 3];
    for p in positions.filter(|p| p.iter().all(|v| v.is_finite())) {
        for i in 0..3 {
            min[i] = min[i].min(p[i]);
            max[i] = max[i].max(p[i]);
        }
    }
    if min[0] > max[0] {
        return ([0.0; 3], [0.0; 3]);
    }
    (min, max)
}
