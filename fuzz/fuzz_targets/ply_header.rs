//! Structure-aware: builds near-valid 3DGS headers (wrong and huge counts, odd and
//! aliased types, duplicated, missing and shuffled properties, list properties, extra
//! elements, comments, CRLF line endings) and follows them with a random body.
#![no_main]

use bevy_splat_fuzz::asset::formats::ply;

use libfuzzer_sys::arbitrary::{Result, Unstructured};

const SPLAT: [&str; 14] = [
    "x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2",
    "rot_0", "rot_1", "rot_2", "rot_3",
];
const TYPES: [&str; 18] = [
    "char", "int8", "uchar", "uint8", "short", "int16", "ushort", "uint16", "int", "int32", "uint",
    "uint32", "float", "float32", "double", "float64", "half", "int64",
];
const FORMATS: [&str; 8] = [
    "ascii 1.0",
    "binary_little_endian 1.0",
    "binary_big_endian 1.0",
    "binary_little_endian 1.0",
    "ascii 1.0",
    "binary_middle_endian 1.0",
    "ascii 2.0",
    "binary_big_endian 99999999999.0",
];

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(file) = build(&mut Unstructured::new(data)) else {
        return;
    };
    if let Ok(splats) = ply::decode(&file) {
        assert_eq!(splats.sh.len(), splats.len() * splats.sh_stride());
        assert!(splats.non_finite <= splats.len());
    }
});

fn build(u: &mut Unstructured) -> Result<Vec<u8>> {
    let crlf = u.ratio(1, 4)?;
    let mut lines = vec!["ply".to_string()];
    let format = *u.choose(&FORMATS)?;
    let ascii = format.starts_with("ascii");
    if u.ratio(15, 16)? {
        lines.push(format!("format {format}"));
    }
    comments(u, &mut lines)?;
    for _ in 0..u.int_in_range(0..=2)? {
        other_element(u, &mut lines)?;
    }
    let vertex_props = vertex_element(u, &mut lines)?;
    for _ in 0..u.int_in_range(0..=1)? {
        other_element(u, &mut lines)?;
    }
    comments(u, &mut lines)?;
    lines.push("end_header".to_string());

    let mut file = Vec::new();
    for line in &lines {
        file.extend_from_slice(line.as_bytes());
        let ending = if crlf || u.ratio(1, 64)? {
            "\r\n"
        } else {
            "\n"
        };
        file.extend_from_slice(ending.as_bytes());
    }
    if ascii {
        ascii_body(u, vertex_props, &mut file)?;
    }
    let rest = u.len();
    file.extend_from_slice(u.bytes(rest)?);
    Ok(file)
}

fn comments(u: &mut Unstructured, lines: &mut Vec<String>) -> Result<()> {
    for _ in 0..u.int_in_range(0..=2)? {
        let kind = *u.choose(&[
            "comment",
            "obj_info",
            "comment end_header",
            "comment element",
        ])?;
        lines.push(format!("{kind} made by the fuzzer"));
    }
    Ok(())
}

fn count(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0..=11)? {
        0..=7 => u.int_in_range(0u64..=4)?.to_string(),
        8 => u.int_in_range(0u64..=300)?.to_string(),
        9 => u
            .choose(&[
                4_000_000_000u64,
                1 << 32,
                1 << 40,
                1 << 62,
                u64::MAX / 8,
                u64::MAX,
            ])?
            .to_string(),
        10 => "18446744073709551616".to_string(),
        _ => u.arbitrary::<u64>()?.to_string(),
    })
}

fn scalar_type(u: &mut Unstructured) -> Result<&'static str> {
    if u.ratio(3, 4)? {
        Ok("float")
    } else {
        Ok(*u.choose(&TYPES)?)
    }
}

fn property(u: &mut Unstructured, name: &str, list_odds: u8) -> Result<String> {
    Ok(if u.ratio(1, list_odds)? {
        let count_type = scalar_type(u)?;
        format!("property list {count_type} {} {name}", scalar_type(u)?)
    } else {
        format!("property {} {name}", scalar_type(u)?)
    })
}

fn other_element(u: &mut Unstructured, lines: &mut Vec<String>) -> Result<()> {
    let name = *u.choose(&["face", "camera", "edge", "vertex", "material"])?;
    lines.push(format!("element {name} {}", count(u)?));
    for i in 0..u.int_in_range(0..=3)? {
        let prop = property(u, &format!("p{i}"), 2)?;
        lines.push(prop);
    }
    Ok(())
}

/// Declares the vertex element; returns how many properties it has.
fn vertex_element(u: &mut Unstructured, lines: &mut Vec<String>) -> Result<usize> {
    let mut names: Vec<String> = SPLAT.iter().map(|s| s.to_string()).collect();
    let rest = *u.choose(&[0usize, 9, 24, 45, 45, 0, 30, 3])?;
    names.extend((0..rest).map(|j| format!("f_rest_{j}")));
    if u.ratio(1, 3)? {
        names.extend(["nx", "ny", "nz"].map(String::from));
    }
    if u.ratio(1, 4)? {
        names.push("transform".to_string());
    }
    for _ in 0..u.int_in_range(0..=2)? {
        let i = u.choose_index(names.len())?;
        match u.int_in_range(0..=2)? {
            0 => drop(names.remove(i)),
            1 => names.push(names[i].clone()),
            _ => names[i] = format!("f_rest_{}", u.int_in_range(0..=60)?),
        }
    }
    if u.ratio(1, 2)? {
        for i in (1..names.len()).rev() {
            let j = u.int_in_range(0..=i)?;
            names.swap(i, j);
        }
    }
    lines.push(format!("element vertex {}", count(u)?));
    for name in &names {
        let prop = property(u, name, 64)?;
        lines.push(prop);
    }
    Ok(names.len())
}

/// A few vertex lines with about the right number of values, some of them odd.
fn ascii_body(u: &mut Unstructured, props: usize, file: &mut Vec<u8>) -> Result<()> {
    for _ in 0..u.int_in_range(0..=6)? {
        let values = match u.int_in_range(0..=7)? {
            0 => props.saturating_sub(1),
            1 => props + 1,
            _ => props,
        };
        let mut line = String::new();
        for _ in 0..values {
            let token = match u.int_in_range(0..=15)? {
                0 => "nan".to_string(),
                1 => "-inf".to_string(),
                2 => "1e40".to_string(),
                3 => "abc".to_string(),
                4 => "".to_string(),
                5 => u.arbitrary::<i64>()?.to_string(),
                _ => u.arbitrary::<f32>()?.to_string(),
            };
            line.push_str(&token);
            line.push(' ');
        }
        line.push_str(if u.ratio(1, 4)? { "\r\n" } else { "\n" });
        file.extend_from_slice(line.as_bytes());
    }
    Ok(())
}
