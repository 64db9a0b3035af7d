//! The splat passes of one camera, recorded in its Core3d schedule between the opaque
//! and the transparent passes.
//!
//! For a camera with `SplatPassTimes` each stage gets its own compute pass, so that
//! every stage can be timed at its pass's ends (and, with Bevy's
//! `RenderDiagnosticsPlugin`, reports as `render/gaussian_splats/<stage>/elapsed_gpu`).
//! Other cameras time only the whole span and record their compute stages in one
//! pass: the timestamps and the passes each cost GPU time.

use bevy::ecs::prelude::*;
use bevy::platform::time::Instant;
use bevy::render::diagnostic::RecordDiagnostics;
use bevy::render::renderer::{RenderContext, ViewQuery};
use bevy::render::sync_world::MainEntity;
use bevy::render::view::{ViewDepthTexture, ViewTarget};
use wgpu::{CommandEncoder, ComputePass};

use super::lighting::ViewLightPass;
use super::passes::composite::ComputeComposite;
use super::passes::preprocess::DEPTH_KEY_BITS;
use super::passes::tile_order::WORK_COUNTS_BYTES;
use super::passes::tile_render::TileOutputs;
use super::passes::{FragmentPasses, SplatPipelines};
use super::stage::SplatStage;
use super::view::ViewBuffers;
use super::view::band_buffers::BandBuffers;
use super::view::frame::{BandFrame, CompositeDraw, SplatFrame};
use super::view::lod::ViewLod;
use super::view::picks::{PickTicket, ViewPicks};
use super::view::splat_layer::SceneCopy;
use super::view::stats::SplatStats;
use super::view::timestamps::{PassTimestamps, SplatPassTimes};

/// The name of the whole splat span in Bevy's render diagnostics.
pub const DIAGNOSTIC_SPAN: &str = "gaussian_splats";

fn stage<D: RecordDiagnostics>(
    encoder: &mut CommandEncoder,
    diagnostics: &D,
    timestamps: Option<&PassTimestamps>,
    stage: SplatStage,
    record: impl FnOnce(&mut ComputePass<'_>),
) {
    let (index, name) = (stage.index(), stage.name());
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(name),
        timestamp_writes: timestamps.and_then(|t| t.compute_writes(index)),
    });
    let span = diagnostics.pass_span(&mut pass, name);
    record(&mut pass);
    span.end(&mut pass);
}

/// A render pass of stage `index` over the view's viewport, timed like the others.
fn viewport_pass<D: RecordDiagnostics>(
    encoder: &mut CommandEncoder,
    diagnostics: &D,
    timestamps: Option<&PassTimestamps>,
    stage: SplatStage,
    (color, depth): (
        &[Option<wgpu::RenderPassColorAttachment<'_>>],
        Option<wgpu::RenderPassDepthStencilAttachment<'_>>,
    ),
    (origin, size): (bevy::math::Vec2, bevy::math::Vec2),
    record: impl FnOnce(&mut wgpu::RenderPass<'_>),
) {
    let (index, name) = (stage.index(), stage.name());
    let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some(name),
        color_attachments: color,
        depth_stencil_attachment: depth,
        timestamp_writes: timestamps.and_then(|t| t.render_writes(index)),
        occlusion_query_set: None,
        multiview_mask: None,
    });
    let span = diagnostics.pass_span(&mut pass, name);
    pass.set_viewport(origin.x, origin.y, size.x, size.y, 0.0, 1.0);
    record(&mut pass);
    span.end(&mut pass);
}

/// What one view's compute stages draw with: its bands' bind groups and buffers,
/// and what it picks and cuts this frame.
pub(crate) struct Raster<'a> {
    pub bands: &'a [BandFrame],
    pub buffers: &'a ViewBuffers,
    pub multisampled_depth: bool,
    pub picks: Option<(&'a PickTicket, &'a ViewPicks)>,
    pub lod: Option<&'a ViewLod>,
    /// The light pass, for a camera whose clouds receive light.
    pub light: Option<&'a ViewLightPass>,
    /// The tag its counters are read back under (`CounterReadback::copy`): a shadow
    /// view's frame number, 0 for a camera.
    pub counts_tag: u64,
}

/// Records a view's compute stages, preprocess to tile render (and its picks), into
/// its splat layer, then the copy of its bands' counters for the read-back. Camera
/// views and shadow views both draw through it.
///
/// With `per_stage` (the view's stages are timed) each stage is a compute pass of its
/// own, at whose ends its timestamps and diagnostic span are written; otherwise all
/// of them share one pass, since every compute pass costs the GPU about 5 µs of its
/// own even where nothing waits (`examples/dispatch_cost.rs`, BENCHMARKS.md): some
/// 30 µs a view. Within a pass, as across passes, wgpu orders each dispatch after the
/// ones whose buffers it reads.
pub(crate) fn record_raster<D: RecordDiagnostics>(
    encoder: &mut CommandEncoder,
    (diagnostics, timestamps, per_stage): (&D, Option<&PassTimestamps>, bool),
    pipelines: &SplatPipelines,
    raster: &Raster<'_>,
) {
    // What the tile render draws: colour, median depth or both (the layer's).
    let outputs = raster.buffers.layer.outputs;
    let bands = || raster.bands.iter().zip(&raster.buffers.bands);
    let picks = raster.picks;
    // Bands have buffers of their own, so each stage records every band in one pass.
    for (_, band) in bands() {
        encoder.clear_buffer(&band.work.counters, 0, None);
        encoder.clear_buffer(&band.work.tile_work, 0, Some(WORK_COUNTS_BYTES));
    }
    if let Some((_, picks)) = picks {
        encoder.clear_buffer(&picks.hits, 0, None);
    }
    if let Some(lod) = raster.lod {
        lod.clear(encoder);
    }
    let preprocess = |pass: &mut ComputePass<'_>| {
        for (band, _) in bands() {
            for dispatch in &band.preprocess {
                pipelines.preprocess.encode(
                    pass,
                    &dispatch.bind_group,
                    dispatch.params_offset,
                    dispatch.threads,
                    (dispatch.compact, dispatch.variant, dispatch.receive),
                );
            }
            pipelines.indirect.encode_visible(pass, &band.indirect);
        }
        // Lit where the splats stand, before anything reads their colours.
        if let Some(light) = raster.light {
            for (index, (_, buffers)) in bands().enumerate() {
                light.encode(pass, index, &buffers.work.counters);
            }
        }
    };
    let depth_sort = |pass: &mut ComputePass<'_>| {
        for (band, buffers) in bands() {
            let sort = &buffers.work.depth_sort;
            if band.indirect.prepares_depth_sort() {
                pipelines.sort.encode_prepared(pass, sort, DEPTH_KEY_BITS);
            } else {
                pipelines.sort.encode(pass, sort, DEPTH_KEY_BITS);
            }
        }
    };
    let scan = |pass: &mut ComputePass<'_>| {
        for (band, buffers) in bands() {
            pipelines
                .pair_slots
                .encode(pass, &band.pair_slots, &buffers.work.counters);
        }
    };
    let duplicate = |pass: &mut ComputePass<'_>| {
        for (band, buffers) in bands() {
            pipelines
                .duplicate
                .encode(pass, &band.duplicate, &buffers.work.counters, band.cells);
        }
    };
    // The bind groups read each sort's result where `RadixSort::output_index` says.
    let tile_sort = |pass: &mut ComputePass<'_>| {
        for (band, buffers) in bands() {
            let sort = &buffers.work.sort;
            if band.pair_slots.prepares_sort() {
                pipelines.sort.encode_prepared(pass, sort, band.key_bits);
            } else {
                pipelines.sort.encode(pass, sort, band.key_bits);
            }
        }
    };
    let tile_range = |pass: &mut ComputePass<'_>| {
        for (band, buffers) in bands() {
            pipelines
                .tile_range
                .encode(pass, &band.tile_range, band.bins);
            pipelines
                .tile_split
                .encode(pass, &band.tile_split, band.bins);
            pipelines
                .tile_order
                .encode(pass, &band.tile_order, band.tiles.x * band.tiles.y);
            // Only bands with room for chunks of long lists (shadow views') file any.
            if buffers.work.capacity.chunk_capacity() > 0 {
                pipelines.indirect.encode_chunks(pass, &band.indirect);
            }
        }
    };
    // The picks are timed with the tile render: a workgroup per pointer, next to a
    // workgroup per tile.
    let tile_render = |pass: &mut ComputePass<'_>| {
        for (band, buffers) in bands() {
            pipelines.tile_render.encode(
                pass,
                &band.tile_render,
                (
                    raster.multisampled_depth,
                    TileOutputs::of(outputs.colour, outputs.median_depth),
                ),
                (
                    &buffers.work.counters,
                    buffers.work.capacity.chunk_capacity() > 0,
                ),
            );
        }
        if let Some((ticket, _)) = picks {
            for (band, _) in bands() {
                if let Some(group) = &band.pick {
                    let multisampled = raster.multisampled_depth;
                    pipelines
                        .pick
                        .encode(pass, group, multisampled, ticket.pixels());
                }
            }
        }
    };
    let stages: [(SplatStage, &dyn Fn(&mut ComputePass<'_>)); 7] = [
        (SplatStage::Preprocess, &preprocess),
        (SplatStage::DepthSort, &depth_sort),
        (SplatStage::Scan, &scan),
        (SplatStage::Duplicate, &duplicate),
        (SplatStage::TileSort, &tile_sort),
        (SplatStage::TileRange, &tile_range),
        (SplatStage::TileRender, &tile_render),
    ];
    if per_stage {
        for (splat_stage, record) in stages {
            stage(encoder, diagnostics, timestamps, splat_stage, record);
        }
    } else {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("splat stages"),
            timestamp_writes: None,
        });
        for (_, record) in stages {
            record(&mut pass);
        }
    }
    // The feedback the preprocess counted, once every stage is recorded (no later
    // stage touches it).
    if let Some(lod) = raster.lod {
        lod.copy_back(encoder);
    }
    if let Some((ticket, picks)) = picks {
        picks.copy(encoder, ticket);
    }
    raster.buffers.readback.copy(
        encoder,
        raster.buffers.bands.iter().map(|band| &band.work.counters),
        raster.counts_tag,
    );
}

/// The components of a view that draws splats this frame (`prepare`).
type SplatViewItem<'a> = (
    &'a ViewTarget,
    &'a ViewDepthTexture,
    &'a MainEntity,
    Has<SplatPassTimes>,
    Option<(&'a SplatFrame, &'a ViewBuffers)>,
    Option<&'a PassTimestamps>,
    Option<&'a ViewPicks>,
    Option<&'a SceneCopy>,
    Option<&'a ViewLod>,
    Option<&'a ViewLightPass>,
);

pub fn splat_pass(
    view: ViewQuery<SplatViewItem>,
    pipelines: Option<Res<SplatPipelines>>,
    fragment_passes: Option<Res<FragmentPasses>>,
    stats: Res<SplatStats>,
    mut ctx: RenderContext,
) {
    let started = Instant::now();
    let (target, depth, main_entity, timed, drawn, timestamps, view_picks, scene_copy, lod, light) =
        view.into_inner();
    let (Some(pipelines), Some(fragment_passes), Some((frame, buffers))) =
        (pipelines, fragment_passes, drawn)
    else {
        return;
    };
    // The compute composite binds the main texture as it is when recorded.
    let device = ctx.render_device().clone();
    let device = device.wgpu_device();
    let diagnostics = ctx.diagnostic_recorder();
    let diagnostics = diagnostics.as_deref();
    let encoder = ctx.command_encoder();
    let span = diagnostics.time_span(encoder, DIAGNOSTIC_SPAN);
    // Bevy's spans per stage only for a camera that asks for them.
    let diagnostics = diagnostics.filter(|_| timed);

    let picks = frame.pick.as_ref().zip(view_picks);
    let raster = Raster {
        bands: &frame.bands,
        buffers,
        multisampled_depth: frame.multisampled_depth,
        picks,
        lod,
        light,
        counts_tag: 0,
    };
    let per_stage = timed || timestamps.is_some();
    record_raster(
        encoder,
        (&diagnostics, timestamps, per_stage),
        &pipelines,
        &raster,
    );

    let viewport = (
        frame.viewport_origin.as_vec2(),
        frame.viewport_size.as_vec2(),
    );
    let band_tiles = || buffers.bands.iter().map(BandBuffers::tiles);
    if let Some(copy) = scene_copy {
        copy.copy_from(encoder, target.main_texture(), frame.viewport_origin);
    }
    match (&frame.composite, scene_copy) {
        (
            CompositeDraw::Fragment {
                pipeline,
                bind_group,
            },
            _,
        ) => {
            let color = [Some(target.get_color_attachment())];
            viewport_pass(
                encoder,
                &diagnostics,
                timestamps,
                SplatStage::Composite,
                (&color, None),
                viewport,
                |pass| {
                    fragment_passes
                        .composite
                        .encode(pass, pipeline, bind_group, band_tiles())
                },
            );
        }
        (CompositeDraw::Compute { pipeline, layout }, Some(copy)) => {
            let layer = &buffers.layer;
            let bind_groups: Vec<_> = buffers
                .bands
                .iter()
                .map(|band| {
                    ComputeComposite::bind_group(
                        device,
                        layout,
                        (&layer.view, &buffers.layer_params.buffer, &copy.view),
                        (target.main_texture_view(), &band.work.tile_order),
                    )
                })
                .collect();
            stage(
                encoder,
                &diagnostics,
                timestamps,
                SplatStage::Composite,
                |pass| {
                    for (group, band) in bind_groups.iter().zip(&buffers.bands) {
                        ComputeComposite::encode(pass, pipeline, group, &band.work.counters);
                    }
                },
            );
        }
        // Prepare makes the copy with the compute composite's frame; were it missing,
        // the stage still runs (empty), so that its timestamps are written before
        // they are resolved.
        (CompositeDraw::Compute { .. }, None) => {
            stage(
                encoder,
                &diagnostics,
                timestamps,
                SplatStage::Composite,
                |_| {},
            );
        }
    }
    if let Some((pipeline, group)) = &frame.depth_write {
        let depth = Some(depth.get_attachment(wgpu::StoreOp::Store));
        viewport_pass(
            encoder,
            &diagnostics,
            timestamps,
            SplatStage::DepthWrite,
            (&[], depth),
            viewport,
            |pass| {
                fragment_passes
                    .depth_write
                    .encode(pass, pipeline, group, band_tiles())
            },
        );
    }
    if let Some(timestamps) = timestamps {
        // The depth write is the last stage and runs only with `SplatDepth`.
        let ran = if frame.depth_write.is_some() {
            SplatStage::COUNT
        } else {
            SplatStage::DepthWrite.index()
        };
        timestamps.resolve(encoder, ran);
    }
    span.end(encoder);
    let record_ns = started.elapsed().as_nanos() as u64;
    stats.update(main_entity.id(), |s| s.cpu_record_ns = record_ns);
}
