//! The three encodings of the same splats, through a small PLY writer independent of
//! the decoder, and header edge cases.

use bevy_splat::asset::formats::ply::decode;
use bevy_splat::asset::{DecodedSplats, SplatGeometry};

use super::{data, load};

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Encoding {
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
pub(super) fn write_ply(s: &DecodedSplats, encoding: Encoding) -> Vec<u8> {
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
pub(super) fn subset(s: &DecodedSplats, n: usize, degree: u8) -> DecodedSplats {
    let stride = s.sh_stride();
    let new_stride = 3 * (usize::from(degree) + 1).pow(2);
    DecodedSplats {
        geometry: s.geometry[..n].to_vec(),
        sh_degree: degree,
        sh: (0..n)
            .flat_map(|i| s.sh[i * stride..][..new_stride].to_vec())
            .collect(),
        non_finite: 0,
        antialiased: false,
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
