//! The real glTF splat files in tests/data/formats decode as their sources describe.

use crate::common::{all_splats, assert_same_bits, data, read, scene};
use bevy_splat::asset::decoded::DecodedSplats;
use bevy_splat::asset::formats::gltf::{self, DecodeOptions, Note, ScaleEncoding};

const H: f32 = std::f32::consts::FRAC_1_SQRT_2;

fn close(a: f32, b: f32, tolerance: f32) -> bool {
    (a - b).abs() <= tolerance
}

/// Every value finite and every quaternion of unit length (within `tolerance`).
fn assert_sane(splats: &DecodedSplats, tolerance: f32, what: &str) {
    assert_eq!(splats.non_finite, 0, "{what}");
    assert!(splats.sh.iter().all(|v| v.is_finite()), "{what}: SH");
    for (i, g) in splats.geometry.iter().enumerate() {
        let floats: &[f32; 12] = bytemuck::cast_ref(g);
        assert!(floats.iter().all(|v| v.is_finite()), "{what}: splat {i}");
        let norm = g.rotation.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!(
            close(norm, 1.0, tolerance),
            "{what}: splat {i} |q| = {norm}"
        );
    }
}

/// The column-major matrix [1,0,0,0, 0,0,-1,0, 0,1,0,0, t,1] of Cesium's files: a −90°
/// turn about X, x y z w = (−√½, 0, 0, √½).
fn assert_z_up_node(scene: &gltf::SplatScene, translation: [f32; 3]) {
    assert_eq!(scene.nodes.len(), 1);
    assert_eq!(scene.scene_roots, vec![0]);
    let node = &scene.nodes[0];
    let want = [-H, 0.0, 0.0, H];
    assert!(
        node.rotation
            .iter()
            .zip(want)
            .all(|(a, b)| close(*a, b, 1e-6)),
        "{:?}",
        node.rotation
    );
    assert_eq!(node.scale, [1.0; 3]);
    assert_eq!(node.translation, translation);
    assert!(!scene.notes.iter().any(|n| matches!(n, Note::Matrix { .. })));
}

#[test]
fn tower_legacy_spz() {
    let scene = scene("tower_legacy_spz.glb");
    // The JSON's f64 values (1.2307894825935364, 186.9346923828125, 0.6764951944351196).
    let t = [
        1.230_789_482_593_536_4f64,
        186.934_692_382_812_5,
        0.676_495_194_435_119_6,
    ];
    assert_z_up_node(&scene, t.map(|v| v as f32));
    let splats = &scene.nodes[0].splats;
    assert_eq!(splats.len(), 1);
    assert_eq!(splats[0].len(), 73_172);
    assert_eq!(splats[0].sh_degree, 3);
    assert_sane(&splats[0], 2e-2, "tower");
    assert!(scene.notes.contains(&Note::Spz {
        site: gltf::Site {
            mesh: 0,
            primitive: 0
        },
        version: 2
    }));
    // The tall axis is z (the node turns Z-up to Y-up): its extent is about three
    // times x's and y's.
    let extent = |axis: usize| {
        let v = splats[0].geometry.iter().map(|g| g.position[axis]);
        v.clone().fold(f32::MIN, f32::max) - v.fold(f32::MAX, f32::min)
    };
    assert!(extent(2) > 2.5 * extent(0) && extent(2) > 2.5 * extent(1));
}

#[test]
fn unit_sh_legacy_glb_and_gltf_agree() {
    let glb = scene("unit_sh_legacy.glb");
    assert_z_up_node(&glb, [0.0; 3]);
    let s = &glb.nodes[0].splats[0];
    assert_eq!((s.len(), s.sh_degree), (9, 3));
    assert_sane(s, 1e-3, "UnitSH");
    // SOURCES.md: positions on a ±50 cube (the accessor's min and max).
    assert!(
        s.geometry
            .iter()
            .all(|g| g.position.iter().all(|v| v.abs() <= 50.0))
    );

    let text = read("unit_sh_legacy_gltf/UnitSH_legacy.gltf");
    let doc = gltf::parse(&text).expect("parse");
    assert_eq!(
        doc.external_buffers(),
        vec!["UnitSH_legacy_data.bin".to_string()]
    );
    let bin = read("unit_sh_legacy_gltf/UnitSH_legacy_data.bin");
    let fetch = |uri: &str| (uri == "UnitSH_legacy_data.bin").then_some(bin.as_slice());
    let gltf_scene = gltf::decode(&doc, &fetch).expect("decode");
    assert_z_up_node(&gltf_scene, [0.0; 3]);
    assert_same_bits(
        &glb.nodes[0].splats[0],
        &gltf_scene.nodes[0].splats[0],
        "UnitSH glb vs gltf",
    );
}

/// cesium-native's test of this file (TestGltfReader.cpp, "SPZ decoding works
/// properly") expects position (1, 2, 3), COLOR_0 (0.570062876, 0.643813193,
/// 0.710188448, 0.501960814) = 0.5 + 0.282095 · colour and sigmoid(alpha), rotation
/// x y z w (0.003921628, −0.709803939, 0.709804058, 0) and scale (e³, e², e).
#[test]
fn spz2_basic_matches_cesium_native() {
    let scene = scene("spz2_basic_1splat.glb");
    assert_z_up_node(&scene, [0.0; 3]);
    let s = &scene.nodes[0].splats[0];
    assert_eq!((s.len(), s.sh_degree), (1, 0));
    let g = &s.geometry[0];
    assert_eq!(g.position, [1.0, 2.0, 3.0]);
    let color = [0.570_062_876f64, 0.643_813_193, 0.710_188_448];
    for (c, want) in color.iter().enumerate() {
        assert!(
            close(0.5 + 0.282_095 * s.sh[c], *want as f32, 1e-6),
            "channel {c}"
        );
    }
    assert!(close(
        1.0 / (1.0 + (-g.opacity_logit).exp()),
        0.501_960_814_f64 as f32,
        1e-6
    ));
    // Cesium keeps SPZ v2's unnormalised quaternion; compare directions.
    let cesium = [0.003_921_628f64, -0.709_803_939, 0.709_804_058, 0.0].map(|v| v as f32);
    let norm = cesium.iter().map(|v| v * v).sum::<f32>().sqrt();
    let [w, x, y, z] = g.rotation;
    for (ours, theirs) in [x, y, z, w].iter().zip(cesium) {
        assert!(close(*ours, theirs / norm, 1e-5), "{:?}", g.rotation);
    }
    let scale = g.log_scale.map(f32::exp);
    for (ours, theirs) in scale
        .iter()
        .zip([20.085_537f64, 7.389_056_21, 2.718_281_75].map(|v| v as f32))
    {
        assert!(close(*ours, theirs, 1e-4));
    }
}

/// Expected values printed by an independent stdlib-Python reader of the GLB
/// (/tmp/xcheck/conformance.py, not kept): it follows the glTF accessor rules, takes
/// ROTATION as x y z w, SCALE as logs (this file has negative and signed-integer
/// scales: the 2026-01 log-space text), opacity → logit, and converts the
/// `lin_rec709_display` SH to sRGB (DC exactly, bands by the tangent slope) in f64.
#[test]
fn conformance_matrix_values() {
    let scene = scene("khr_conformance_matrix.glb");
    // 15 splat nodes plus the camera node.
    assert_eq!(scene.nodes.len(), 16);
    assert_eq!(scene.scene_roots, (0..16).collect::<Vec<_>>());
    assert!(scene.notes.contains(&Note::LogScale));
    assert_eq!(scene.nodes[15].name.as_deref(), Some("fixture_camera"));
    assert_eq!(scene.nodes[15].translation, [4.0, 5.0, 6.0]);
    assert!(scene.nodes[15].splats.is_empty());

    let by_name = |name: &str| {
        let node = scene
            .nodes
            .iter()
            .find(|n| n.name.as_deref() == Some(name))
            .expect(name);
        assert_eq!(node.splats.len(), 1, "{name}");
        assert_eq!(node.translation, [0.0; 3]);
        &node.splats[0]
    };
    let lin_dc = [0.899_129_15f32, 0.961_950_4, 1.022_94];
    let default_scale = [0.0f32, 0.5, -0.5];
    let cases: [(&str, [f32; 3], f32, u8); 15] = [
        ("rotation_f32", default_scale, -1.098_612_3, 0),
        ("rotation_i8_norm", default_scale, -1.098_612_3, 0),
        ("rotation_i16_norm", default_scale, -1.098_612_3, 0),
        ("scale_f32", [0.2, -0.1, 0.7], -1.098_612_3, 0),
        ("scale_i8", [1.0, -2.0, 3.0], -1.098_612_3, 0),
        ("scale_i8_norm", [1.0, 0.0, -1.0], -1.098_612_3, 0),
        ("scale_i16", [2.0, -3.0, 4.0], -1.098_612_3, 0),
        ("scale_i16_norm", [1.0, 0.0, -1.0], -1.098_612_3, 0),
        ("opacity_f32", default_scale, 1.098_612_3, 0),
        ("opacity_u8_norm", default_scale, -1.093_390_2, 0),
        ("opacity_u16_norm", default_scale, -1.098_591_9, 0),
        ("sh_degree0", default_scale, -1.098_612_3, 0),
        ("sh_degree1", default_scale, -1.098_612_3, 1),
        ("sh_degree2", default_scale, -1.098_612_3, 2),
        ("sh_degree3", default_scale, -1.098_612_3, 3),
    ];
    for (name, log_scale, logit, degree) in cases {
        let s = by_name(name);
        assert_eq!((s.len(), s.sh_degree), (1, degree), "{name}");
        let g = &s.geometry[0];
        assert_eq!(g.position, [1.0, 2.0, 3.0], "{name}");
        // The fixture's writer stored w first; read as the spec's x y z w that is a
        // 180° turn about X, w x y z = (0, 1, 0, 0).
        assert_eq!(g.rotation, [0.0, 1.0, 0.0, 0.0], "{name}");
        assert_eq!(g.log_scale, log_scale, "{name}");
        assert!(
            close(g.opacity_logit, logit, 1e-6),
            "{name}: {}",
            g.opacity_logit
        );
        let dc = if name == "scale_f32" {
            [0.1, 0.2, 0.3]
        } else {
            lin_dc
        };
        for (c, want) in dc.iter().enumerate() {
            assert!(close(s.sh[c], *want, 2e-6), "{name}: DC {c} = {}", s.sh[c]);
        }
    }
    let rest = [0.701_665_76f32, 0.742_571_06, 0.781_576_1];
    for (name, last) in [
        ("sh_degree1", 1.984_000_8f32),
        ("sh_degree2", 4.990_062_7),
        ("sh_degree3", 9.198_549),
    ] {
        let s = by_name(name);
        for (c, want) in rest.iter().enumerate() {
            assert!(close(s.sh[3 + c], *want, 2e-6), "{name}: rest {c}");
        }
        assert!(close(*s.sh.last().unwrap(), last, 1e-5), "{name}: last");
    }
}

#[test]
fn conformance_matrix_colour_spaces_are_noted() {
    let scene = scene("khr_conformance_matrix.glb");
    let converted = scene
        .notes
        .iter()
        .filter(|n| matches!(n, Note::LinearColorConverted { .. }))
        .count();
    // Every case but scale_f32 is lin_rec709_display.
    assert_eq!(converted, 14);
    assert!(!scene.notes.contains(&Note::LinearColorConverted {
        site: gltf::Site {
            mesh: 3,
            primitive: 0
        }
    }));
}

/// The conformance matrix read as linear, as the ratified text says: its negative and
/// zero scales become the smallest finite log, degenerate splats. `Auto` avoids that.
#[test]
fn forcing_linear_scale_on_a_log_file_breaks_it() {
    let bytes = read("khr_conformance_matrix.glb");
    let doc = gltf::parse(&bytes).unwrap();
    let options = DecodeOptions {
        scale_encoding: ScaleEncoding::Linear,
        ..Default::default()
    };
    let scene = gltf::decode_with(&doc, &|_| None, &options).unwrap();
    let s = &scene.nodes[0].splats[0];
    assert_eq!(s.geometry[0].log_scale[1], 0.5f32.ln());
    assert_eq!(s.geometry[0].log_scale[2], s.geometry[0].log_scale[0]);
    assert!(s.geometry[0].log_scale[2] < -80.0);
}

#[test]
fn extensible_fallback() {
    let scene = scene("khr_extensible_fallback.gltf");
    assert_eq!(
        scene.ignored_extensions,
        vec!["EXT_gaussian_splatting_kernel_customShape".to_string()]
    );
    let site = gltf::Site {
        mesh: 0,
        primitive: 0,
    };
    assert!(scene.notes.contains(&Note::UnknownKernel {
        site,
        kernel: "customShape".into()
    }));
    assert!(scene.notes.contains(&Note::UnknownColorSpace {
        site,
        color_space: "custom_space_display".into()
    }));
    assert!(scene.notes.contains(&Note::ColorFromColor0 { site }));
    let s = &scene.nodes[0].splats[0];
    assert_eq!((s.len(), s.sh_degree), (1, 0));
    assert_sane(s, 1e-6, "fallback");
    let g = &s.geometry[0];
    assert_eq!(g.position, [1.0, 2.0, 3.0]);
    assert_eq!(g.opacity_logit, 0.0);
    // Linear scales of 0 (ratified reading): as small as a finite log allows.
    assert!(g.log_scale.iter().all(|&l| l < -80.0));
    // COLOR_0 (0.282095, 0.564190, 0.846285) is linear, the file's colour space is
    // unknown and read as sRGB: f_dc = (srgb_encode(c) − 0.5) / C0.
    let encode = |c: f64| {
        if c <= 0.003_130_8 {
            12.92 * c
        } else {
            1.055 * c.powf(1.0 / 2.4) - 0.055
        }
    };
    for (c, linear) in [
        0.282_094_985_246_658_3f64,
        0.564_189_970_493_316_7,
        0.846_284_985_542_297_4,
    ]
    .iter()
    .enumerate()
    {
        let want = ((encode(*linear) - 0.5) / f64::from(0.282_094_8f32)) as f32;
        assert!(
            close(s.sh[c], want, 1e-6),
            "channel {c}: {} vs {want}",
            s.sh[c]
        );
    }
}

#[test]
fn every_fixture_has_sane_splats() {
    for name in [
        "khr_conformance_matrix.glb",
        "khr_extensible_fallback.gltf",
        "spz2_basic_1splat.glb",
        "tower_legacy_spz.glb",
        "unit_sh_legacy.glb",
    ] {
        let scene = scene(name);
        let splats = all_splats(&scene);
        assert!(!splats.is_empty(), "{name}");
        for s in splats {
            assert_sane(s, 2e-2, name);
        }
        assert!(data(name).exists());
    }
}
