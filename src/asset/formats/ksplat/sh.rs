//! Where each SH coefficient sits in a record, and level 2's byte → float table.
//!
//! A record groups its SH by band, then colour channel, then coefficient:
//! `R1 R2 R3 G1 G2 G3 B1 B2 B3` for band 1, then `R4..R8 G4..G8 B4..B8` for band 2
//! (the layout `PlyParserUtils.decodeSphericalHarmonicsFromSectionHeader` fills and
//! `SplatBuffer.fillSphericalHarmonicsArray` reads back with strides 3 and 5). A
//! degree-2 record starts with the degree-1 layout, so one table serves both degrees.

/// Rest coefficients (beyond DC) of degree 2: 8 per channel.
pub(crate) const MAX_REST: usize = 24;

/// For the crate's rest slot `j` (coefficient `1 + j / 3`, channel `j % 3`), the
/// component of the record that holds it.
pub(crate) const RECORD_COMPONENT: [usize; MAX_REST] = {
    let mut order = [0; MAX_REST];
    let mut j = 0;
    while j < MAX_REST {
        let (k, c) = (1 + j / 3, j % 3);
        order[j] = if k <= 3 {
            3 * c + (k - 1)
        } else {
            9 + 5 * c + (k - 4)
        };
        j += 1;
    }
    order
};

/// Level 2: byte `u` stands for `u / 255 · (max − min) + min` (`SplatBuffer`'s
/// `fromUint8`), worked in f64 as JavaScript does, then rounded once.
pub(crate) fn byte_table(min: f32, max: f32) -> [f32; 256] {
    let (min, max) = (f64::from(min), f64::from(max));
    std::array::from_fn(|u| (u as f64 / 255.0 * (max - min) + min) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_order_is_band_then_channel() {
        // Band 1: R1 G1 B1 are components 0, 3, 6.
        assert_eq!(RECORD_COMPONENT[..3], [0, 3, 6]);
        // Coefficient 3 of blue is the last of band 1.
        assert_eq!(RECORD_COMPONENT[8], 8);
        // Band 2: R4 G4 B4 are 9, 14, 19; B8 is the last component.
        assert_eq!(RECORD_COMPONENT[9..12], [9, 14, 19]);
        assert_eq!(RECORD_COMPONENT[23], 23);
        let mut seen = RECORD_COMPONENT;
        seen.sort_unstable();
        assert_eq!(seen, std::array::from_fn(|i| i));
    }

    #[test]
    fn byte_table_spans_the_range() {
        let t = byte_table(-1.5, 1.5);
        assert_eq!(t[0], -1.5);
        assert_eq!(t[255], 1.5);
        assert_eq!(t[128], (128.0f64 / 255.0 * 3.0 - 1.5) as f32);
    }
}
