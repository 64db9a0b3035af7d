//! ASCII bodies: one record per line, values separated by spaces. Blank lines are
//! ignored (so an element without properties takes no lines).

use super::error::PlyError;
use super::header::{Element, Scalar};
use super::layout::VertexLayout;
use super::output::{Output, non_finite};
use crate::asset::decoded::DecodedSplats;

/// Decodes an ASCII body: skips the elements `before` the vertex element, then reads
/// its lines. `header_lines` is the number of lines before the body.
pub(super) fn decode(
    body: &[u8],
    header_lines: usize,
    before: &[Element],
    vertex: &Element,
    layout: &VertexLayout,
) -> Result<DecodedSplats, PlyError> {
    let mut lines = Lines::new(body, header_lines);
    skip_elements(&mut lines, before)?;
    decode_vertices(&mut lines, vertex, layout)
}

/// Skips the records of the elements before `vertex`: one line each.
fn skip_elements(lines: &mut Lines, elements: &[Element]) -> Result<(), PlyError> {
    for element in elements.iter().filter(|e| !e.properties.is_empty()) {
        for at in 0..element.count {
            lines.next().ok_or_else(|| PlyError::Truncated {
                element: element.name.clone(),
                at,
                count: element.count,
            })?;
        }
    }
    Ok(())
}

/// Decodes `vertex.count` vertex lines.
fn decode_vertices(
    lines: &mut Lines,
    vertex: &Element,
    layout: &VertexLayout,
) -> Result<DecodedSplats, PlyError> {
    let expected = layout.columns.len();
    // Each line holds `expected` values of at least one character, each followed by a
    // space or a line break (except the very last): bound the count before allocating.
    let max = (lines.remaining() + 1) / (2 * expected);
    if vertex.count > max {
        return Err(PlyError::TooManyVertices {
            declared: vertex.count,
            max,
        });
    }

    let mut out = Output::zeroed(layout, vertex.count);
    let mut non_finite_count = 0;
    for (index, mut splat) in out.splats().enumerate() {
        let (line, text) = lines.next().ok_or_else(|| PlyError::Truncated {
            element: vertex.name.clone(),
            at: index,
            count: vertex.count,
        })?;
        let mut found = 0;
        let mut bad = false;
        for token in text
            .split(u8::is_ascii_whitespace)
            .filter(|t| !t.is_empty())
        {
            if let Some(column) = layout.columns.get(found)
                && let Some(slot) = column.slot
            {
                let value = parse(token, column.ty).ok_or_else(|| PlyError::AsciiNumber {
                    line,
                    token: shorten(token),
                    property: vertex.properties[found].name.clone(),
                })?;
                bad |= non_finite(value);
                splat.set(slot, value);
            }
            found += 1;
        }
        if found != expected {
            return Err(PlyError::AsciiValueCount {
                line,
                vertex: index,
                found,
                expected,
            });
        }
        non_finite_count += usize::from(bad);
    }
    Ok(out.finish(non_finite_count))
}

/// A value as f32: `float` parses directly (no double rounding), other types via f64,
/// as a binary `double` is narrowed. Accepts `nan`, `inf` and `infinity`.
fn parse(token: &[u8], ty: Scalar) -> Option<f32> {
    let text = std::str::from_utf8(token).ok()?;
    match ty {
        Scalar::F32 => text.parse().ok(),
        _ => text.parse::<f64>().ok().map(|v| v as f32),
    }
}

fn shorten(token: &[u8]) -> String {
    const MAX: usize = 32;
    let text = String::from_utf8_lossy(token);
    if text.chars().count() <= MAX {
        text.into_owned()
    } else {
        text.chars().take(MAX).chain(['…']).collect()
    }
}

/// The non-blank lines of a body, with 1-based file line numbers.
struct Lines<'a> {
    body: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    fn new(body: &'a [u8], header_lines: usize) -> Lines<'a> {
        Lines {
            body,
            pos: 0,
            line: header_lines,
        }
    }

    fn remaining(&self) -> usize {
        self.body.len() - self.pos
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        while self.pos < self.body.len() {
            let rest = &self.body[self.pos..];
            let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            self.pos += (len + 1).min(rest.len());
            self.line += 1;
            let line = &rest[..len];
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Some((self.line, line));
            }
        }
        None
    }
}
