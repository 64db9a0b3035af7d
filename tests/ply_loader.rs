//! The PLY decoder (`bevy_splat::asset::ply`): real files, the three encodings of the
//! same splats, malformed input, and NaN/Inf handling. Inputs that fuzzing (fuzz/)
//! finds to crash or hang go at the end as regression tests.

use bevy_splat::asset::ply::{DecodedSplats, PlyError, SplatGeometry, decode};

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn load(name: &str) -> DecodedSplats {
    decode(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

// ---------------------------------------------------------------------------------
// Real files: counts, degrees, and the first and last splat's values, read
// independently with Python's `struct` module.

/// Values of one splat as stored in the file.
struct Spot {
    index: usize,
    position: [f32; 3],
    opacity: f32,
    rotation: [f32; 4],
    scale: [f32; 3],
    f_dc: [f32; 3],
    /// f_rest_0, 14, 15, 29, 30, 44 (first and last coefficient of R, G, B at degree 3).
    f_rest: Option<[f32; 6]>,
}

struct Expected {
    file: &'static str,
    count: usize,
    sh_degree: u8,
    spots: [Spot; 2],
}

const EXPECTED: [Expected; 8] = [
    Expected {
        file: "angel_sh0.ply",
        count: 71_377,
        sh_degree: 0,
        spots: [
            Spot {
                index: 0,
                position: [0.787364, -1.6679311, -0.6272574],
                opacity: -2.2192035,
                rotation: [-0.09331321, 0.8836752, -0.04078133, -0.45688912],
                scale: [-6.9930305, -1.2533888, -3.1808116],
                f_dc: [1.6195363, 1.2163899, 1.3415043],
                f_rest: None,
            },
            Spot {
                index: 71376,
                position: [-0.580579, 1.2193758, 0.3159555],
                opacity: -1.3619623,
                rotation: [0.3158825, 0.9359345, 0.007603299, -0.15552202],
                scale: [-9.776312, -4.871577, -6.248548],
                f_dc: [0.9800627, 0.95225954, 0.85494834],
                f_rest: None,
            },
        ],
    },
    Expected {
        file: "fruit_drops_sh3.ply",
        count: 4_721,
        sh_degree: 3,
        spots: [
            Spot {
                index: 0,
                position: [0.8868645, 0.17251483, -2.2489862],
                opacity: 1.2773573,
                rotation: [0.9165499, -0.30147138, 0.14749761, -0.03926655],
                scale: [-1.7639092, -2.7094355, -5.63348],
                f_dc: [1.6967978, 1.5846435, 1.4313878],
                f_rest: Some([
                    0.041336432,
                    0.0129960785,
                    0.017489886,
                    0.049454067,
                    -0.025654165,
                    0.099147394,
                ]),
            },
            Spot {
                index: 4720,
                position: [0.93882257, 0.070303984, -2.025317],
                opacity: -3.2840593,
                rotation: [0.67903566, 0.28031445, -0.061129052, 0.19633473],
                scale: [-4.0471992, -3.6608512, -5.0752816],
                f_dc: [1.0077044, 0.78262055, 0.43541318],
                f_rest: Some([
                    -0.025908576,
                    0.13547207,
                    0.068102166,
                    0.02744446,
                    0.10719957,
                    -0.05466433,
                ]),
            },
        ],
    },
    Expected {
        file: "train_3pts_sh3.ply",
        count: 3,
        sh_degree: 3,
        spots: [
            Spot {
                index: 0,
                position: [2.0078542, 0.08104886, 1.3285047],
                opacity: 0.84990764,
                rotation: [1.0344028, -0.19919053, -0.10477345, -0.014542822],
                scale: [-3.8865843, -5.659209, -4.7688828],
                f_dc: [1.1078603, 0.76136017, 0.06554606],
                f_rest: Some([
                    -0.0057055317,
                    -0.016852863,
                    0.006827223,
                    0.011458171,
                    0.024590509,
                    0.028849693,
                ]),
            },
            Spot {
                index: 2,
                position: [-2.7480826, -1.0123506, -1.3970541],
                opacity: -1.8340071,
                rotation: [0.5267736, -0.1882949, -0.43221036, -0.03793568],
                scale: [-5.6808167, -4.8350945, -3.1652412],
                f_dc: [0.0023806388, 0.4387073, -0.36169815],
                f_rest: Some([
                    0.013920748,
                    -0.006754283,
                    0.040439546,
                    0.002646055,
                    0.008141398,
                    -0.021842895,
                ]),
            },
        ],
    },
    Expected {
        file: "degenerate_lod_tile_sh3.ply",
        count: 14_051,
        sh_degree: 3,
        spots: [
            Spot {
                index: 0,
                position: [0.08374715, 2.9444208, 1.772595],
                opacity: 3.472221,
                rotation: [1.3402297, 0.7455077, 0.03655842, 0.6321642],
                scale: [-2.9916525, -2.663227, -14.177204],
                f_dc: [-0.83693206, -0.7823149, -1.4006985],
                f_rest: Some([0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
            },
            Spot {
                index: 14050,
                position: [3.4255412, 3.7725239, 1.8126929],
                opacity: -1.5065289,
                rotation: [-0.22597708, 1.0007694, 0.7197584, 0.24325961],
                scale: [-3.4579563, -4.6361933, -12.703611],
                f_dc: [1.8122933, 2.3167915, 1.4308033],
                f_rest: Some([0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
            },
        ],
    },
    Expected {
        file: "guitar_sh0.ply",
        count: 74_000,
        sh_degree: 0,
        spots: [
            Spot {
                index: 0,
                position: [-0.47249085, -4.0782046, -0.1663459],
                opacity: 0.7646061,
                rotation: [0.79510754, 0.57715946, -0.046311002, -0.18040554],
                scale: [-8.798642, -5.232893, -5.7257104],
                f_dc: [0.1326713, -0.8460118, -1.5064528],
                f_rest: None,
            },
            Spot {
                index: 73999,
                position: [0.45539293, -0.64157534, 0.75380474],
                opacity: -2.1756256,
                rotation: [0.62830895, 0.7114119, -0.21773082, -0.22740775],
                scale: [-11.707035, -3.7807283, -5.108385],
                f_dc: [-0.90817237, -1.0647291, -1.0610977],
                f_rest: None,
            },
        ],
    },
    Expected {
        file: "biker_sh0.ply",
        count: 152_746,
        sh_degree: 0,
        spots: [
            Spot {
                index: 0,
                position: [-0.1045368, -2.3878982, -0.360811],
                opacity: -2.5776885,
                rotation: [0.46103638, -0.062900014, 0.8848552, 0.022809897],
                scale: [-6.068917, -4.2065425, -7.050748],
                f_dc: [0.5478685, 0.5222843, 0.5681518],
                f_rest: None,
            },
            Spot {
                index: 152745,
                position: [0.16716531, -0.60306394, 0.32881942],
                opacity: -2.8457396,
                rotation: [0.99819165, 0.04078133, -0.04216375, 0.013132971],
                scale: [-5.775186, -4.842164, -7.638393],
                f_dc: [1.1197553, 1.097435, 1.0597507],
                f_rest: None,
            },
        ],
    },
    Expected {
        file: "seal_sh0.ply",
        count: 101_780,
        sh_degree: 0,
        spots: [
            Spot {
                index: 0,
                position: [0.3103808, 0.6451687, 0.05178263],
                opacity: 2.5193927,
                rotation: [0.8589295, 0.46069854, -0.0468507, -0.2186366],
                scale: [-0.96609646, -2.1996605, -2.3119144],
                f_dc: [0.6881291, 0.85494834, 0.8966531],
                f_rest: None,
            },
            Spot {
                index: 101779,
                position: [0.6425935, 0.43194073, 0.7658596],
                opacity: -4.1391587,
                rotation: [0.9739208, 0.0, -0.062330935, -0.21815827],
                scale: [-7.8050137, -7.9261804, -7.630638],
                f_dc: [0.46570355, 0.38229397, 0.32668757],
                f_rest: None,
            },
        ],
    },
    Expected {
        file: "donut_sh0.ply",
        count: 45_624,
        sh_degree: 0,
        spots: [
            Spot {
                index: 0,
                position: [0.018263085, 0.090465255, 0.040593795],
                opacity: 6.0683856,
                rotation: [0.7263772, 0.24716961, -0.13596949, 0.25336385],
                scale: [-4.831232, -5.1504354, -5.855655],
                f_dc: [0.1274911, 1.3836876, -0.37183052],
                f_rest: None,
            },
            Spot {
                index: 45623,
                position: [-0.0680541, -0.026360484, 0.0017310565],
                opacity: 0.6293661,
                rotation: [1.0095419, -0.15441997, 0.11430894, -0.55333185],
                scale: [-5.6617756, -6.2961235, -8.5273485],
                f_dc: [0.9670575, 0.77237993, 0.27136263],
                f_rest: None,
            },
        ],
    },
];

#[test]
fn real_files_load_with_their_values() {
    for e in &EXPECTED {
        let s = load(e.file);
        assert_eq!(s.len(), e.count, "{}", e.file);
        assert_eq!(s.sh_degree, e.sh_degree, "{}", e.file);
        assert_eq!(s.sh.len(), e.count * s.sh_stride(), "{}", e.file);
        assert_eq!(s.non_finite, 0, "{}", e.file);
        for spot in &e.spots {
            let g = s.geometry[spot.index];
            let expected = SplatGeometry {
                position: spot.position,
                opacity_logit: spot.opacity,
                rotation: spot.rotation,
                log_scale: spot.scale,
                _pad: 0.0,
            };
            assert_eq!(g, expected, "{} splat {}", e.file, spot.index);
            let sh = &s.sh[spot.index * s.sh_stride()..][..s.sh_stride()];
            assert_eq!(sh[..3], spot.f_dc, "{} splat {}", e.file, spot.index);
            if let Some(rest) = spot.f_rest {
                // Channel-major in the file, coefficient-major decoded: f_rest_0 is
                // R of coefficient 1, f_rest_15 G of it, f_rest_30 B; 14/29/44 are the
                // same channels of coefficient 15.
                let decoded = [sh[3], sh[45], sh[4], sh[46], sh[5], sh[47]];
                assert_eq!(decoded, rest, "{} splat {}", e.file, spot.index);
            }
        }
    }
}

#[test]
fn sh_stride_follows_degree() {
    assert_eq!(load("angel_sh0.ply").sh_stride(), 3);
    assert_eq!(load("train_3pts_sh3.ply").sh_stride(), 48);
    assert!(!load("train_3pts_sh3.ply").is_empty());
}

// ---------------------------------------------------------------------------------
// A small PLY writer, independent of the decoder, for the encoding round trips.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Encoding {
    Ascii,
    LittleEndian,
    BigEndian,
}

/// The vertex properties of one splat in the standard Inria order (f_rest
/// channel-major), plus two extra ones the decoder must ignore.
fn vertex_values(g: &SplatGeometry, sh: &[f32]) -> Vec<(String, f32)> {
    let mut v = Vec::new();
    let mut put = |name: &str, value: f32| v.push((name.to_string(), value));
    for (axis, value) in ["x", "y", "z"].iter().zip(g.position) {
        put(axis, value);
    }
    put("nx", 0.25);
    for (c, &value) in sh[..3].iter().enumerate() {
        put(&format!("f_dc_{c}"), value);
    }
    let per_channel = sh.len() / 3 - 1;
    for j in 0..3 * per_channel {
        put(
            &format!("f_rest_{j}"),
            sh[3 * (1 + j % per_channel) + j / per_channel],
        );
    }
    put("opacity", g.opacity_logit);
    for k in 0..3 {
        put(&format!("scale_{k}"), g.log_scale[k]);
    }
    for k in 0..4 {
        put(&format!("rot_{k}"), g.rotation[k]);
    }
    put("flags", 7.0);
    v
}

/// A cheap, fixed hash (FNV-1a) to shuffle property order and pick types.
fn hash(name: &str) -> u32 {
    name.bytes().fold(2_166_136_261u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(16_777_619)
    })
}

/// Type of a property in the written file: some doubles, some aliases, an uchar extra.
fn type_of(name: &str) -> &'static str {
    match (name, hash(name) % 6) {
        ("flags", _) => "uchar",
        (_, 0) => "double",
        (_, 1) => "float64",
        (_, 2) => "float32",
        _ => "float",
    }
}

/// Appends records in one encoding.
struct Body {
    encoding: Encoding,
    bytes: Vec<u8>,
    line: Vec<String>,
}

impl Body {
    fn value(&mut self, ty: &str, v: f64) {
        let big = self.encoding == Encoding::BigEndian;
        macro_rules! put {
            ($v:expr) => {
                self.bytes.extend(if big {
                    $v.to_be_bytes()
                } else {
                    $v.to_le_bytes()
                })
            };
        }
        match (self.encoding, ty) {
            (Encoding::Ascii, "float" | "float32") => self.line.push((v as f32).to_string()),
            (Encoding::Ascii, "double" | "float64") => self.line.push(v.to_string()),
            (Encoding::Ascii, _) => self.line.push((v as i64).to_string()),
            (_, "float" | "float32") => put!(v as f32),
            (_, "double" | "float64") => put!(v),
            (_, "uchar") => put!(v as u8),
            (_, "int") => put!(v as i32),
            (_, "uint") => put!(v as u32),
            _ => panic!("type {ty}"),
        }
    }

    fn end_record(&mut self) {
        if self.encoding == Encoding::Ascii {
            self.bytes.extend(self.line.join(" ").into_bytes());
            self.bytes.push(b'\n');
            self.line.clear();
        }
    }
}

/// Writes `s` as a PLY with shuffled vertex properties, some of them doubles, and an
/// element with list properties before and after `vertex`.
fn write_ply(s: &DecodedSplats, encoding: Encoding) -> Vec<u8> {
    let stride = s.sh_stride();
    let template = vertex_values(&bytemuck::Zeroable::zeroed(), &vec![0.0; stride]);
    let mut order: Vec<String> = template.into_iter().map(|(name, _)| name).collect();
    order.sort_by_key(|name| hash(name));

    let format = match encoding {
        Encoding::Ascii => "ascii",
        Encoding::LittleEndian => "binary_little_endian",
        Encoding::BigEndian => "binary_big_endian",
    };
    let mut header = format!(
        "ply\nformat {format} 1.0\ncomment written by tests/ply_loader.rs\n\
         element camera 2\nproperty list uchar int indices\nproperty float fov\n\
         element vertex {}\n",
        s.len()
    );
    for name in &order {
        header += &format!("property {} {name}\n", type_of(name));
    }
    header += "element face 1\nproperty list uchar uint vertex_indices\nend_header\n";
    let mut body = Body {
        encoding,
        bytes: header.into_bytes(),
        line: Vec::new(),
    };

    // camera: a list of three and an empty list
    for (list, fov) in [(&[1.0, 2.0, 3.0][..], 0.5), (&[], 0.25)] {
        body.value("uchar", list.len() as f64);
        for &index in list {
            body.value("int", index);
        }
        body.value("float", fov);
        body.end_record();
    }
    for i in 0..s.len() {
        let values: std::collections::HashMap<String, f32> =
            vertex_values(&s.geometry[i], &s.sh[i * stride..][..stride])
                .into_iter()
                .collect();
        for name in &order {
            body.value(type_of(name), f64::from(values[name]));
        }
        body.end_record();
    }
    // face
    body.value("uchar", 3.0);
    for index in [0.0, 1.0, 2.0] {
        body.value("uint", index);
    }
    body.end_record();
    body.bytes
}

/// The first `n` splats of `s`, with SH cut to `degree`.
fn subset(s: &DecodedSplats, n: usize, degree: u8) -> DecodedSplats {
    let stride = s.sh_stride();
    let new_stride = 3 * (usize::from(degree) + 1).pow(2);
    DecodedSplats {
        geometry: s.geometry[..n].to_vec(),
        sh_degree: degree,
        sh: (0..n)
            .flat_map(|i| s.sh[i * stride..][..new_stride].to_vec())
            .collect(),
        non_finite: 0,
    }
}

fn assert_round_trips(s: &DecodedSplats, what: &str) {
    for encoding in [Encoding::Ascii, Encoding::LittleEndian, Encoding::BigEndian] {
        let file = write_ply(s, encoding);
        let decoded = decode(&file).unwrap_or_else(|e| panic!("{what} {encoding:?}: {e}"));
        assert_eq!(&decoded, s, "{what} as {encoding:?}");
    }
}

#[test]
fn three_encodings_decode_identically() {
    assert_round_trips(&load("train_3pts_sh3.ply"), "train");
    let fruit = load("fruit_drops_sh3.ply");
    for degree in 0..=3 {
        assert_round_trips(
            &subset(&fruit, 200, degree),
            &format!("fruit degree {degree}"),
        );
    }
    assert_round_trips(&subset(&load("angel_sh0.ply"), 500, 0), "angel");
    assert_round_trips(&subset(&fruit, 0, 3), "no splats");
}

#[test]
fn crlf_header_comments_and_integer_types() {
    let file = b"ply\r\nformat ascii 1.0\r\ncomment hi\r\nobj_info made by hand\r\n\
        element vertex 2\r\nproperty short x\r\nproperty ushort y\r\nproperty int z\r\n\
        property uint opacity\r\nproperty char rot_0\r\nproperty uchar rot_1\r\n\
        property int8 rot_2\r\nproperty uint8 rot_3\r\nproperty int16 scale_0\r\n\
        property uint16 scale_1\r\nproperty int32 scale_2\r\nproperty uint32 f_dc_0\r\n\
        property float32 f_dc_1\r\nproperty float64 f_dc_2\r\nend_header\r\n\
        -3 4 -5 6 -7 8 -9 10 -11 12 -13 14 1.5 2.25\r\n\r\n\
        1 2 3 4 5 6 7 8 9 10 11 12 13 14\r\n";
    let s = decode(file).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s.geometry[0].position, [-3.0, 4.0, -5.0]);
    assert_eq!(s.geometry[0].opacity_logit, 6.0);
    assert_eq!(s.geometry[0].rotation, [-7.0, 8.0, -9.0, 10.0]);
    assert_eq!(s.geometry[0].log_scale, [-11.0, 12.0, -13.0]);
    assert_eq!(s.sh[..3], [14.0, 1.5, 2.25]);
    assert_eq!(s.sh[3..], [12.0, 13.0, 14.0]);

    // The same as binary, big-endian, integer types converted.
    let mut file = b"ply\r\nformat binary_big_endian 1.0\r\nelement vertex 1\r\n\
        property short x\r\nproperty ushort y\r\nproperty int z\r\nproperty uint opacity\r\n\
        property char rot_0\r\nproperty uchar rot_1\r\nproperty char rot_2\r\n\
        property uchar rot_3\r\nproperty short scale_0\r\nproperty ushort scale_1\r\n\
        property int scale_2\r\nproperty uint f_dc_0\r\nproperty float f_dc_1\r\n\
        property double f_dc_2\r\nend_header\r\n"
        .to_vec();
    file.extend((-3i16).to_be_bytes());
    file.extend(4u16.to_be_bytes());
    file.extend((-5i32).to_be_bytes());
    file.extend(6u32.to_be_bytes());
    file.extend([(-7i8) as u8, 8, (-9i8) as u8, 10]);
    file.extend((-11i16).to_be_bytes());
    file.extend(12u16.to_be_bytes());
    file.extend((-13i32).to_be_bytes());
    file.extend(14u32.to_be_bytes());
    file.extend(1.5f32.to_be_bytes());
    file.extend(2.25f64.to_be_bytes());
    assert_eq!(decode(&file).unwrap(), subset(&s, 1, 0));
}

#[test]
fn header_edge_cases() {
    // No vertices, and `end_header` as the very last bytes.
    let file = b"ply\nformat binary_little_endian 1.0\nelement vertex 0\n\
        property float x\nproperty float y\nproperty float z\nproperty float f_dc_0\n\
        property float f_dc_1\nproperty float f_dc_2\nproperty float opacity\n\
        property float scale_0\nproperty float scale_1\nproperty float scale_2\n\
        property float rot_0\nproperty float rot_1\nproperty float rot_2\n\
        property float rot_3\nend_header";
    let s = decode(file).unwrap();
    assert!(s.is_empty());
    assert_eq!((s.sh_degree, s.non_finite, s.sh.len()), (0, 0, 0));

    // `end_header` inside a comment does not end the header; bytes after the vertex
    // records are ignored.
    let mut file = b"ply\nformat binary_little_endian 1.0\ncomment end_header\n".to_vec();
    file.extend(&data("train_3pts_sh3.ply")[b"ply\nformat binary_little_endian 1.0\n".len()..]);
    file.extend(b"trailing junk");
    assert_eq!(decode(&file).unwrap(), load("train_3pts_sh3.ply"));
}

// ---------------------------------------------------------------------------------
// Malformed input: each case gives its own error variant and says what is wrong.

const SPLAT_PROPS: [&str; 14] = [
    "x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2",
    "rot_0", "rot_1", "rot_2", "rot_3",
];

/// A header with `count` vertices of the given properties (all `float`).
fn header(format: &str, count: &str, props: &[String]) -> Vec<u8> {
    let mut h = format!("ply\nformat {format} 1.0\nelement vertex {count}\n");
    for p in props {
        h += &format!("property float {p}\n");
    }
    h += "end_header\n";
    h.into_bytes()
}

fn props(rest: usize) -> Vec<String> {
    let mut p: Vec<String> = SPLAT_PROPS.iter().map(|s| s.to_string()).collect();
    p.extend((0..rest).map(|j| format!("f_rest_{j}")));
    p
}

fn without(name: &str) -> Vec<String> {
    props(0).into_iter().filter(|p| p != name).collect()
}

fn binary(count: &str, props: &[String], records: usize) -> Vec<u8> {
    let mut f = header("binary_little_endian", count, props);
    f.resize(f.len() + records * 4 * props.len(), 0);
    f
}

fn ascii(count: &str, lines: &[&str]) -> Vec<u8> {
    let mut f = header("ascii", count, &props(0));
    for l in lines {
        f.extend(l.as_bytes());
        f.push(b'\n');
    }
    f
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// `file` with the first `from` in it replaced by `to`.
fn edit(file: Vec<u8>, from: &str, to: &str) -> Vec<u8> {
    let text = String::from_utf8(file).unwrap();
    assert!(text.contains(from), "{from:?}");
    text.replacen(from, to, 1).into_bytes()
}

const FOURTEEN: &str = "1 2 3 4 5 6 7 8 9 10 11 12 13 14";
/// Long enough that two lines could hold three vertices of short values.
const LONG_FOURTEEN: &str = "1.0000 2.0000 3.0000 4.0000 5.0000 6.0000 7.0000 \
    8.0000 9.0000 10.0000 11.0000 12.0000 13.0000 14.0000";

type Case = (&'static str, Vec<u8>, fn(&PlyError) -> bool, &'static str);

macro_rules! case {
    ($label:expr, $input:expr, $pattern:pat $(if $guard:expr)?, $message:expr) => {
        (
            $label,
            $input,
            (|e: &PlyError| matches!(e, $pattern $(if $guard)?)) as fn(&PlyError) -> bool,
            $message,
        )
    };
}

fn malformed_cases() -> Vec<Case> {
    let mut cases = vec![
        case!("empty file", vec![], PlyError::Empty, "empty file"),
        case!(
            "not PLY",
            b"PK\x03\x04 a zip file".to_vec(),
            PlyError::NotPly,
            "not a PLY file"
        ),
        case!(
            "truncated header",
            edit(header("ascii", "1", &props(0)), "end_header\n", ""),
            PlyError::UnterminatedHeader,
            "no `end_header`"
        ),
        case!(
            "bad format line",
            header("binary_middle_endian", "1", &props(0)),
            PlyError::UnsupportedFormat(f) if f == "binary_middle_endian 1.0",
            "unsupported format `binary_middle_endian 1.0`"
        ),
        case!(
            "no format line",
            b"ply\nelement vertex 0\nproperty float x\nend_header\n".to_vec(),
            PlyError::InvalidHeader(_),
            "invalid PLY header: No format line found"
        ),
        case!(
            "unparsable header line",
            b"ply\nformat ascii 1.0\nproperty float\nend_header\n".to_vec(),
            PlyError::InvalidHeader(_),
            "invalid PLY header: Line 3: Couldn't parse line"
        ),
        case!(
            "property before any element",
            b"ply\nformat ascii 1.0\nproperty float x\nend_header\n".to_vec(),
            PlyError::InvalidHeader(_),
            "without preceding element"
        ),
        case!(
            "count beyond u64",
            header("ascii", "99999999999999999999", &props(0)),
            PlyError::InvalidHeader(_),
            "Invalid element"
        ),
        case!(
            "header not UTF-8",
            b"ply\nformat ascii 1.0\ncomment \xff\xfe\nend_header\n".to_vec(),
            PlyError::InvalidHeader(_),
            "invalid PLY header"
        ),
        case!(
            "no vertex element",
            b"ply\nformat ascii 1.0\nelement face 0\nproperty float x\nend_header\n".to_vec(),
            PlyError::NoVertexElement,
            "no vertex element"
        ),
        case!(
            "f_rest count 30",
            binary("1", &props(30), 1),
            PlyError::UnsupportedFRest(30),
            "unsupported f_rest count 30"
        ),
        case!(
            "f_rest with a gap",
            binary(
                "1",
                &props(9)
                    .into_iter()
                    .map(|p| if p == "f_rest_5" { "f_rest_x".into() } else { p })
                    .collect::<Vec<_>>(),
                1
            ),
            PlyError::MissingProperty(p) if p == "f_rest_5",
            "missing property f_rest_5"
        ),
        case!(
            "list property in vertex",
            cat(&[
                b"ply\nformat binary_little_endian 1.0\nelement vertex 1\n",
                b"property list uchar float x\nend_header\n",
            ]),
            PlyError::ListProperty(p) if p == "x",
            "property x has list type"
        ),
        case!(
            "ignored list property in vertex",
            edit(
                header("binary_little_endian", "1", &props(0)),
                "property float x\n",
                "property float x\nproperty list uchar int nx\n"
            ),
            PlyError::ListProperty(p) if p == "nx",
            "property nx has list type"
        ),
        case!(
            "duplicate property",
            binary("1", &[props(0), vec!["x".into()]].concat(), 1),
            PlyError::DuplicateProperty { element, property } if element == "vertex" && property == "x",
            "duplicate property x in element vertex"
        ),
        case!(
            "duplicate element",
            cat(&[
                b"ply\nformat ascii 1.0\nelement face 0\nelement vertex 0\n",
                b"element face 0\nproperty float x\nend_header\n",
            ]),
            PlyError::DuplicateElement(e) if e == "face",
            "duplicate element face"
        ),
        case!(
            "body truncated at vertex 3",
            binary("5", &props(0), 5)[..header("binary_little_endian", "5", &props(0)).len() + 3 * 56 + 30].to_vec(),
            PlyError::Truncated { element, at: 3, count: 5 } if element == "vertex",
            "body truncated at vertex 3 of 5"
        ),
        case!(
            "huge vertex count, binary",
            binary("4000000000", &props(0), 2),
            PlyError::TooManyVertices {
                declared: 4_000_000_000,
                ..
            },
            "header declares 4000000000 vertices but the file holds at most"
        ),
        case!(
            "huge vertex count, ASCII",
            ascii("4000000000", &[FOURTEEN, FOURTEEN]),
            PlyError::TooManyVertices {
                declared: 4_000_000_000,
                max: 2
            },
            "header declares 4000000000 vertices but the file holds at most 2"
        ),
        case!(
            "ASCII non-numeric token",
            ascii("2", &[FOURTEEN, "1 2 3 4 5 6 abc 8 9 10 11 12 13 14"]),
            PlyError::AsciiNumber { line: 20, property, .. } if property == "opacity",
            "line 20: cannot parse `abc` as a number (property opacity)"
        ),
        case!(
            "ASCII too few tokens",
            ascii("2", &[FOURTEEN, "1 2 3 4 5 6 7 8 9 10 11 12 13"]),
            PlyError::AsciiValueCount {
                line: 20,
                vertex: 1,
                found: 13,
                expected: 14
            },
            "line 20: vertex 1 has 13 values, expected 14"
        ),
        case!(
            "ASCII too many tokens",
            ascii("1", &["1 2 3 4 5 6 7 8 9 10 11 12 13 14 15"]),
            PlyError::AsciiValueCount { found: 15, .. },
            "has 15 values, expected 14"
        ),
        case!(
            "ASCII too few lines",
            ascii("3", &[LONG_FOURTEEN, LONG_FOURTEEN]),
            PlyError::Truncated {
                at: 2,
                count: 3,
                ..
            },
            "body truncated at vertex 2 of 3"
        ),
        case!(
            "binary element before vertex truncated",
            cat(&[
                b"ply\nformat binary_little_endian 1.0\nelement face 3\n",
                b"property list uchar int idx\n",
                &header("binary_little_endian", "0", &props(0))[36..],
                &[2, 1, 0, 0, 0, 2, 0, 0, 0, 3, 1, 0, 0, 0],
            ]),
            PlyError::Truncated { element, at: 1, count: 3 } if element == "face",
            "body truncated at face 1 of 3"
        ),
        case!(
            "binary scalar element before vertex overflows",
            cat(&[
                b"ply\nformat binary_little_endian 1.0\nelement face 4611686018427387904\n",
                b"property double a\n",
                &header("binary_little_endian", "0", &props(0))[36..],
            ]),
            PlyError::Truncated { element, at: 0, .. } if element == "face",
            "body truncated at face 0 of 4611686018427387904"
        ),
        case!(
            "ASCII element before vertex truncated",
            cat(&[
                b"ply\nformat ascii 1.0\nelement face 3\nproperty list uchar int idx\n",
                &header("ascii", "0", &props(0))[21..],
                b"2 1 2\n",
            ]),
            PlyError::Truncated { element, at: 1, count: 3 } if element == "face",
            "body truncated at face 1 of 3"
        ),
        case!(
            "negative list length",
            cat(&[
                b"ply\nformat binary_little_endian 1.0\nelement face 1\n",
                b"property list char int idx\n",
                &header("binary_little_endian", "0", &props(0))[36..],
                &[0xff],
            ]),
            PlyError::NegativeListLength {
                index: 0,
                length: -1,
                ..
            },
            "element face record 0: negative list length -1"
        ),
        case!(
            "float list count",
            cat(&[
                b"ply\nformat binary_little_endian 1.0\nelement face 1\n",
                b"property list float int idx\n",
                &header("binary_little_endian", "0", &props(0))[36..],
                &[0, 0, 0, 0],
            ]),
            PlyError::ListCountType {
                count_type: "float",
                ..
            },
            "element face: list property idx has non-integer count type float"
        ),
    ];
    for name in SPLAT_PROPS {
        cases.push(case!(
            "missing property",
            binary("1", &without(name), 1),
            PlyError::MissingProperty(_),
            "missing property"
        ));
        let last = cases.last_mut().unwrap();
        assert!(matches!(decode(&last.1), Err(PlyError::MissingProperty(p)) if p == name));
        assert_eq!(
            decode(&last.1).unwrap_err().to_string(),
            format!("missing property {name}")
        );
    }
    cases
}

#[test]
fn malformed_inputs_give_specific_errors() {
    for (label, input, is_expected, message) in malformed_cases() {
        let error = match decode(&input) {
            Ok(s) => panic!("{label}: decoded {} splats", s.len()),
            Err(e) => e,
        };
        assert!(is_expected(&error), "{label}: wrong variant {error:?}");
        let text = error.to_string();
        assert!(
            text.contains(message),
            "{label}: message {text:?} lacks {message:?}"
        );
    }
}

#[test]
fn every_truncation_of_a_real_file_is_an_error() {
    let file = data("train_3pts_sh3.ply");
    for len in 0..file.len() {
        assert!(decode(&file[..len]).is_err(), "length {len}");
    }
}

// ---------------------------------------------------------------------------------
// NaN and infinity load and are counted.

#[test]
fn non_finite_values_load_and_are_counted() {
    let mut s = subset(&load("train_3pts_sh3.ply"), 3, 3);
    s.geometry.extend(s.geometry.clone());
    s.sh.extend(s.sh.clone());
    s.geometry[0].position[1] = f32::NAN;
    s.geometry[2].log_scale[2] = f32::NEG_INFINITY;
    s.sh[4 * 48 + 47] = f32::INFINITY; // last f_rest of splat 4
    s.geometry[5].opacity_logit = f32::NAN;
    s.sh[5 * 48] = f32::INFINITY;
    for encoding in [Encoding::Ascii, Encoding::LittleEndian, Encoding::BigEndian] {
        let d = decode(&write_ply(&s, encoding)).unwrap();
        assert_eq!(d.non_finite, 4, "{encoding:?}");
        assert!(d.geometry[0].position[1].is_nan());
        assert_eq!(d.geometry[2].log_scale[2], f32::NEG_INFINITY);
        assert_eq!(d.sh[4 * 48 + 47], f32::INFINITY);
        assert_eq!(d.geometry[1], s.geometry[1]);
    }

    // A double too large for f32 becomes infinite, and counts.
    let mut file = header("binary_little_endian", "1", &props(0));
    let text = String::from_utf8(file.clone()).unwrap();
    file = text.replace("float opacity", "double opacity").into_bytes();
    for p in props(0) {
        if p == "opacity" {
            file.extend(1e300f64.to_le_bytes());
        } else {
            file.extend(1f32.to_le_bytes());
        }
    }
    let d = decode(&file).unwrap();
    assert_eq!(
        (d.non_finite, d.geometry[0].opacity_logit),
        (1, f32::INFINITY)
    );

    // ASCII spellings.
    let d = decode(&ascii(
        "2",
        &[FOURTEEN, "nan 2 3 4 5 6 inf 8 9 -Infinity 11 12 13 14"],
    ))
    .unwrap();
    assert_eq!(d.non_finite, 1);
    assert!(d.geometry[1].position[0].is_nan());
    assert_eq!(d.geometry[1].opacity_logit, f32::INFINITY);
}

// ---------------------------------------------------------------------------------
// Regressions found by fuzzing: none so far (fuzz/README.md says how to run it).

/// The plugin in an app without a renderer (a server, an asset tool): the PLY loads as
/// an asset through the asset server, and clouds spawn and despawn as plain entities.
#[test]
fn the_plugin_loads_clouds_without_a_renderer() {
    use bevy::prelude::*;
    use bevy_splat::{GaussianCloud, GaussianSplatPlugin, GaussianSplats};

    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data").into(),
            ..default()
        },
        TransformPlugin,
        GaussianSplatPlugin,
    ));
    let handle: Handle<GaussianSplats> = app
        .world()
        .resource::<AssetServer>()
        .load("train_3pts_sh3.ply");
    let entity = app.world_mut().spawn(GaussianCloud(handle.clone())).id();
    for _ in 0..200 {
        app.update();
        if app
            .world()
            .resource::<Assets<GaussianSplats>>()
            .contains(&handle)
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let splats = app
        .world()
        .resource::<Assets<GaussianSplats>>()
        .get(&handle)
        .map(|s| (s.len(), s.sh_degree()));
    assert_eq!(splats, Some((3, 3)));
    app.world_mut().despawn(entity);
    app.update();
}
