//! The PLY header: find where it ends, let ply-rs parse it, and turn the result into a
//! plain list of elements in file order.

use std::collections::HashSet;

use ply_rs_bw::parser::Parser;
use ply_rs_bw::ply::{DefaultElement, Encoding as PlyEncoding, PropertyType, ScalarType};

use super::error::PlyError;

/// How the body is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Encoding {
    Ascii,
    BinaryLittleEndian,
    BinaryBigEndian,
}

/// A PLY scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl Scalar {
    /// Bytes it takes in a binary body.
    pub(super) fn size(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::F64 => 8,
        }
    }

    /// The canonical PLY name.
    pub(super) fn name(self) -> &'static str {
        match self {
            Scalar::I8 => "char",
            Scalar::U8 => "uchar",
            Scalar::I16 => "short",
            Scalar::U16 => "ushort",
            Scalar::I32 => "int",
            Scalar::U32 => "uint",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
        }
    }

    fn from_ply(t: &ScalarType) -> Scalar {
        match t {
            ScalarType::Char => Scalar::I8,
            ScalarType::UChar => Scalar::U8,
            ScalarType::Short => Scalar::I16,
            ScalarType::UShort => Scalar::U16,
            ScalarType::Int => Scalar::I32,
            ScalarType::UInt => Scalar::U32,
            ScalarType::Float => Scalar::F32,
            ScalarType::Double => Scalar::F64,
        }
    }
}

/// A property's type: one scalar, or a list with its count type and item type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PropType {
    Scalar(Scalar),
    List { count: Scalar, item: Scalar },
}

#[derive(Clone, Debug)]
pub(super) struct Property {
    pub name: String,
    pub ty: PropType,
}

#[derive(Clone, Debug)]
pub(super) struct Element {
    pub name: String,
    pub count: usize,
    pub properties: Vec<Property>,
}

/// The parsed header and where the body starts.
#[derive(Debug)]
pub(super) struct Header {
    pub encoding: Encoding,
    /// In file order, names unique.
    pub elements: Vec<Element>,
    /// Byte offset of the body (just past the `end_header` line).
    pub body_offset: usize,
    /// Number of lines in the header, so ASCII errors can give file line numbers.
    pub lines: usize,
}

/// Parses the header at the start of `bytes`.
pub(super) fn parse(bytes: &[u8]) -> Result<Header, PlyError> {
    let text = &bytes[..header_len(bytes)?];
    let parsed = Parser::<DefaultElement>::new()
        .read_ply_header(&mut &text[..])
        .map_err(|e| header_error(text, e.line(), e.to_string()))?;
    // ply-rs keeps elements and properties in maps, so a repeated name silently merges
    // two declarations; the body layout would then be wrong. Refuse such headers.
    check_unique_names(text)?;

    let encoding = match parsed.encoding {
        PlyEncoding::Ascii => Encoding::Ascii,
        PlyEncoding::BinaryLittleEndian => Encoding::BinaryLittleEndian,
        PlyEncoding::BinaryBigEndian => Encoding::BinaryBigEndian,
    };
    let elements = parsed
        .elements
        .values()
        .map(|e| Element {
            name: e.name.clone(),
            count: e.count,
            properties: e
                .properties
                .values()
                .map(|p| Property {
                    name: p.name.clone(),
                    ty: match &p.data_type {
                        PropertyType::Scalar(s) => PropType::Scalar(Scalar::from_ply(s)),
                        PropertyType::List(c, i) => PropType::List {
                            count: Scalar::from_ply(c),
                            item: Scalar::from_ply(i),
                        },
                    },
                })
                .collect(),
        })
        .collect();
    Ok(Header {
        encoding,
        elements,
        body_offset: text.len(),
        lines: text.iter().filter(|&&b| b == b'\n').count(),
    })
}

/// Length of the header, up to and including the `end_header` line's line break.
fn header_len(bytes: &[u8]) -> Result<usize, PlyError> {
    if bytes.is_empty() {
        return Err(PlyError::Empty);
    }
    let mut start = 0;
    let mut first = true;
    while start < bytes.len() {
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| start + i + 1);
        let line = trim_line_end(&bytes[start..end]);
        if first && line != b"ply" {
            return Err(PlyError::NotPly);
        }
        if !first && line == b"end_header" {
            return Ok(end);
        }
        first = false;
        start = end;
    }
    Err(PlyError::UnterminatedHeader)
}

fn trim_line_end(mut line: &[u8]) -> &[u8] {
    while let [rest @ .., b' ' | b'\t' | b'\r' | b'\n'] = line {
        line = rest;
    }
    line
}

/// The header's lines as text, split into whitespace-separated words.
fn header_lines(text: &[u8]) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.split(|&b| b == b'\n').enumerate().map(|(i, line)| {
        let words = std::str::from_utf8(line)
            .unwrap_or("")
            .split_ascii_whitespace();
        (i + 1, words.collect())
    })
}

/// Maps a ply-rs error to ours; a `format` line naming an unknown encoding gets its own.
fn header_error(text: &[u8], line: Option<usize>, message: String) -> PlyError {
    let format_words = line.and_then(|n| {
        header_lines(text)
            .find(|(i, _)| *i == n)
            .map(|(_, words)| words)
            .filter(|words| words.first() == Some(&"format"))
    });
    match format_words {
        Some(words)
            if !matches!(
                words.get(1),
                Some(&("ascii" | "binary_little_endian" | "binary_big_endian"))
            ) =>
        {
            PlyError::UnsupportedFormat(words[1..].join(" "))
        }
        _ => PlyError::InvalidHeader(message),
    }
}

/// Element names must be unique, and property names unique within their element.
/// Runs after ply-rs accepted the header, so every line is well formed.
fn check_unique_names(text: &[u8]) -> Result<(), PlyError> {
    let mut elements = HashSet::new();
    let mut properties = HashSet::new();
    let mut element = "";
    for (_, words) in header_lines(text) {
        match words.as_slice() {
            ["element", name, ..] => {
                if !elements.insert(*name) {
                    return Err(PlyError::DuplicateElement(name.to_string()));
                }
                element = name;
                properties.clear();
            }
            ["property", .., name] if !properties.insert(*name) => {
                return Err(PlyError::DuplicateProperty {
                    element: element.to_string(),
                    property: name.to_string(),
                });
            }
            _ => {}
        }
    }
    Ok(())
}
