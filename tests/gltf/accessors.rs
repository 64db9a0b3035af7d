//! Hand-built files for the accessor rules and draft spellings no fixture covers:
//! interleaved strides, quantized POSITION, sparse accessors, a SCALAR scale, the
//! drafts' `_` names, COLOR_0 fallbacks, a node hierarchy without scenes.

use crate::common::glb;
use bevy_splat::asset::formats::gltf::{self, Note, Site};
use serde_json::{Value, json};

const SITE: Site = Site {
    mesh: 0,
    primitive: 0,
};

/// Bytes and the bufferViews over them.
#[derive(Default)]
struct Bin {
    bytes: Vec<u8>,
    views: Vec<Value>,
}

impl Bin {
    fn view(&mut self, data: &[u8], stride: Option<usize>) -> usize {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        let mut view =
            json!({"buffer": 0, "byteOffset": self.bytes.len(), "byteLength": data.len()});
        if let Some(s) = stride {
            view["byteStride"] = json!(s);
        }
        self.bytes.extend_from_slice(data);
        self.views.push(view);
        self.views.len() - 1
    }

    fn floats(&mut self, values: &[f32]) -> usize {
        self.view(bytemuck::cast_slice(values), None)
    }
}

fn accessor(view: usize, component: u32, count: usize, shape: &str, normalized: bool) -> Value {
    let mut a =
        json!({"bufferView": view, "componentType": component, "count": count, "type": shape});
    if normalized {
        a["normalized"] = json!(true);
    }
    a
}

fn document(bin: &Bin, accessors: Vec<Value>, attributes: Value, khr: Value) -> Value {
    json!({
        "asset": {"version": "2.0"},
        "extensionsUsed": ["KHR_gaussian_splatting"],
        "buffers": [{"byteLength": bin.bytes.len()}],
        "bufferViews": bin.views,
        "accessors": accessors,
        "meshes": [{"primitives": [{"mode": 0, "attributes": attributes, "extensions": {"KHR_gaussian_splatting": khr}}]}],
        "nodes": [{"mesh": 0}],
        "scenes": [{"nodes": [0]}],
    })
}

fn decode(json: &Value, bin: &Bin) -> gltf::SplatScene {
    gltf::decode_bytes(&glb::join(json, &bin.bytes)).expect("decodes")
}

/// Two splats of a draft-style primitive: POSITION and `_ROTATION` interleaved in one
/// view (stride 28), SCALE a SCALAR of plain u8 integers (isotropic, linear), and
/// colour and opacity only in a COLOR_0 of u8 without `normalized`.
#[test]
fn interleaved_scalar_scale_and_color0_fallback() {
    let mut bin = Bin::default();
    let mut interleaved = Vec::new();
    for (p, q) in [
        ([1.0f32, 2.0, 3.0], [0.0f32, 0.0, 0.0, 1.0]),
        ([-1.0, 0.5, 4.0], [0.0, 1.0, 0.0, 0.0]),
    ] {
        interleaved.extend_from_slice(bytemuck::cast_slice(&p));
        interleaved.extend_from_slice(bytemuck::cast_slice(&q));
    }
    let v = bin.view(&interleaved, Some(28));
    let scale = bin.view(&[2, 3], None);
    let color = bin.view(&[255, 128, 0, 255, 0, 0, 0, 0], None);
    let mut rotation = accessor(v, 5126, 2, "VEC4", false);
    rotation["byteOffset"] = json!(12);
    let accessors = vec![
        accessor(v, 5126, 2, "VEC3", false),
        rotation,
        accessor(scale, 5121, 2, "SCALAR", false),
        accessor(color, 5121, 2, "VEC4", false),
    ];
    let attributes =
        json!({"POSITION": 0, "_ROTATION": 1, "KHR_gaussian_splatting:SCALE": 2, "COLOR_0": 3});
    let scene = decode(&document(&bin, accessors, attributes, json!({})), &bin);
    let s = &scene.nodes[0].splats[0];
    assert_eq!(s.geometry[0].position, [1.0, 2.0, 3.0]);
    assert_eq!(s.geometry[1].position, [-1.0, 0.5, 4.0]);
    assert_eq!(s.geometry[0].rotation, [1.0, 0.0, 0.0, 0.0]);
    assert_eq!(s.geometry[1].rotation, [0.0, 0.0, 1.0, 0.0]);
    // Non-normalized u8 scales are linear integers: ln 2, ln 3 on every axis.
    assert_eq!(s.geometry[0].log_scale, [2.0f32.ln(); 3]);
    assert_eq!(s.geometry[1].log_scale, [3.0f32.ln(); 3]);
    // No colorSpace (a draft): COLOR_0 is the display colour; 255 → 1, 128 → 0.502.
    let c0 = 0.282_094_8f32;
    assert!(
        (s.sh[0] - 0.5 / c0).abs() < 1e-5 && (s.sh[1] - (128.0 / 255.0 - 0.5) / c0).abs() < 1e-5
    );
    assert!(s.geometry[0].opacity_logit > 13.0 && s.geometry[1].opacity_logit < -13.0);
    for note in [
        Note::Color0NotNormalized { site: SITE },
        Note::ColorFromColor0 { site: SITE },
        Note::OpacityFromColor0 { site: SITE },
    ] {
        assert!(scene.notes.contains(&note), "{note}");
    }
    assert!(!scene.notes.contains(&Note::LogScale));
}

/// KHR_mesh_quantization POSITION (u16 normalized), a sparse SH DC accessor with no
/// bufferView (zeros plus substitutions), i16-normalized rotation, u8-normalized
/// opacity, and the ratified `colorSpace` making COLOR_0 irrelevant.
#[test]
fn quantized_and_sparse() {
    let mut bin = Bin::default();
    let pos = bin.view(
        bytemuck::cast_slice(&[0u16, 32768, 65535, 65535, 0, 0, 0, 0, 0]),
        None,
    );
    let rot = bin.view(
        bytemuck::cast_slice(&[0i16, 0, 0, 32767, 0, 0, -32767, 0, -32768, 0, 0, 0]),
        None,
    );
    let scale = bin.floats(&[0.5, 0.25, 1.0, 1.0, 1.0, 1.0, 0.0, 2.0, 4.0]);
    let opacity = bin.view(&[0, 51, 255], None);
    let sparse_idx = bin.view(&[2, 0], None);
    let sparse_val = bin.floats(&[7.0, 8.0, 9.0, -1.0, -2.0, -3.0]);
    let mut dc = json!({"componentType": 5126, "count": 3, "type": "VEC3"});
    dc["sparse"] = json!({"count": 2, "indices": {"bufferView": sparse_idx, "componentType": 5121}, "values": {"bufferView": sparse_val}});
    let accessors = vec![
        accessor(pos, 5123, 3, "VEC3", true),
        accessor(rot, 5122, 3, "VEC4", true),
        accessor(scale, 5126, 3, "VEC3", false),
        accessor(opacity, 5121, 3, "SCALAR", true),
        dc,
    ];
    let attributes = json!({
        "POSITION": 0,
        "KHR_gaussian_splatting:ROTATION": 1,
        "KHR_gaussian_splatting:SCALE": 2,
        "KHR_gaussian_splatting:OPACITY": 3,
        "KHR_gaussian_splatting:SH_DEGREE_0_COEF_0": 4,
    });
    let khr = json!({"kernel": "ellipse", "colorSpace": "srgb_rec709_display"});
    let mut json = document(&bin, accessors, attributes, khr);
    json["extensionsRequired"] = json!(["KHR_mesh_quantization", "KHR_gaussian_splatting"]);
    let scene = decode(&json, &bin);
    let s = &scene.nodes[0].splats[0];
    assert_eq!(s.geometry[0].position, [0.0, 32768.0 / 65535.0, 1.0]);
    assert_eq!(s.geometry[1].position, [1.0, 0.0, 0.0]);
    assert_eq!(s.geometry[0].rotation, [1.0, 0.0, 0.0, 0.0]);
    assert_eq!(s.geometry[1].rotation, [0.0, 0.0, 0.0, -1.0]);
    // −32768 normalizes to −1, not below (glTF's max(c / 32767, −1)).
    assert_eq!(s.geometry[2].rotation, [0.0, -1.0, 0.0, 0.0]);
    assert_eq!(s.geometry[0].log_scale, [0.5f32.ln(), 0.25f32.ln(), 0.0]);
    // Scale 0 stays finite.
    assert!(s.geometry[2].log_scale[0] < -80.0 && s.geometry[2].log_scale[0].is_finite());
    assert!((s.geometry[1].opacity_logit - (0.2f32 / 0.8).ln()).abs() < 1e-5);
    assert_eq!(s.sh, vec![-1.0, -2.0, -3.0, 0.0, 0.0, 0.0, 7.0, 8.0, 9.0]);
    assert_eq!(s.non_finite, 0);
}

/// No `scenes`: every parentless node is a root; children keep their order and
/// local TRS; a node with a mesh shown twice gets the splats twice.
#[test]
fn hierarchy_without_scenes() {
    let cloud = crate::common::synthetic::cloud(2, 0, 4);
    let (mut json, bin) = glb::split(&gltf::write_glb(&cloud));
    json.as_object_mut().unwrap().remove("scenes");
    json.as_object_mut().unwrap().remove("scene");
    json["nodes"] = json!([
        {"name": "child b", "mesh": 0, "translation": [1.0, 2.0, 3.0]},
        {"name": "root", "children": [2, 0], "rotation": [0.0, 0.0, 0.6, 0.8], "scale": [2.0, 2.0, 2.0]},
        {"name": "child a", "mesh": 0},
        {"name": "lone"},
    ]);
    let scene = gltf::decode_bytes(&glb::join(&json, &bin)).unwrap();
    let names: Vec<_> = scene
        .nodes
        .iter()
        .map(|n| n.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["root", "child a", "child b", "lone"]);
    assert_eq!(scene.scene_roots, vec![0, 3]);
    assert_eq!(scene.nodes[0].children, vec![1, 2]);
    assert_eq!(scene.nodes[0].scale, [2.0; 3]);
    assert_eq!(scene.nodes[0].rotation, [0.0, 0.0, 0.6, 0.8]);
    assert_eq!(scene.nodes[2].translation, [1.0, 2.0, 3.0]);
    assert_eq!(scene.nodes[2].gltf_index, 0);
    assert_eq!(scene.nodes[1].splats, scene.nodes[2].splats);
    assert_eq!(scene.nodes[1].splats.len(), 1);
    assert!(scene.nodes[3].splats.is_empty());
}

/// A sheared matrix decomposes as well as it can and says so.
#[test]
fn sheared_matrix_is_noted() {
    let cloud = crate::common::synthetic::cloud(2, 0, 4);
    let (mut json, bin) = glb::split(&gltf::write_glb(&cloud));
    json["nodes"][0]["matrix"] = json!([
        1.0, 0.0, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0
    ]);
    let scene = gltf::decode_bytes(&glb::join(&json, &bin)).unwrap();
    assert!(scene.notes.contains(&Note::Matrix {
        node: 0,
        fit: gltf::MatrixFit::Sheared
    }));
    let q = scene.nodes[0].rotation;
    assert!((q.iter().map(|v| v * v).sum::<f32>() - 1.0).abs() < 1e-6);
}

/// A linear colour space on SPZ data converts the DC term exactly.
#[test]
fn linear_spz_colour_converts_to_srgb() {
    let bytes = crate::common::read("spz2_basic_1splat.glb");
    let plain = gltf::decode_bytes(&bytes).unwrap();
    let (mut json, bin) = glb::split(&bytes);
    json["meshes"][0]["primitives"][0]["extensions"]["KHR_gaussian_splatting"]["colorSpace"] =
        json!("lin_rec709_display");
    let linear = gltf::decode_bytes(&glb::join(&json, &bin)).unwrap();
    assert!(
        linear
            .notes
            .contains(&Note::LinearColorConverted { site: SITE })
    );
    let c0 = 0.282_094_8f64;
    let encode = |c: f64| {
        if c <= 0.003_130_8 {
            12.92 * c
        } else {
            1.055 * c.powf(1.0 / 2.4) - 0.055
        }
    };
    for c in 0..3 {
        let dc = f64::from(plain.nodes[0].splats[0].sh[c]);
        let want = encode(0.5 + c0 * dc);
        let got = 0.5 + c0 * f64::from(linear.nodes[0].splats[0].sh[c]);
        assert!((want - got).abs() < 1e-6, "channel {c}: {want} vs {got}");
    }
    assert_eq!(
        plain.nodes[0].splats[0].geometry,
        linear.nodes[0].splats[0].geometry
    );
}

/// Unknown primitive-level and nested extensions are listed, once each.
#[test]
fn ignored_extensions_are_listed() {
    let cloud = crate::common::synthetic::cloud(2, 0, 4);
    let (mut json, bin) = glb::split(&gltf::write_glb(&cloud));
    let primitive = &mut json["meshes"][0]["primitives"][0];
    primitive["extensions"]["EXT_other"] = json!({});
    primitive["extensions"]["KHR_gaussian_splatting"]["extensions"] =
        json!({"EXT_gaussian_splatting_kernel_customShape": {}, "EXT_sorting": {}});
    let scene = gltf::decode_bytes(&glb::join(&json, &bin)).unwrap();
    assert_eq!(
        scene.ignored_extensions,
        [
            "EXT_gaussian_splatting_kernel_customShape",
            "EXT_other",
            "EXT_sorting"
        ]
    );
    // The same nested extension made required is refused.
    json["extensionsRequired"] = json!(["EXT_gaussian_splatting_kernel_customShape"]);
    let err = gltf::decode_bytes(&glb::join(&json, &bin)).unwrap_err();
    assert!(
        matches!(err, gltf::GltfError::UnsupportedRequiredExtension(name) if name.starts_with("EXT_gaussian"))
    );
}
