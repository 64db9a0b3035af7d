//! Records to splats: level 0 reads f32 as stored; levels 1 and 2 walk the bucket
//! table, since every centre is an offset from its bucket's.
//!
//! Byte-valued fields (colour, opacity, level 2's SH) go through 256-entry tables, so
//! the only transcendental per splat is the log of its three scales.

use half::f16;

use super::header::{Buckets, Layout, Level, Section};
use super::sh::{RECORD_COMPONENT, byte_table};
use crate::asset::decoded::{
    DecodedSplats, SplatGeometry, f_dc_from_colour, opacity_logit, sh_stride,
};

/// Fixed part of a level-0 record in 4-byte words: centre, scale, rotation
/// (3 + 3 + 4 f32), RGBA.
const LEVEL0_WORDS: usize = 11;
/// Fixed part of a level-1/2 record: centre (3 u16), scale and rotation (7 f16), RGBA.
const HALF_FIXED: usize = 24;

/// A stored scale is linear (the writer already exponentiated the PLY's log). A zero
/// or negative one has no log; it maps, as the glTF decoder's does, to the log of the
/// smallest normal f32 (about −87.3): the splat stays finite and flat along that axis,
/// below any scale the file could have meant. NaN stays NaN so the splat is counted as
/// non-finite.
pub(crate) fn log_scale(linear: f32) -> f32 {
    if linear.is_nan() {
        return f32::NAN;
    }
    f64::from(linear.max(f32::MIN_POSITIVE)).ln() as f32
}

/// The per-byte values, computed once per file.
struct Tables {
    /// Colour byte → Inria DC coefficient.
    dc: [f32; 256],
    /// Alpha byte → opacity logit.
    logit: [f32; 256],
    /// Level 2 SH byte → coefficient.
    sh: [f32; 256],
}

/// The arrays being filled, and how many rest coefficients each splat gets.
struct Out {
    geometry: Vec<SplatGeometry>,
    sh: Vec<f32>,
    rest: usize,
}

impl Out {
    fn push(
        &mut self,
        t: &Tables,
        position: [f32; 3],
        scale: [f32; 3],
        rotation: [f32; 4],
        [r, g, b, a]: [u8; 4],
        rest: impl Iterator<Item = f32>,
    ) {
        self.geometry.push(SplatGeometry {
            position,
            opacity_logit: t.logit[usize::from(a)],
            rotation,
            log_scale: scale.map(log_scale),
            _pad: 0.0,
        });
        self.sh.extend([r, g, b].map(|c| t.dc[usize::from(c)]));
        self.sh.extend(rest.take(self.rest));
    }
}

/// Decodes every record of a checked layout.
pub(crate) fn decode(layout: &Layout<'_>) -> DecodedSplats {
    let header = &layout.header;
    let stride = sh_stride(layout.sh_degree);
    // The layout checked that every record is in the file: at least 24 bytes each.
    let count = header.splat_count as usize;
    let tables = Tables {
        dc: std::array::from_fn(|c| f_dc_from_colour(c as f32 / 255.0)),
        logit: std::array::from_fn(|a| opacity_logit(a as f32 / 255.0)),
        sh: byte_table(header.sh_min, header.sh_max),
    };
    let mut out = Out {
        geometry: Vec::with_capacity(count),
        sh: Vec::with_capacity(count * stride),
        rest: stride - 3,
    };
    for section in &layout.sections {
        match &section.buckets {
            None => level0(section, &tables, &mut out),
            Some(buckets) => bucketed(section, buckets, header.level, &tables, &mut out),
        }
    }
    DecodedSplats::from_parts(out.geometry, out.sh, layout.sh_degree, false)
}

fn level0(section: &Section<'_>, t: &Tables, out: &mut Out) {
    for record in section.records.chunks_exact(section.record_len) {
        // Level-0 records are whole 4-byte words: 11 for the fixed part, then the SH.
        // Never short: `record_len` is the fixed part plus the SH.
        let Some((fixed, components)) = record
            .as_chunks::<4>()
            .0
            .split_first_chunk::<LEVEL0_WORDS>()
        else {
            continue;
        };
        let [px, py, pz, sx, sy, sz, rw, rx, ry, rz, rgba] = *fixed;
        let f = f32::from_le_bytes;
        let rest = RECORD_COMPONENT
            .iter()
            .map(|&c| components.get(c).map_or(0.0, |v| f(*v)));
        out.push(
            t,
            [f(px), f(py), f(pz)],
            [f(sx), f(sy), f(sz)],
            [f(rw), f(rx), f(ry), f(rz)],
            rgba,
            rest,
        );
    }
}

/// Levels 1 and 2. Records come bucket by bucket: the full buckets (`size` records
/// each), then the partially filled ones (their lengths in the table), each bucket's
/// centre at the same position in the centre table.
fn bucketed(section: &Section<'_>, b: &Buckets<'_>, level: Level, t: &Tables, out: &mut Out) {
    let mut records = section.records.chunks_exact(section.record_len);
    let lengths = std::iter::repeat_n(b.size, b.full as usize).chain(
        b.partial_lengths
            .as_chunks::<4>()
            .0
            .iter()
            .map(|l| u32::from_le_bytes(*l)),
    );
    for (centre, len) in b.centres.as_chunks::<12>().0.iter().zip(lengths) {
        let centre: [[u8; 4]; 3] = bytemuck::cast(*centre);
        let centre = centre.map(|c| f64::from(f32::from_le_bytes(c)));
        for record in records.by_ref().take(len as usize) {
            half_record(record, centre, b, level, t, out);
        }
    }
}

fn half_record(
    record: &[u8],
    centre: [f64; 3],
    b: &Buckets<'_>,
    level: Level,
    t: &Tables,
    out: &mut Out,
) {
    // Never short: `record_len` is the fixed part plus the SH.
    let Some((fixed, sh)) = record.split_first_chunk::<HALF_FIXED>() else {
        return;
    };
    let [qx, qy, qz, sx, sy, sz, rw, rx, ry, rz, rg, ba]: [[u8; 2]; 12] = bytemuck::cast(*fixed);
    let h = |v: [u8; 2]| f16::from_bits(u16::from_le_bytes(v)).to_f32();
    // `SplatBuffer.getSplatCenter`, in f64 like the library, rounded once.
    let q = [qx, qy, qz].map(|q| f64::from(u16::from_le_bytes(q)));
    let position = std::array::from_fn(|a| ((q[a] - b.range) * b.step + centre[a]) as f32);
    let ([red, green], [blue, alpha]) = (rg, ba);
    let halves = sh.as_chunks::<2>().0;
    let rest = RECORD_COMPONENT.iter().map(|&c| match level {
        Level::Two => sh.get(c).map_or(0.0, |&u| t.sh[usize::from(u)]),
        _ => halves.get(c).map_or(0.0, |v| h(*v)),
    });
    out.push(
        t,
        position,
        [h(sx), h(sy), h(sz)],
        [h(rw), h(rx), h(ry), h(rz)],
        [red, green, blue, alpha],
        rest,
    );
}
