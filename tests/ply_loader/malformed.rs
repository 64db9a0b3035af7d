//! Malformed input: each case gives its own error variant and says what is wrong;
//! NaN and infinity load and are counted.

use bevy_splat::asset::formats::ply::{PlyError, decode};

use super::encodings::{Encoding, subset, write_ply};
use super::{data, load};

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
