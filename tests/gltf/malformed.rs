//! Malformed files give the error that names their problem, never a panic.

use crate::common::{glb, read, synthetic};
use bevy_splat::asset::formats::gltf::{self, DecodeOptions, GltfError, Kind};
use serde_json::{Value, json};

/// A valid GLB of three SH-1 splats, taken apart.
fn base() -> (Value, Vec<u8>) {
    glb::split(&gltf::write_glb(&synthetic::cloud(3, 1, 7)))
}

fn decode(bytes: &[u8]) -> Result<gltf::SplatScene, GltfError> {
    gltf::decode_bytes(bytes)
}

/// Decodes `base()` after `edit` changed its JSON.
fn edited(edit: impl FnOnce(&mut Value)) -> GltfError {
    let (mut json, bin) = base();
    edit(&mut json);
    decode(&glb::join(&json, &bin)).expect_err("should fail")
}

fn attribute(json: &Value, name: &str) -> usize {
    json["meshes"][0]["primitives"][0]["attributes"][name]
        .as_u64()
        .unwrap() as usize
}

#[test]
fn base_file_is_valid() {
    let (json, bin) = base();
    assert!(decode(&glb::join(&json, &bin)).is_ok());
}

#[test]
fn bad_magic() {
    let mut bytes = gltf::write_glb(&synthetic::cloud(3, 0, 1));
    bytes[0] = b'X';
    assert!(matches!(decode(&bytes), Err(GltfError::NotGltf { found }) if found[0] == b'X'));
    assert!(matches!(decode(b"ply\n"), Err(GltfError::NotGltf { .. })));
    assert!(matches!(decode(b""), Err(GltfError::NotGltf { .. })));
}

#[test]
fn truncated_glb() {
    let bytes = gltf::write_glb(&synthetic::cloud(3, 0, 1));
    let cut = &bytes[..bytes.len() / 2];
    assert!(matches!(
        decode(cut),
        Err(GltfError::GlbLength { declared, actual }) if declared == bytes.len() as u64 && actual == cut.len() as u64
    ));
    assert!(matches!(
        decode(&bytes[..10]),
        Err(GltfError::GlbLength { .. })
    ));
}

#[test]
fn glb_version_and_chunk_order() {
    let mut bytes = gltf::write_glb(&synthetic::cloud(3, 0, 1));
    bytes[4] = 1;
    assert!(matches!(
        decode(&bytes),
        Err(GltfError::UnsupportedGlbVersion(1))
    ));
    let mut bytes = gltf::write_glb(&synthetic::cloud(3, 0, 1));
    bytes[16..20].copy_from_slice(&0x004E_4942u32.to_le_bytes());
    assert!(matches!(
        decode(&bytes),
        Err(GltfError::GlbFirstChunkNotJson { found: 0x004E_4942 })
    ));
}

#[test]
fn chunk_length_past_the_end() {
    let mut bytes = gltf::write_glb(&synthetic::cloud(3, 0, 1));
    bytes[12..16].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    assert!(matches!(
        decode(&bytes),
        Err(GltfError::GlbChunkPastEnd {
            index: 0,
            length: 0x7fff_fff0,
            ..
        })
    ));
}

#[test]
fn json_errors() {
    let err = decode(b"{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [").unwrap_err();
    assert!(
        matches!(&err, GltfError::Json(m) if m.contains("EOF")),
        "{err}"
    );
    let err = decode(br#"{"asset": {"version": "2.0"}, "nodes": [{"mesh": -1}]}"#).unwrap_err();
    assert!(matches!(err, GltfError::Json(_)));
}

#[test]
fn unsupported_version() {
    let err = decode(br#"{"asset": {"version": "1.0"}}"#).unwrap_err();
    assert!(matches!(err, GltfError::UnsupportedVersion { version } if version == "1.0"));
    let err = decode(br#"{"asset": {"version": "2.0", "minVersion": "2.1"}}"#).unwrap_err();
    assert!(matches!(err, GltfError::UnsupportedVersion { version } if version == "2.1"));
}

#[test]
fn accessor_past_its_view() {
    let err = edited(|j| {
        let a = attribute(j, "KHR_gaussian_splatting:ROTATION");
        j["accessors"][a]["byteOffset"] = json!(8);
    });
    assert!(
        matches!(
            err,
            GltfError::AccessorOutOfBounds {
                end: 56,
                view_len: 48,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn stride_smaller_than_element() {
    let err = edited(|j| {
        let a = attribute(j, "KHR_gaussian_splatting:ROTATION");
        let v = j["accessors"][a]["bufferView"].as_u64().unwrap() as usize;
        j["bufferViews"][v]["byteStride"] = json!(8);
    });
    assert!(
        matches!(
            err,
            GltfError::StrideTooSmall {
                stride: 8,
                element: 16,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn buffer_view_past_its_buffer() {
    let err = edited(|j| j["bufferViews"][0]["byteLength"] = json!(1_000_000));
    assert!(
        matches!(err, GltfError::BufferViewOutOfBounds { view: 0, .. }),
        "{err}"
    );
}

#[test]
fn buffer_longer_than_its_data() {
    let err = edited(|j| j["buffers"][0]["byteLength"] = json!(1_000_000));
    assert!(
        matches!(
            err,
            GltfError::BufferTooShort {
                buffer: 0,
                declared: 1_000_000,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn mismatched_counts() {
    let err = edited(|j| {
        let a = attribute(j, "KHR_gaussian_splatting:OPACITY");
        j["accessors"][a]["count"] = json!(2);
    });
    match err {
        GltfError::MismatchedCounts {
            attribute,
            count,
            reference,
            reference_count,
            ..
        } => {
            assert_eq!(attribute, "KHR_gaussian_splatting:OPACITY");
            assert_eq!(
                (count, reference.as_str(), reference_count),
                (2, "POSITION", 3)
            );
        }
        other => panic!("{other}"),
    }
}

#[test]
fn wrong_component_type() {
    let err = edited(|j| {
        let a = attribute(j, "KHR_gaussian_splatting:ROTATION");
        j["accessors"][a]["componentType"] = json!(5121);
    });
    match err {
        GltfError::WrongAccessorFormat {
            attribute,
            found,
            expected,
            ..
        } => {
            assert_eq!(attribute, "KHR_gaussian_splatting:ROTATION");
            assert_eq!(found, "VEC4 UNSIGNED_BYTE");
            assert!(expected.contains("VEC4 FLOAT"));
        }
        other => panic!("{other}"),
    }
    let err = edited(|j| {
        let a = attribute(j, "KHR_gaussian_splatting:OPACITY");
        j["accessors"][a]["type"] = json!("VEC2");
    });
    assert!(matches!(err, GltfError::WrongAccessorFormat { found, .. } if found == "VEC2 FLOAT"));
    let err = edited(|j| j["accessors"][0]["componentType"] = json!(1234));
    assert!(matches!(
        err,
        GltfError::UnknownComponentType {
            component_type: 1234,
            ..
        }
    ));
    let err = edited(|j| j["accessors"][0]["type"] = json!("VEC5"));
    assert!(matches!(err, GltfError::UnknownAccessorType { type_name, .. } if type_name == "VEC5"));
}

#[test]
fn unknown_required_extension() {
    let err = edited(|j| {
        j["extensionsRequired"] = json!(["KHR_materials_unlit", "EXT_meshopt_compression"])
    });
    assert!(
        matches!(err, GltfError::UnsupportedRequiredExtension(name) if name == "EXT_meshopt_compression")
    );
}

#[test]
fn missing_indices_are_named() {
    let err = edited(|j| {
        j["meshes"][0]["primitives"][0]["attributes"]["KHR_gaussian_splatting:SCALE"] = json!(999)
    });
    assert!(
        matches!(
            err,
            GltfError::IndexOutOfRange {
                kind: Kind::Accessor,
                index: 999,
                ..
            }
        ),
        "{err}"
    );
    let err = edited(|j| j["accessors"][0]["bufferView"] = json!(77));
    assert!(
        matches!(
            err,
            GltfError::IndexOutOfRange {
                kind: Kind::BufferView,
                index: 77,
                ..
            }
        ),
        "{err}"
    );
    let err = edited(|j| j["bufferViews"][0]["buffer"] = json!(5));
    assert!(
        matches!(
            err,
            GltfError::IndexOutOfRange {
                kind: Kind::Buffer,
                index: 5,
                ..
            }
        ),
        "{err}"
    );
    let err = edited(|j| j["nodes"][0]["mesh"] = json!(3));
    assert!(
        matches!(
            err,
            GltfError::IndexOutOfRange {
                kind: Kind::Mesh,
                index: 3,
                ..
            }
        ),
        "{err}"
    );
    let err = edited(|j| j["scene"] = json!(4));
    assert!(
        matches!(
            err,
            GltfError::IndexOutOfRange {
                kind: Kind::Scene,
                index: 4,
                ..
            }
        ),
        "{err}"
    );
    let err = edited(|j| j["scenes"][0]["nodes"] = json!([0, 9]));
    assert!(
        matches!(
            err,
            GltfError::IndexOutOfRange {
                kind: Kind::Node,
                index: 9,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn missing_attributes() {
    let err = edited(|j| {
        j["meshes"][0]["primitives"][0]["attributes"]
            .as_object_mut()
            .unwrap()
            .remove("KHR_gaussian_splatting:ROTATION");
    });
    assert!(matches!(
        err,
        GltfError::MissingAttribute {
            attribute: "KHR_gaussian_splatting:ROTATION",
            ..
        }
    ));
    let err = edited(|j| {
        let attrs = j["meshes"][0]["primitives"][0]["attributes"]
            .as_object_mut()
            .unwrap();
        attrs.remove("KHR_gaussian_splatting:SH_DEGREE_0_COEF_0");
        attrs.remove("COLOR_0");
    });
    assert!(matches!(err, GltfError::MissingAttribute { .. }), "{err}");
    let err = edited(|j| {
        let a = attribute(j, "POSITION");
        j["accessors"][a]
            .as_object_mut()
            .unwrap()
            .remove("bufferView");
    });
    assert!(matches!(err, GltfError::NoData { attribute, .. } if attribute == "POSITION"));
}

#[test]
fn sh_degree_incomplete_or_out_of_range() {
    let err = edited(|j| {
        j["meshes"][0]["primitives"][0]["attributes"]
            .as_object_mut()
            .unwrap()
            .remove("KHR_gaussian_splatting:SH_DEGREE_1_COEF_1");
    });
    assert!(
        matches!(&err, GltfError::ShDegreeIncomplete { degree: 1, missing, .. } if missing == "KHR_gaussian_splatting:SH_DEGREE_1_COEF_1"),
        "{err}"
    );
    // Degree 2 without degree 1's coefficients.
    let err = edited(|j| {
        let attrs = j["meshes"][0]["primitives"][0]["attributes"]
            .as_object_mut()
            .unwrap();
        let a = attrs["KHR_gaussian_splatting:SH_DEGREE_1_COEF_0"].clone();
        for k in 0..3 {
            attrs.remove(&format!("KHR_gaussian_splatting:SH_DEGREE_1_COEF_{k}"));
        }
        for k in 0..5 {
            attrs.insert(
                format!("KHR_gaussian_splatting:SH_DEGREE_2_COEF_{k}"),
                a.clone(),
            );
        }
    });
    assert!(
        matches!(err, GltfError::ShDegreeIncomplete { degree: 1, .. }),
        "{err}"
    );
    let err = edited(|j| {
        let attrs = j["meshes"][0]["primitives"][0]["attributes"]
            .as_object_mut()
            .unwrap();
        attrs.insert("KHR_gaussian_splatting:SH_DEGREE_1_COEF_3".into(), json!(0));
    });
    assert!(
        matches!(err, GltfError::ShCoefficientOutOfRange { attribute, .. } if attribute.ends_with("1_COEF_3"))
    );
}

fn nodes(graph: Value, scene_nodes: Value) -> GltfError {
    edited(|j| {
        j["nodes"] = graph;
        j["scenes"][0]["nodes"] = scene_nodes;
    })
}

#[test]
fn cyclic_nodes() {
    let err = nodes(
        json!([{"children": [1]}, {"children": [2]}, {"children": [1], "mesh": 0}]),
        json!([0]),
    );
    assert!(
        matches!(
            err,
            GltfError::NodeWithTwoParents {
                node: 1,
                first: 0,
                second: 2
            }
        ),
        "{err}"
    );
    let err = nodes(json!([{"children": [1]}, {"children": [0]}]), json!([0]));
    assert!(matches!(err, GltfError::NodeCycle { .. }), "{err}");
    let err = nodes(json!([{"children": [0], "mesh": 0}]), json!([0]));
    assert!(matches!(err, GltfError::NodeCycle { node: 0 }), "{err}");
    let err = nodes(json!([{"children": [1]}, {"mesh": 0}]), json!([1]));
    assert!(
        matches!(err, GltfError::SceneRootIsChild { node: 1, parent: 0 }),
        "{err}"
    );
    // A long chain is checked in linear time.
    let chain: Vec<Value> = (0..20_000)
        .map(|i| json!({"children": [i + 1]}))
        .chain([json!({"children": [0]})])
        .collect();
    let err = nodes(Value::Array(chain), json!([]));
    assert!(matches!(err, GltfError::NodeCycle { .. }), "{err}");
}

#[test]
fn non_finite_transform() {
    // JSON has no NaN; an f32 overflow gives an infinity.
    let err = edited(|j| j["nodes"][0]["translation"] = json!([1e39, 0.0, 0.0]));
    assert!(
        matches!(err, GltfError::NonFiniteTransform { node: 0 }),
        "{err}"
    );
}

#[test]
fn missing_external_buffer() {
    let text = br#"{
        "asset": {"version": "2.0"},
        "buffers": [{"uri": "splat%20data.bin", "byteLength": 12}],
        "bufferViews": [{"buffer": 0, "byteLength": 12}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 1, "type": "VEC3"}],
        "meshes": [{"primitives": [{"mode": 0, "attributes": {"POSITION": 0},
            "extensions": {"KHR_gaussian_splatting": {"kernel": "ellipse", "colorSpace": "srgb_rec709_display"}}}]}],
        "nodes": [{"mesh": 0}]
    }"#;
    let doc = gltf::parse(text).unwrap();
    assert_eq!(doc.external_buffers(), vec!["splat data.bin".to_string()]);
    let err = gltf::decode(&doc, &|_| None).unwrap_err();
    assert!(
        matches!(err, GltfError::MissingExternalBuffer { buffer: 0, uri } if uri == "splat data.bin")
    );
    // Provided, it gets as far as the missing ROTATION.
    let bytes = [0u8; 12];
    let err =
        gltf::decode(&doc, &|uri| (uri == "splat data.bin").then_some(&bytes[..])).unwrap_err();
    assert!(matches!(err, GltfError::MissingAttribute { .. }), "{err}");
}

#[test]
fn missing_bin_chunk_and_bad_data_uris() {
    let text = br#"{"asset": {"version": "2.0"}, "buffers": [{"byteLength": 12}],
        "bufferViews": [{"buffer": 0, "byteLength": 12}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 1, "type": "VEC3"}],
        "meshes": [{"primitives": [{"mode": 0, "attributes": {"POSITION": 0}, "extensions": {"KHR_gaussian_splatting": {}}}]}],
        "nodes": [{"mesh": 0}]}"#;
    assert!(matches!(
        decode(text),
        Err(GltfError::MissingBinChunk { buffer: 0 })
    ));
    let bad = String::from_utf8_lossy(text).replace(
        r#"{"byteLength": 12}"#,
        r#"{"uri": "data:application/octet-stream;base64,@@@", "byteLength": 12}"#,
    );
    assert!(matches!(
        decode(bad.as_bytes()),
        Err(GltfError::DataUri { buffer: 0, .. })
    ));
    let bad = String::from_utf8_lossy(text).replace(
        r#"{"byteLength": 12}"#,
        r#"{"uri": "%FF.bin", "byteLength": 12}"#,
    );
    assert!(matches!(
        decode(bad.as_bytes()),
        Err(GltfError::InvalidUri { buffer: 0, .. })
    ));
}

#[test]
fn spz_errors_are_wrapped() {
    let (json, mut bin) = glb::split(&read("unit_sh_legacy.glb"));
    bin[40] ^= 0xff;
    let err = decode(&glb::join(&json, &bin)).unwrap_err();
    assert!(matches!(err, GltfError::Spz { .. }), "{err}");
    let mut bad = json.clone();
    bad["meshes"][0]["primitives"][0]["extensions"]["KHR_spz_gaussian_splats_compression"]["bufferView"] =
        json!("zero");
    let err = decode(&glb::join(&bad, &bin)).unwrap_err();
    assert!(
        matches!(
            err,
            GltfError::InvalidExtension {
                name: "KHR_spz_gaussian_splats_compression",
                ..
            }
        ),
        "{err}"
    );
    let mut count = json.clone();
    count["accessors"][0]["count"] = json!(8);
    let (_, bin) = glb::split(&read("unit_sh_legacy.glb"));
    let err = decode(&glb::join(&count, &bin)).unwrap_err();
    assert!(
        matches!(&err, GltfError::MismatchedCounts { count: 8, reference, reference_count: 9, .. } if reference == "the SPZ data"),
        "{err}"
    );
}

#[test]
fn scene_splat_cap() {
    let bytes = read("tower_legacy_spz.glb");
    let doc = gltf::parse(&bytes).unwrap();
    let options = DecodeOptions {
        max_scene_splats: 1000,
        ..Default::default()
    };
    let err = gltf::decode_with(&doc, &|_| None, &options).unwrap_err();
    assert!(matches!(
        err,
        GltfError::TooManySplats {
            count: 73_172,
            max: 1000
        }
    ));
    // A mesh shown by many nodes counts once per node.
    let (mut json, bin) = base();
    json["nodes"] = Value::Array((0..10).map(|_| json!({"mesh": 0})).collect());
    json["scenes"][0]["nodes"] = json!((0..10).collect::<Vec<_>>());
    let doc_bytes = glb::join(&json, &bin);
    let doc = gltf::parse(&doc_bytes).unwrap();
    let options = DecodeOptions {
        max_scene_splats: 29,
        ..Default::default()
    };
    assert!(matches!(
        gltf::decode_with(&doc, &|_| None, &options),
        Err(GltfError::TooManySplats { count: 30, .. })
    ));
    assert_eq!(gltf::decode(&doc, &|_| None).unwrap().nodes.len(), 10);
}
