//! How a view's work is split so that no storage binding outgrows the device.
//!
//! A view's projected splats and its (splat, tile) pairs each live in one storage
//! binding. When a camera sees more than one binding holds, its image is cut into
//! horizontal bands of tile rows; each band runs the whole pipeline with its own
//! buffers, over only the splats that touch its rows, and its tile render writes its
//! rows of the shared splat layer. Band buffers are independent, so every stage still
//! records all bands in one compute pass.

use std::ops::Range;

/// Pair buffers are never smaller than this.
pub const MIN_PAIRS: u32 = 1 << 16;
/// Pairs reserved per splat before the GPU has reported what a band needs.
const INITIAL_PAIRS_PER_SPLAT: u32 = 4;
/// Pair buffers more than this many times larger than a frame needs are shrunk.
const SHRINK_BELOW: u32 = 2;

/// The most one band can hold: what fits in one storage binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandLimits {
    pub max_splats: u32,
    pub max_pairs: u32,
}

impl BandLimits {
    pub fn new(max_binding: u64, splat_bytes: u64, pair_bytes: u64) -> Self {
        let items = |bytes: u64| {
            u32::try_from(max_binding / bytes)
                .unwrap_or(u32::MAX)
                .max(1)
        };
        Self {
            max_splats: items(splat_bytes),
            max_pairs: items(pair_bytes),
        }
    }

    /// Splat capacity of every band of a view whose clouds hold `splats` in all: a band
    /// can see each of them, but never more than one binding holds.
    pub fn band_splats(&self, splats: u32) -> u32 {
        splats.min(self.max_splats)
    }

    /// Pair capacity of a new band, before the GPU has reported its need.
    pub fn initial_pairs(&self, band_splats: u32) -> u32 {
        band_splats
            .saturating_mul(INITIAL_PAIRS_PER_SPLAT)
            .max(MIN_PAIRS)
            .min(self.max_pairs)
    }
}

/// What one band needed in a frame the GPU reported on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BandNeed {
    pub splats: u32,
    pub pairs: u32,
}

/// The tile rows of band `band` of `bands` equal bands over `tile_rows` rows.
pub fn band_rows(tile_rows: u32, bands: u32, band: u32) -> Range<u32> {
    let bands = bands.clamp(1, tile_rows.max(1));
    let at = |b: u32| (u64::from(tile_rows) * u64::from(b) / u64::from(bands)) as u32;
    at(band)..at(band + 1)
}

/// Bands to start a view with: enough that its splats would fit if they spread evenly.
pub fn initial_bands(splats: u32, tile_rows: u32, limits: &BandLimits) -> u32 {
    splats
        .div_ceil(limits.max_splats)
        .clamp(1, tile_rows.max(1))
}

/// The band count for the next frame, from the count now and what each band of a
/// reported frame needed. Doubles when a band overflowed a binding; halves when the
/// fullest band is under a third of both limits (a band of the halved split spans at
/// most three of the current ones, so it still fits). The gap between the two keeps a
/// view from splitting and merging on alternate frames.
pub fn next_band_count(bands: u32, needs: &[BandNeed], tile_rows: u32, limits: &BandLimits) -> u32 {
    let most_splats = needs.iter().map(|n| n.splats).max().unwrap_or(0);
    let most_pairs = needs.iter().map(|n| n.pairs).max().unwrap_or(0);
    let most = tile_rows.max(1);
    if most_splats > limits.max_splats || most_pairs > limits.max_pairs {
        bands.saturating_mul(2).min(most)
    } else if bands > 1
        && most_splats <= limits.max_splats / 3
        && most_pairs <= limits.max_pairs / 3
    {
        bands.div_ceil(2)
    } else {
        bands
    }
}

/// What a band's pair buffers should become, once the GPU reported a frame's need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairResize {
    Keep,
    /// The frame needed more than the buffers held (it was incomplete).
    Grow(u32),
    /// The buffers hold more than `SHRINK_BELOW` times what the frame needed.
    Shrink(u32),
}

/// Grows to 1.25× the need (at most `max_pairs`), or shrinks to 1.25× the need when
/// the buffers are far too large; the gap between the two keeps a band whose need
/// wobbles from rebuilding every frame.
pub fn resize_pairs(capacity: u32, needed: u32, max_pairs: u32) -> PairResize {
    let with_headroom = needed.saturating_add(needed / 4);
    if needed > capacity {
        PairResize::Grow(with_headroom.min(max_pairs))
    } else if needed.saturating_mul(SHRINK_BELOW) < capacity && capacity > MIN_PAIRS {
        PairResize::Shrink(with_headroom.max(MIN_PAIRS).min(max_pairs))
    } else {
        PairResize::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: BandLimits = BandLimits {
        max_splats: 1000,
        max_pairs: 4000,
    };

    #[test]
    fn limits_count_what_one_binding_holds() {
        let limits = BandLimits::new(128 << 20, 48, 8);
        assert_eq!(limits.max_splats, 2_796_202);
        assert_eq!(limits.max_pairs, 16 << 20);
        assert_eq!(BandLimits::new(1 << 40, 1, 1).max_pairs, u32::MAX);
        assert_eq!(limits.band_splats(10), 10);
        assert_eq!(limits.band_splats(u32::MAX), limits.max_splats);
        assert_eq!(LIMITS.initial_pairs(10), LIMITS.max_pairs);
    }

    #[test]
    fn bands_cover_every_row_once() {
        for rows in [1, 2, 7, 30, 68] {
            for bands in 1..=rows + 3 {
                let mut next = 0;
                let count = bands.min(rows);
                for band in 0..count {
                    let r = band_rows(rows, bands, band);
                    assert_eq!(r.start, next);
                    assert!(
                        !r.is_empty(),
                        "{rows} rows, {bands} bands: band {band} empty"
                    );
                    next = r.end;
                }
                assert_eq!(next, rows);
            }
        }
        assert_eq!(band_rows(30, 4, 1), 7..15);
    }

    #[test]
    fn views_start_with_enough_bands_for_their_splats() {
        assert_eq!(initial_bands(0, 30, &LIMITS), 1);
        assert_eq!(initial_bands(1000, 30, &LIMITS), 1);
        assert_eq!(initial_bands(1001, 30, &LIMITS), 2);
        assert_eq!(initial_bands(1_000_000, 30, &LIMITS), 30);
    }

    #[test]
    fn band_count_doubles_on_overflow_and_halves_when_small() {
        let need = |splats, pairs| BandNeed { splats, pairs };
        assert_eq!(next_band_count(1, &[need(1001, 10)], 30, &LIMITS), 2);
        assert_eq!(
            next_band_count(2, &[need(5, 4001), need(0, 0)], 30, &LIMITS),
            4
        );
        assert_eq!(next_band_count(16, &[need(2000, 0)], 30, &LIMITS), 30);
        assert_eq!(next_band_count(30, &[need(2000, 0)], 30, &LIMITS), 30);
        assert_eq!(next_band_count(4, &[need(1000, 4000); 4], 30, &LIMITS), 4);
        assert_eq!(next_band_count(4, &[need(334, 10); 4], 30, &LIMITS), 4);
        assert_eq!(next_band_count(4, &[need(333, 1333); 4], 30, &LIMITS), 2);
        assert_eq!(next_band_count(3, &[need(0, 0); 3], 30, &LIMITS), 2);
        assert_eq!(next_band_count(1, &[need(0, 0)], 30, &LIMITS), 1);
        // Halving never breaks what a band can hold: three full thirds fit.
        let merged = 3 * (LIMITS.max_splats / 3);
        assert!(merged <= LIMITS.max_splats);
    }

    #[test]
    fn pair_buffers_grow_shrink_or_stay() {
        let max = 1 << 28;
        assert_eq!(
            resize_pairs(100_000, 120_000, max),
            PairResize::Grow(150_000)
        );
        assert_eq!(
            resize_pairs(100_000, 120_000, 110_000),
            PairResize::Grow(110_000)
        );
        assert_eq!(
            resize_pairs(1_000_000, 400_000, max),
            PairResize::Shrink(500_000)
        );
        assert_eq!(resize_pairs(1_000_000, 600_000, max), PairResize::Keep);
        assert_eq!(resize_pairs(1_000_000, 1_000_000, max), PairResize::Keep);
        // Never below the floor.
        assert_eq!(
            resize_pairs(MIN_PAIRS * 4, 10, max),
            PairResize::Shrink(MIN_PAIRS)
        );
        assert_eq!(resize_pairs(MIN_PAIRS, 10, max), PairResize::Keep);
    }
}
