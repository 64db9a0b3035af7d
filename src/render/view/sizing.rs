//! How a view's bands follow what it draws: each band's capacities from the GPU's
//! latest report (`shared_work` then gives the view buffers for them).

use std::ops::Range;

use bevy::log::{debug, warn};
use bevy::math::UVec2;

use super::ViewBuffers;
use super::band_buffers::BandCapacity;
use super::bands::{Band, BandLimits, BandNeed, first_bands, next_bands};
use super::readback::GpuCounts;
use crate::render::passes::tile_split::bins_for;

/// What a view draws this frame, the input to sizing its bands.
pub struct ViewNeed {
    /// Splats of every cloud the view draws: the most that can be visible.
    pub splats: u32,
    /// What the view keeps room for whatever it drew while it is drawn in one band:
    /// `splats` for a camera, so that turning it never leaves splats out; a run of
    /// shadow cells, its largest cell's clouds (it grows from its counts where its
    /// cells together see more).
    pub held_splats: u32,
    pub chunks: u32,
    pub instances: u32,
    pub tiles: UVec2,
    /// The view picks: its bands record each projected splat's source.
    pub sources: bool,
    /// The view's clouds receive light: its bands record each projected splat's
    /// `LitPoint`.
    pub lit_points: bool,
    /// The most chunks of long tile lists the view keeps room for (a shadow view's;
    /// 0 draws every tile whole).
    pub tile_chunks: u32,
}

/// The capacities of every band for this frame. Uses the GPU's latest report on the
/// previous buffers, if one came back (see `bands::next_bands`).
pub fn plan_bands(
    previous: Option<&ViewBuffers>,
    counts: Option<&[GpuCounts]>,
    need: &ViewNeed,
    limits: &BandLimits,
) -> Vec<BandCapacity> {
    let previous = previous.filter(|old| {
        old.bands
            .first()
            .is_some_and(|b| b.work.capacity.tiles == need.tiles)
    });
    // Bands are cut in bin rows (two tile rows): the pairs are made per bin.
    let view_bin_rows = bins_for(need.tiles).y;
    let bands: Vec<Band> = match previous {
        None => first_bands(need.held_splats, view_bin_rows, limits),
        Some(old) => {
            let now: Vec<Band> = old
                .bands
                .iter()
                .map(|b| Band {
                    rows: bin_rows(&b.work.capacity.rows),
                    splats: b.work.capacity.splats,
                    pairs: b.work.capacity.pairs,
                })
                .collect();
            match counts.filter(|c| c.len() == now.len()) {
                Some(counts) => {
                    let needs: Vec<BandNeed> = counts
                        .iter()
                        .map(|c| BandNeed {
                            splats: c.visible_splats,
                            pairs: c.pairs_needed,
                        })
                        .collect();
                    warn_about_overflow(&now, &needs, limits, need.tiles.y);
                    let held = (need.held_splats, need.splats);
                    let next = next_bands(&now, &needs, held, limits);
                    if next.len() != now.len() {
                        debug!(
                            "splat view redrawn in {} bands (was {})",
                            next.len(),
                            now.len()
                        );
                    }
                    next
                }
                None => {
                    let mut now = now;
                    // A view in one band holds every splat of its clouds, new ones too.
                    if let [only] = now.as_mut_slice() {
                        only.splats = only.splats.max(need.held_splats.min(limits.max_splats));
                    }
                    now
                }
            }
        }
    };
    bands
        .into_iter()
        .map(|band| BandCapacity {
            splats: band.splats,
            pairs: band.pairs,
            chunks: need.chunks,
            instances: need.instances,
            tiles: need.tiles,
            rows: tile_rows(&band.rows, need.tiles.y),
            sources: need.sources,
            lit_points: need.lit_points,
            tile_chunks: need.tile_chunks,
        })
        .collect()
}

/// The bin rows (two tile rows each) of a band's tile rows, which start at a bin row.
fn bin_rows(tiles: &Range<u32>) -> Range<u32> {
    tiles.start / 2..tiles.end.div_ceil(2)
}

/// The tile rows of a band's bin rows, in a view `view_rows` tile rows tall (whose last
/// bin row may hold one tile row).
fn tile_rows(bins: &Range<u32>, view_rows: u32) -> Range<u32> {
    bins.start * 2..(bins.end * 2).min(view_rows)
}

/// Frames are incomplete while bands grow; only a band of one bin row that still
/// needs more than a binding holds cannot be helped.
fn warn_about_overflow(bands: &[Band], needs: &[BandNeed], limits: &BandLimits, view_rows: u32) {
    for (band, need) in bands.iter().zip(needs) {
        let over = need.splats > limits.max_splats || need.pairs > limits.max_pairs;
        if over && band.rows.len() <= 1 {
            warn!(
                "tile rows {:?} of a view (camera or shadow) need {} splats and {} bin pairs, but one storage \
                 binding holds {} and {}: splats are missing from its image",
                tile_rows(&band.rows, view_rows),
                need.splats,
                need.pairs,
                limits.max_splats,
                limits.max_pairs
            );
        } else if need.splats > band.splats || need.pairs > band.pairs {
            debug!(
                "splat band of bin rows {:?} needed {} splats / {} bin pairs but held {} / {}: \
                 that frame was incomplete",
                band.rows, need.splats, need.pairs, band.splats, band.pairs
            );
        }
    }
}
