//! `decode(write_glb(x))` gives back `x` bit for bit, for the real files' splats and
//! synthetic clouds; without the exact attributes the spec's linear representation
//! loses a measured amount.

use crate::common::{all_splats, assert_same_bits, glb, scene, synthetic};
use bevy_splat::asset::decoded::{DecodedSplats, SplatGeometry};
use bevy_splat::asset::formats::gltf::{self, Note, WriteOptions};

fn round_trip(splats: &DecodedSplats, options: &WriteOptions) -> DecodedSplats {
    let bytes = gltf::write_glb_with(splats, options);
    let scene = gltf::decode_bytes(&bytes).expect("written GLB decodes");
    assert_eq!(scene.nodes.len(), 1);
    assert_eq!(scene.scene_roots, vec![0]);
    assert!(
        !scene.notes.contains(&Note::LogScale),
        "written scales read as logs"
    );
    scene.nodes[0]
        .splats
        .first()
        .cloned()
        .unwrap_or_else(|| DecodedSplats::from_parts(vec![], vec![], 0, false))
}

fn exact(splats: &DecodedSplats, what: &str) {
    let back = round_trip(splats, &WriteOptions::default());
    assert_same_bits(splats, &back, what);
}

#[test]
fn real_files_round_trip_exactly() {
    for name in [
        "tower_legacy_spz.glb",
        "unit_sh_legacy.glb",
        "spz2_basic_1splat.glb",
        "khr_conformance_matrix.glb",
        "khr_extensible_fallback.gltf",
    ] {
        let scene = scene(name);
        for (i, splats) in all_splats(&scene).into_iter().enumerate() {
            exact(splats, &format!("{name} primitive {i}"));
        }
    }
}

#[test]
fn synthetic_clouds_round_trip_exactly() {
    for degree in 0..=3 {
        exact(
            &synthetic::cloud(500, degree, 11 + u64::from(degree)),
            &format!("SH{degree}"),
        );
    }
    // Antialiasing, non-finite values, zero and extreme values.
    let mut cloud = synthetic::cloud(64, 3, 5);
    cloud.geometry[0].position[1] = f32::NAN;
    cloud.geometry[1].log_scale = [f32::INFINITY, -200.0, 90.0];
    cloud.geometry[2].opacity_logit = f32::NEG_INFINITY;
    cloud.geometry[3].rotation = [0.0; 4];
    cloud.geometry[4].rotation = [f32::NAN, 1.0, 0.0, 0.0];
    cloud.sh[5 * 48 + 7] = f32::NAN;
    let cloud = DecodedSplats::from_parts(cloud.geometry, cloud.sh, 3, true);
    assert_eq!(cloud.non_finite, 5);
    exact(&cloud, "SH3 edge cases");
    exact(
        &DecodedSplats::from_parts(vec![], vec![], 0, false),
        "empty",
    );
}

/// What the spec attributes alone carry back: log scale through exp and ln, logit
/// through sigmoid and logit (in f64, rounded to f32 once each way), quaternions
/// normalised.
#[test]
fn spec_only_round_trip_error() {
    let options = WriteOptions {
        exact: false,
        ..Default::default()
    };
    let tower = scene("tower_legacy_spz.glb");
    let clouds = [
        ("tower", tower.nodes[0].splats[0].clone()),
        ("synthetic SH3", synthetic::cloud(20_000, 3, 21)),
    ];
    for (what, cloud) in clouds {
        let back = round_trip(&cloud, &options);
        let mut worst = [0.0f32; 3];
        let mut worst_logit = 0.0f32;
        let mut exact_scales = 0usize;
        for (a, b) in cloud.geometry.iter().zip(&back.geometry) {
            assert_eq!(a.position, b.position);
            for k in 0..3 {
                let d = (a.log_scale[k] - b.log_scale[k]).abs();
                worst[0] = worst[0].max(d);
                exact_scales += usize::from(d == 0.0);
            }
            let pa = 1.0 / (1.0 + (-f64::from(a.opacity_logit)).exp());
            let pb = 1.0 / (1.0 + (-f64::from(b.opacity_logit)).exp());
            worst[1] = worst[1].max((pa - pb).abs() as f32);
            worst_logit = worst_logit.max((a.opacity_logit - b.opacity_logit).abs());
            let norm = a.rotation.iter().map(|v| v * v).sum::<f32>().sqrt();
            let d = a
                .rotation
                .iter()
                .zip(b.rotation)
                .map(|(x, y)| (x / norm - y).abs())
                .fold(0.0, f32::max);
            worst[2] = worst[2].max(d);
        }
        assert_eq!(cloud.sh, back.sh, "{what}: SH is stored as is");
        eprintln!(
            "{what}: max |Δ log scale| {:e} ({:.2}% of scales exact), max |Δ opacity| {:e} (|Δ logit| {:e}), max |Δ unit quaternion| {:e}",
            worst[0],
            100.0 * exact_scales as f64 / (3 * cloud.len()) as f64,
            worst[1],
            worst_logit,
            worst[2]
        );
        assert!(worst[0] < 2e-6, "{what}: {worst:?}");
        // Opacities within a millionth of 0 or 1 are clamped there on reading.
        assert!(worst[1] <= 1.000_1e-6, "{what}: {worst:?}");
        assert!(worst[2] < 1e-6, "{what}: {worst:?}");
    }
}

#[test]
fn written_json_follows_the_spec() {
    let cloud = synthetic::cloud(10, 2, 3);
    let (json, _) = glb::split(&gltf::write_glb(&cloud));
    assert_eq!(
        json["extensionsUsed"],
        serde_json::json!(["KHR_gaussian_splatting"])
    );
    assert!(json.get("extensionsRequired").is_none());
    let primitive = &json["meshes"][0]["primitives"][0];
    assert_eq!(primitive["mode"], 0);
    assert_eq!(
        primitive["extensions"]["KHR_gaussian_splatting"]["kernel"],
        "ellipse"
    );
    assert_eq!(
        primitive["extensions"]["KHR_gaussian_splatting"]["colorSpace"],
        "srgb_rec709_display"
    );
    let attributes = primitive["attributes"].as_object().unwrap();
    for name in [
        "POSITION",
        "COLOR_0",
        "KHR_gaussian_splatting:ROTATION",
        "KHR_gaussian_splatting:SCALE",
        "KHR_gaussian_splatting:OPACITY",
        "KHR_gaussian_splatting:SH_DEGREE_0_COEF_0",
        "KHR_gaussian_splatting:SH_DEGREE_2_COEF_4",
    ] {
        assert!(attributes.contains_key(name), "{name}");
    }
    assert!(!attributes.contains_key("KHR_gaussian_splatting:SH_DEGREE_3_COEF_0"));
    let position = &json["accessors"][attributes["POSITION"].as_u64().unwrap() as usize];
    let min: Vec<f32> = serde_json::from_value(position["min"].clone()).unwrap();
    let max: Vec<f32> = serde_json::from_value(position["max"].clone()).unwrap();
    for g in &cloud.geometry {
        for k in 0..3 {
            assert!(min[k] <= g.position[k] && g.position[k] <= max[k]);
        }
    }
    // Stored linear values are non-negative and opacities in 0..1, as the spec says.
    let (json, bin) = glb::split(&gltf::write_glb(&cloud));
    let floats = |name: &str| -> Vec<f32> {
        let a = &json["accessors"][attributes[name].as_u64().unwrap() as usize];
        let v = &json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let start = v["byteOffset"].as_u64().unwrap() as usize;
        let len = v["byteLength"].as_u64().unwrap() as usize;
        bin[start..start + len]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect()
    };
    assert!(
        floats("KHR_gaussian_splatting:SCALE")
            .iter()
            .all(|s| *s >= 0.0)
    );
    assert!(
        floats("KHR_gaussian_splatting:OPACITY")
            .iter()
            .all(|o| (0.0..=1.0).contains(o))
    );
    let q = floats("KHR_gaussian_splatting:ROTATION");
    assert!(
        q.chunks_exact(4)
            .all(|q| (q.iter().map(|v| v * v).sum::<f32>() - 1.0).abs() < 1e-6)
    );
}

/// A tool that rewrites SCALE but keeps the stale exact log scales: the spec
/// attribute wins.
#[test]
fn stale_exact_attributes_are_ignored() {
    let cloud = synthetic::cloud(4, 0, 9);
    let (json, mut bin) = glb::split(&gltf::write_glb(&cloud));
    let attributes = &json["meshes"][0]["primitives"][0]["attributes"];
    assert!(
        attributes.get("_BEVY_SPLAT_LOG_SCALE").is_some()
            || attributes.get("_BEVY_SPLAT_OPACITY_LOGIT").is_some()
    );
    let scale = attributes["KHR_gaussian_splatting:SCALE"].as_u64().unwrap() as usize;
    let view = json["accessors"][scale]["bufferView"].as_u64().unwrap() as usize;
    let start = json["bufferViews"][view]["byteOffset"].as_u64().unwrap() as usize;
    bin[start..start + 4].copy_from_slice(&2.0f32.to_le_bytes());
    let scene = gltf::decode_bytes(&glb::join(&json, &bin)).unwrap();
    let site = gltf::Site {
        mesh: 0,
        primitive: 0,
    };
    if attributes.get("_BEVY_SPLAT_LOG_SCALE").is_some() {
        assert!(scene.notes.contains(&Note::ExactAttributesIgnored {
            site,
            attribute: "_BEVY_SPLAT_LOG_SCALE"
        }));
    }
    assert_eq!(
        scene.nodes[0].splats[0].geometry[0].log_scale[0],
        2.0f32.ln()
    );
    let _: &SplatGeometry = &scene.nodes[0].splats[0].geometry[0];
}
