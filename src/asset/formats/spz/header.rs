//! The SPZ headers (16 bytes inside the gzip member for v1–3, 32 raw bytes for v4) and
//! the byte layout of the attribute arrays they imply.

use super::error::{Attribute, Container, SpzError};

/// "NGSP" read as a little-endian u32.
pub(crate) const NGSP_MAGIC: u32 = 0x5053_474e;
pub(crate) const LEGACY_HEADER_LEN: usize = 16;
pub(crate) const NGSP_HEADER_LEN: usize = 32;

/// The most splats a file may claim. Scenes are a few million splats; the cap keeps a
/// forged count from driving allocation sizes, and keeps byte counts within u64 easily.
pub const MAX_POINTS: u32 = 1 << 28;

/// SPZ can carry SH degree 4; bevy_splat renders up to 3.
const MAX_STORED_SH_DEGREE: u8 = 4;

const FLAG_ANTIALIASED: u8 = 0x1;
const FLAG_HAS_EXTENSIONS: u8 = 0x2;

/// The fields both header generations share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub version: u32,
    pub num_points: u32,
    pub sh_degree: u8,
    pub fractional_bits: u8,
    pub flags: u8,
}

/// The v4 header: the shared fields plus where the table of contents is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NgspHeader {
    pub common: Header,
    pub num_streams: u8,
    pub toc_offset: u32,
}

/// Both header generations start with the same 15 bytes.
fn common_fields(
    bytes: &[u8; LEGACY_HEADER_LEN],
    container: Container,
    versions: std::ops::RangeInclusive<u32>,
) -> Result<Header, SpzError> {
    let [
        magic,
        version,
        num_points,
        [sh_degree, fractional_bits, flags, _],
    ]: [[u8; 4]; 4] = bytemuck::cast(*bytes);
    let magic = u32::from_le_bytes(magic);
    if magic != NGSP_MAGIC {
        return Err(SpzError::BadMagic { found: magic });
    }
    let header = Header {
        version: u32::from_le_bytes(version),
        num_points: u32::from_le_bytes(num_points),
        sh_degree,
        fractional_bits,
        flags,
    };
    if !versions.contains(&header.version) {
        return Err(SpzError::UnsupportedVersion {
            version: header.version,
            container,
        });
    }
    if header.sh_degree > MAX_STORED_SH_DEGREE {
        return Err(SpzError::ShDegreeOutOfRange(header.sh_degree));
    }
    if header.num_points > MAX_POINTS {
        return Err(SpzError::TooManyPoints {
            num_points: header.num_points,
            max: MAX_POINTS,
        });
    }
    Ok(header)
}

/// The 16-byte header at the start of a v1–3 gzip payload.
///
/// Version 4 is accepted here too because Niantic's reader accepts it (a v4 header in a
/// gzip member is read with the legacy layout); Niantic's writer never produces one.
pub(crate) fn parse_legacy(bytes: &[u8; LEGACY_HEADER_LEN]) -> Result<Header, SpzError> {
    common_fields(bytes, Container::Gzip, 1..=4)
}

/// The 32-byte header at the start of a v4 file.
pub(crate) fn parse_ngsp(bytes: &[u8; NGSP_HEADER_LEN]) -> Result<NgspHeader, SpzError> {
    // Bytes 20..32 are reserved.
    let [
        first @ ..,
        t0,
        t1,
        t2,
        t3,
        _,
        _,
        _,
        _,
        _,
        _,
        _,
        _,
        _,
        _,
        _,
        _,
    ] = *bytes;
    let common = common_fields(&first, Container::Ngsp, 4..=4)?;
    Ok(NgspHeader {
        common,
        num_streams: first[15],
        toc_offset: u32::from_le_bytes([t0, t1, t2, t3]),
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PositionEncoding {
    /// v1: three IEEE half floats.
    Half,
    /// v2+: three 24-bit two's-complement fixed-point numbers.
    Fixed24,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RotationEncoding {
    /// v1–2: x, y, z as bytes; w rebuilt as non-negative.
    FirstThree,
    /// v3+: index of the largest component plus three 10-bit signed others.
    SmallestThree,
}

/// How many bytes each attribute takes, as the header dictates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub num_points: u32,
    pub positions: PositionEncoding,
    pub rotations: RotationEncoding,
    pub stored_sh_degree: u8,
    pub fractional_bits: u8,
    pub antialiased: bool,
    pub has_extensions: bool,
}

/// Non-DC SH coefficients per colour channel at `degree`: (degree + 1)^2 - 1.
pub(crate) fn rest_coefficients(degree: u8) -> usize {
    let d = degree as usize + 1;
    d * d - 1
}

impl Layout {
    pub(crate) fn new(header: &Header) -> Self {
        Layout {
            num_points: header.num_points,
            positions: if header.version == 1 {
                PositionEncoding::Half
            } else {
                PositionEncoding::Fixed24
            },
            rotations: if header.version >= 3 {
                RotationEncoding::SmallestThree
            } else {
                RotationEncoding::FirstThree
            },
            stored_sh_degree: header.sh_degree,
            fractional_bits: header.fractional_bits,
            antialiased: header.flags & FLAG_ANTIALIASED != 0,
            has_extensions: header.flags & FLAG_HAS_EXTENSIONS != 0,
        }
    }

    pub(crate) fn bytes_per_point(&self, attribute: Attribute) -> u64 {
        match attribute {
            Attribute::Positions => match self.positions {
                PositionEncoding::Half => 6,
                PositionEncoding::Fixed24 => 9,
            },
            Attribute::Alphas => 1,
            Attribute::Colors | Attribute::Scales => 3,
            Attribute::Rotations => match self.rotations {
                RotationEncoding::FirstThree => 3,
                RotationEncoding::SmallestThree => 4,
            },
            Attribute::Sh => 3 * rest_coefficients(self.stored_sh_degree) as u64,
        }
    }

    /// Bytes of one attribute array. At most 2^28 × 72, far inside u64.
    pub(crate) fn stream_len(&self, attribute: Attribute) -> u64 {
        u64::from(self.num_points) * self.bytes_per_point(attribute)
    }

    /// Bytes of all six arrays together.
    pub(crate) fn payload_len(&self) -> u64 {
        Attribute::ALL.iter().map(|&a| self.stream_len(a)).sum()
    }

    /// Rejects a count that `compressed` bytes cannot expand to at `max_ratio`, the
    /// codec's largest possible expansion, so no valid file is ever refused.
    pub(crate) fn ensure_expandable(
        &self,
        needed: u64,
        compressed: u64,
        max_ratio: u64,
    ) -> Result<(), SpzError> {
        let available = compressed.saturating_mul(max_ratio);
        if needed > available {
            return Err(SpzError::CountExceedsData {
                num_points: self.num_points,
                needed,
                available: compressed,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn legacy(version: u32, points: u32, degree: u8) -> [u8; 16] {
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&NGSP_MAGIC.to_le_bytes());
        h[4..8].copy_from_slice(&version.to_le_bytes());
        h[8..12].copy_from_slice(&points.to_le_bytes());
        h[12] = degree;
        h[13] = 12;
        h[14] = 1;
        h
    }

    #[test]
    fn legacy_fields_and_layout() {
        let h = parse_legacy(&legacy(2, 10, 3)).unwrap();
        let layout = Layout::new(&h);
        assert!(layout.antialiased);
        assert_eq!(layout.payload_len(), 10 * (9 + 1 + 3 + 3 + 3 + 45));
        let v1 = Layout::new(&parse_legacy(&legacy(1, 10, 0)).unwrap());
        assert_eq!(v1.payload_len(), 10 * (6 + 1 + 3 + 3 + 3));
        let v3 = Layout::new(&parse_legacy(&legacy(3, 1, 4)).unwrap());
        assert_eq!(v3.payload_len(), 9 + 1 + 3 + 3 + 4 + 72);
    }

    #[test]
    fn header_rejections() {
        let mut bad = legacy(2, 1, 0);
        bad[0] = b'X';
        assert!(matches!(parse_legacy(&bad), Err(SpzError::BadMagic { .. })));
        assert!(matches!(
            parse_legacy(&legacy(0, 1, 0)),
            Err(SpzError::UnsupportedVersion { version: 0, .. })
        ));
        assert!(matches!(
            parse_legacy(&legacy(2, 1, 5)),
            Err(SpzError::ShDegreeOutOfRange(5))
        ));
        assert!(matches!(
            parse_legacy(&legacy(2, u32::MAX, 0)),
            Err(SpzError::TooManyPoints { .. })
        ));
    }
}
