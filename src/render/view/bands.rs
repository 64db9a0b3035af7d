//! How a view's work is split so that no storage binding outgrows the device.
//!
//! A view's projected splats and its (splat, tile) pairs each live in one storage
//! binding. When a camera sees more than one binding holds, its image is cut into
//! horizontal bands of bin rows (two tile rows each, as the pairs are made per bin of
//! 2×2 tiles); each band runs the whole pipeline with its own
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
/// Buffers grow once a frame fills more than 15/16 of them, before one overflows: a
/// view that keeps needing more (a camera moving in) gets bigger buffers while its
/// frames are still complete.
const GROW_ABOVE_SIXTEENTHS: u32 = 15;

/// Slots a bin pair can name (`SLOT_BITS` in `common.wgsl`): more projected splats
/// than any storage binding of today holds (2²⁸ × 32 bytes is 8 GiB).
pub const MAX_SLOTS: u32 = 1 << 28;

/// Splat buffers of a band among several are never smaller than this.
const MIN_SPLATS: u32 = 1 << 14;

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
            // A bin pair's value holds the splat's slot below its 4 tile bits.
            max_splats: items(splat_bytes).min(MAX_SLOTS),
            max_pairs: items(pair_bytes),
        }
    }

    fn overflows(&self, need: &BandNeed) -> bool {
        need.splats > self.max_splats || need.pairs > self.max_pairs
    }

    /// Whether a band that needs `need` is small enough to merge with a neighbour.
    fn is_small(&self, need: &BandNeed) -> bool {
        need.splats <= self.max_splats / 2 && need.pairs <= self.max_pairs / 2
    }
}

/// What one band needed in a frame the GPU reported on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BandNeed {
    pub splats: u32,
    pub pairs: u32,
}

impl BandNeed {
    fn plus(self, other: BandNeed) -> BandNeed {
        BandNeed {
            splats: self.splats.saturating_add(other.splats),
            pairs: self.pairs.saturating_add(other.pairs),
        }
    }
}

/// One band: the bin rows it draws and what its buffers hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Band {
    pub rows: Range<u32>,
    pub splats: u32,
    pub pairs: u32,
}

/// 1.25× `need`, within `min..=max`: room for a need that grows.
fn with_headroom(need: u32, min: u32, max: u32) -> u32 {
    need.saturating_add(need / 4).clamp(min.min(max), max)
}

/// 1.125× `need`, within `min..=max`: what a shrunk buffer keeps, so a view that
/// settles holds little more than it draws (and grows early if it needs more).
fn with_little_headroom(need: u32, min: u32, max: u32) -> u32 {
    need.saturating_add(need / 8).clamp(min.min(max), max)
}

/// The bands of a view seen for the first time: as many equal bands as its clouds'
/// splats would need if they were spread evenly (they are cut or joined once the GPU
/// reports what each band needed).
pub fn first_bands(splats: u32, rows: u32, limits: &BandLimits) -> Vec<Band> {
    let rows = rows.max(1);
    let count = splats.div_ceil(limits.max_splats).clamp(1, rows);
    let splats = splats.min(limits.max_splats);
    let pairs = splats
        .saturating_mul(INITIAL_PAIRS_PER_SPLAT)
        .max(MIN_PAIRS)
        .min(limits.max_pairs);
    let row = |band: u32| (u64::from(rows) * u64::from(band) / u64::from(count)) as u32;
    (0..count)
        .map(|band| Band {
            rows: row(band)..row(band + 1),
            splats,
            pairs,
        })
        .collect()
}

/// The bands for the next frame, from the bands now and what each needed in a
/// reported frame (`needs[i]` for `bands[i]`). `(held, all)`: what a view drawn in
/// one band keeps room for whatever it drew (every splat of a camera's clouds; a run
/// of shadow cells, its largest cell's), and every splat of its clouds, the most it
/// can ever need.
///
/// A band that outgrew a binding is cut in two (by rows); two neighbours that each
/// need at most half a binding are joined. A cut band's halves need more than one
/// binding between them, so they are not joined again: the view settles instead of
/// cutting and joining on alternate frames. Dense rows get narrow bands and empty
/// sky one wide band. Each band's buffers follow its need as pair buffers do (see
/// [`resize`]); a view drawn in one band holds every splat of its clouds, so turning
/// the camera never leaves splats out.
pub fn next_bands(
    bands: &[Band],
    needs: &[BandNeed],
    (held, all): (u32, u32),
    limits: &BandLimits,
) -> Vec<Band> {
    let mut next: Vec<(Band, Option<BandNeed>)> = Vec::with_capacity(bands.len() + 1);
    for (band, need) in bands.iter().zip(needs) {
        let rows = band.rows.len() as u32;
        if limits.overflows(need) && rows > 1 {
            // Each half needs at most what the whole did.
            let mid = band.rows.start + rows / 2;
            let half = |rows: Range<u32>| Band {
                rows,
                splats: with_headroom(need.splats, MIN_SPLATS, limits.max_splats),
                pairs: with_headroom(need.pairs, MIN_PAIRS, limits.max_pairs),
            };
            next.push((half(band.rows.start..mid), None));
            next.push((half(mid..band.rows.end), None));
            continue;
        }
        let resized = Band {
            rows: band.rows.clone(),
            splats: resize(band.splats, need.splats, MIN_SPLATS, limits.max_splats).to(band.splats),
            pairs: resize(band.pairs, need.pairs, MIN_PAIRS, limits.max_pairs).to(band.pairs),
        };
        let joinable = matches!(next.last(), Some((_, Some(last))) if limits.is_small(last))
            && limits.is_small(need);
        match next.last_mut() {
            Some((last, last_need)) if joinable => {
                let joined = last_need.unwrap_or_default().plus(*need);
                *last = Band {
                    rows: last.rows.start..band.rows.end,
                    splats: with_headroom(joined.splats, MIN_SPLATS, limits.max_splats),
                    pairs: with_headroom(joined.pairs, MIN_PAIRS, limits.max_pairs),
                };
                // Joined once per frame: the next join waits for a report on this one.
                *last_need = None;
            }
            _ => next.push((resized, Some(*need))),
        }
    }
    let mut next: Vec<Band> = next.into_iter().map(|(band, _)| band).collect();
    if let [only] = next.as_mut_slice() {
        only.splats = only.splats.max(held).min(all).min(limits.max_splats);
    }
    next
}

/// What a band's buffers should become, once the GPU reported a frame's need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resize {
    Keep,
    /// The frame needed more than the buffers held (it was incomplete).
    Grow(u32),
    /// The buffers hold more than `SHRINK_BELOW` times what the frame needed.
    Shrink(u32),
}

impl Resize {
    /// The capacity to build, given the one held now.
    pub fn to(self, held: u32) -> u32 {
        match self {
            Resize::Keep => held,
            Resize::Grow(to) | Resize::Shrink(to) => to,
        }
    }
}

/// Grows to 1.25× the need (at most `max`) once the need fills more than 15/16 of the
/// buffers, or shrinks to 1.125× the need (at least `min`) when the buffers are far
/// too large; the gap between the two keeps a band whose need wobbles from rebuilding
/// every frame.
pub fn resize(capacity: u32, needed: u32, min: u32, max: u32) -> Resize {
    let nearly_full = u64::from(capacity) * u64::from(GROW_ABOVE_SIXTEENTHS) / 16;
    if u64::from(needed) > nearly_full {
        let to = with_headroom(needed, min, max);
        if to > capacity {
            return Resize::Grow(to);
        }
        return Resize::Keep;
    }
    if needed.saturating_mul(SHRINK_BELOW) < capacity && capacity > min {
        let to = with_little_headroom(needed, min, max);
        if to < capacity {
            return Resize::Shrink(to);
        }
    }
    Resize::Keep
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: BandLimits = BandLimits {
        max_splats: 100_000,
        max_pairs: 400_000,
    };

    fn band(rows: Range<u32>, splats: u32, pairs: u32) -> Band {
        Band {
            rows,
            splats,
            pairs,
        }
    }

    fn need(splats: u32, pairs: u32) -> BandNeed {
        BandNeed { splats, pairs }
    }

    #[test]
    fn limits_count_what_one_binding_holds() {
        let limits = BandLimits::new(128 << 20, 48, 8);
        assert_eq!(limits.max_splats, 2_796_202);
        assert_eq!(limits.max_pairs, 16 << 20);
        assert_eq!(BandLimits::new(1 << 40, 1, 1).max_pairs, u32::MAX);
        assert_eq!(BandLimits::new(1 << 40, 1, 1).max_splats, MAX_SLOTS);
    }

    #[test]
    fn a_new_view_starts_with_bands_enough_for_its_splats() {
        assert_eq!(first_bands(10, 30, &LIMITS), [band(0..30, 10, MIN_PAIRS)]);
        assert_eq!(first_bands(10, 0, &LIMITS), [band(0..1, 10, MIN_PAIRS)]);
        assert_eq!(
            first_bands(250_000, 30, &LIMITS),
            [
                band(0..10, 100_000, 400_000),
                band(10..20, 100_000, 400_000),
                band(20..30, 100_000, 400_000)
            ]
        );
        let many = first_bands(u32::MAX, 7, &LIMITS);
        assert_eq!(many.len(), 7);
        assert!(
            many.iter()
                .enumerate()
                .all(|(i, b)| b.rows == (i as u32..i as u32 + 1))
        );
    }

    #[test]
    fn an_overflowing_band_is_cut_in_two() {
        let bands = [band(0..30, 100_000, 400_000)];
        let next = next_bands(
            &bands,
            &[need(150_000, 300_000)],
            (200_000, 200_000),
            &LIMITS,
        );
        assert_eq!(
            next,
            [
                band(0..15, 100_000, 375_000),
                band(15..30, 100_000, 375_000)
            ]
        );
        // Too many pairs cuts as well; a band of one row cannot be cut.
        let next = next_bands(
            &next,
            &[need(10, 500_000), need(10, 10)],
            (200_000, 200_000),
            &LIMITS,
        );
        assert_eq!(next.len(), 3);
        assert_eq!(next[0].rows, 0..7);
        assert_eq!(next[2].rows, 15..30);
        let one_row = [band(4..5, 100_000, 400_000)];
        let next = next_bands(&one_row, &[need(200_000, 0)], (200_000, 200_000), &LIMITS);
        assert_eq!(next[0].rows, 4..5);
    }

    #[test]
    fn small_neighbours_are_joined_and_cut_halves_are_not() {
        let bands = [
            band(0..10, 50_000, 100_000),
            band(10..20, 50_000, 100_000),
            band(20..30, 50_000, 100_000),
        ];
        let needs = [
            need(20_000, 90_000),
            need(30_000, 90_000),
            need(40_000, 90_000),
        ];
        let next = next_bands(&bands, &needs, (200_000, 200_000), &LIMITS);
        // The first two join (once per frame); the third keeps its buffers.
        assert_eq!(
            next,
            [band(0..20, 62_500, 225_000), band(20..30, 50_000, 100_000)]
        );
        // Halves of a cut band need more than one binding together: never joined.
        let halves = [
            band(0..15, 100_000, 375_000),
            band(15..30, 100_000, 375_000),
        ];
        let next = next_bands(
            &halves,
            &[need(60_000, 10), need(60_000, 10)],
            (200_000, 200_000),
            &LIMITS,
        );
        assert_eq!(next.len(), 2);
        // Joined back into one band, which then holds every splat again.
        let next = next_bands(
            &halves,
            &[need(50_000, 10), need(40_000, 10)],
            (150_000, 150_000),
            &LIMITS,
        );
        assert_eq!(next, [band(0..30, 100_000, MIN_PAIRS)]);
    }

    #[test]
    fn band_capacities_follow_their_need() {
        let bands = [band(0..10, 50_000, 100_000), band(10..20, 90_000, 100_000)];
        let needs = [need(60_000, 120_000), need(10_000, 20_000)];
        let next = next_bands(&bands, &needs, (200_000, 200_000), &LIMITS);
        assert_eq!(
            next,
            [
                band(0..10, 75_000, 150_000),
                band(10..20, 16_384, MIN_PAIRS)
            ]
        );
    }

    #[test]
    fn buffers_grow_shrink_or_stay() {
        let (min, max) = (MIN_PAIRS, 1 << 28);
        assert_eq!(resize(100_000, 120_000, min, max), Resize::Grow(150_000));
        // Nearly full grows before a frame overflows; 15/16 full does not yet.
        assert_eq!(resize(160_000, 155_000, min, max), Resize::Grow(193_750));
        assert_eq!(resize(160_000, 150_000, min, max), Resize::Keep);
        assert_eq!(
            resize(100_000, 120_000, min, 110_000),
            Resize::Grow(110_000)
        );
        assert_eq!(resize(110_000, 120_000, min, 110_000), Resize::Keep);
        assert_eq!(
            resize(1_000_000, 400_000, min, max),
            Resize::Shrink(450_000)
        );
        assert_eq!(resize(1_000_000, 600_000, min, max), Resize::Keep);
        assert_eq!(
            resize(1_000_000, 1_000_000, min, max),
            Resize::Grow(1_250_000)
        );
        // A shrunk buffer holds a settled need without growing again.
        let shrunk = resize(1_000_000, 400_000, min, max).to(1_000_000);
        assert_eq!(resize(shrunk, 400_000, min, max), Resize::Keep);
        // Never below the floor.
        assert_eq!(
            resize(MIN_PAIRS * 4, 10, min, max),
            Resize::Shrink(MIN_PAIRS)
        );
        assert_eq!(resize(MIN_PAIRS, 10, min, max), Resize::Keep);
        // A floor above the binding's size gives way to it.
        assert_eq!(resize(100, 1000, min, 500), Resize::Grow(500));
        assert_eq!(Resize::Keep.to(7), 7);
        assert_eq!(Resize::Grow(9).to(7), 9);
    }
}
