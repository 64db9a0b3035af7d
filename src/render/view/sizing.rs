//! How a view's buffers follow what it draws: each band's capacities from the GPU's
//! latest report, and which of the previous buffers still serve.

use std::ops::Range;
use std::sync::Arc;

use bevy::log::{debug, warn};
use bevy::math::UVec2;

use super::ViewBuffers;
use super::band_buffers::{BandBuffers, BandCapacity};
use super::bands::{Band, BandLimits, BandNeed, first_bands, next_bands};
use super::readback::{CounterReadback, GpuCounts};
use super::splat_layer::{LayerOutputs, SplatLayer};
use crate::render::memory::SplatMemory;
use crate::render::passes::SplatPipelines;
use crate::render::passes::tile_split::bins_for;

/// What a view draws this frame, the input to sizing its bands.
pub struct ViewNeed {
    /// Splats of every cloud the view draws: the most that can be visible.
    pub splats: u32,
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
        None => first_bands(need.splats, view_bin_rows, limits),
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
                    let next = next_bands(&now, &needs, need.splats, limits);
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
                        only.splats = only.splats.max(need.splats.min(limits.max_splats));
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
                "tile rows {:?} of a camera need {} splats and {} bin pairs, but one storage \
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

/// Sizes a view's buffers for this frame from what it draws (`need`) and the GPU's
/// latest counts, which it polls and returns: `view`'s `ViewBuffers` in place where
/// they still serve, new ones inserted otherwise.
#[expect(clippy::too_many_arguments, reason = "one view's sizing inputs, named")]
pub fn size_view(
    commands: &mut bevy::ecs::prelude::Commands,
    view: bevy::ecs::prelude::Entity,
    buffers: Option<bevy::ecs::prelude::Mut<ViewBuffers>>,
    need: &ViewNeed,
    limits: &BandLimits,
    (viewport, outputs): (UVec2, LayerOutputs),
    device: &wgpu::Device,
    pipelines: &SplatPipelines,
    memory: &SplatMemory,
) -> Option<Vec<GpuCounts>> {
    let counts = buffers.as_ref().and_then(|b| b.readback.poll(device));
    let capacities = plan_bands(buffers.as_deref(), counts.as_deref(), need, limits);
    let built = reuse_or_build(
        buffers.map(bevy::ecs::prelude::Mut::into_inner),
        capacities,
        viewport,
        device,
        pipelines,
        memory,
        outputs,
    );
    if let Some(built) = built {
        commands.entity(view).insert(built);
    }
    counts
}

/// Brings a view's buffers to `capacities`: those of `previous` (the view's
/// component) in place where its layer still fits, keeping every band that still
/// serves; otherwise new buffers, returned for the caller to insert.
pub fn reuse_or_build(
    previous: Option<&mut ViewBuffers>,
    capacities: Vec<BandCapacity>,
    viewport: UVec2,
    device: &wgpu::Device,
    pipelines: &SplatPipelines,
    memory: &SplatMemory,
    outputs: LayerOutputs,
) -> Option<ViewBuffers> {
    let bands = capacities.len();
    match previous {
        Some(view) if view.layer.viewport == viewport && view.layer.outputs == outputs => {
            if view.readback.bands() != bands {
                view.readback = CounterReadback::new(device, memory, bands);
            }
            let old_bands = std::mem::take(&mut view.bands);
            view.bands = reuse_bands(old_bands, capacities, device, pipelines, memory);
            None
        }
        _ => Some(ViewBuffers {
            layer: Arc::new(SplatLayer::new(device, memory, viewport, outputs)),
            bands: reuse_bands(Vec::new(), capacities, device, pipelines, memory),
            readback: CounterReadback::new(device, memory, bands),
        }),
    }
}

/// The bands for `capacities`: an old band of the same rows where it still holds
/// exactly what is needed, a new one otherwise.
fn reuse_bands(
    mut old_bands: Vec<BandBuffers>,
    capacities: Vec<BandCapacity>,
    device: &wgpu::Device,
    pipelines: &SplatPipelines,
    memory: &SplatMemory,
) -> Vec<BandBuffers> {
    capacities
        .into_iter()
        .map(|need| {
            let same_rows = old_bands
                .iter()
                .position(|b| b.work.capacity.rows == need.rows);
            match same_rows.map(|i| old_bands.swap_remove(i)) {
                Some(band) if band.work.capacity.fits_exactly(&need) => band,
                old => {
                    // Keep headroom for clouds and chunks, so one appearing doesn't
                    // rebuild every frame.
                    let (chunks, instances) =
                        old.map_or((0, 0), |b| (b.inputs.chunks, b.inputs.instances));
                    let capacity = BandCapacity {
                        chunks: need.chunks.max(chunks),
                        instances: need.instances.max(instances),
                        ..need
                    };
                    debug!("splat band buffers for {capacity:?}");
                    BandBuffers::new(device, pipelines, memory, capacity)
                }
            }
        })
        .collect()
}
