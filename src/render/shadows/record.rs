//! The `Core3d` systems that draw splats into the shadow maps: after Bevy's shadow
//! passes (so the maps are cleared and hold the meshes) and before the main pass
//! that samples them.

use bevy::ecs::prelude::*;
use bevy::pbr::{ShadowView, ViewLightEntities};
use bevy::render::diagnostic::RecordDiagnostics;
use bevy::render::renderer::{RenderContext, ViewQuery};
use wgpu::{CommandEncoder, StoreOp};

use super::prepare::{ShadowCell, ShadowFrame};
use super::still::{StillDraw, StillShadow};
use super::timing::SplatShadowPassTimes;
use crate::render::passes::tile_quads::BandTiles;
use crate::render::passes::{FragmentPasses, SplatPipelines};
use crate::render::record::{Raster, record_raster};
use crate::render::view::ViewBuffers;
use crate::render::view::band_buffers::BandBuffers;
use crate::render::view::lod::ViewLod;

/// The splat shadows' spans in Bevy's render diagnostics: one per shadow view, named
/// `gaussian_splat_shadows/<Bevy's pass name of the view>` (for instance
/// `render/gaussian_splat_shadows/shadow_directional_light_0_cascade_1/elapsed_gpu`).
pub const SHADOW_DIAGNOSTIC_SPAN: &str = "gaussian_splat_shadows";

type ShadowItem<'a> = (Entity, &'a ShadowView, &'a ShadowFrame, &'a ShadowCell);

/// A run's first view: what its passes draw with.
type RunItem<'a> = (
    &'a ViewBuffers,
    Option<&'a ViewLod>,
    Option<&'a StillShadow>,
);

/// A camera's run: the cascades of its directional lights, which Bevy has just drawn
/// the meshes into (the next camera reuses the same layers for its own).
pub fn directional_splat_shadows(
    view: ViewQuery<&ViewLightEntities>,
    shadow_views: Query<ShadowItem>,
    runs: Query<RunItem>,
    pipelines: Option<Res<SplatPipelines>>,
    fragment_passes: Option<Res<FragmentPasses>>,
    timed: Option<Res<SplatShadowPassTimes>>,
    mut ctx: RenderContext,
) {
    let (Some(pipelines), Some(fragment_passes)) = (pipelines, fragment_passes) else {
        return;
    };
    let cascades: Vec<_> = view
        .into_inner()
        .lights
        .iter()
        .filter_map(|entity| shadow_views.get(*entity).ok())
        .collect();
    if cascades.is_empty() {
        return;
    }
    record(
        &mut ctx,
        (&pipelines, &fragment_passes),
        (&cascades, &runs),
        timed.is_some(),
    );
}

/// A point light's face or a spot light's view, in its own run (once a frame, shared
/// by every camera).
pub fn point_and_spot_splat_shadows(
    view: ViewQuery<ShadowItem>,
    runs: Query<RunItem>,
    pipelines: Option<Res<SplatPipelines>>,
    fragment_passes: Option<Res<FragmentPasses>>,
    timed: Option<Res<SplatShadowPassTimes>>,
    mut ctx: RenderContext,
) {
    let (Some(pipelines), Some(fragment_passes)) = (pipelines, fragment_passes) else {
        return;
    };
    let views = [view.into_inner()];
    record(
        &mut ctx,
        (&pipelines, &fragment_passes),
        (&views, &runs),
        timed.is_some(),
    );
}

/// Records each run's passes (on its first view) and every view's depth write from
/// its cell: the runs first, so that a cascade drawn in another's run finds its cell
/// drawn whatever the order of Bevy's views.
fn record(
    ctx: &mut RenderContext,
    (pipelines, fragment_passes): (&SplatPipelines, &FragmentPasses),
    (views, runs): (&[ShadowItem<'_>], &Query<RunItem>),
    timed: bool,
) {
    let diagnostics = ctx.diagnostic_recorder();
    let diagnostics = diagnostics.as_deref();
    let encoder = ctx.command_encoder();
    // One span per view; each stage's own only with `SplatShadowPassTimes`.
    let per_stage = diagnostics.filter(|_| timed);
    let leads = |(entity, .., cell): &&ShadowItem<'_>| cell.leader == *entity;
    let order = views
        .iter()
        .filter(leads)
        .chain(views.iter().filter(|v| !leads(v)));
    // A run whose first view has no frame this frame draws nothing, and its other
    // views write nothing: the layer holds another run's surface (runs of one size
    // share it).
    let drawn: Vec<Entity> = views.iter().filter(leads).map(|(e, ..)| *e).collect();
    for (entity, shadow_view, frame, cell) in order {
        let run = runs.get(cell.leader).ok();
        let Some((buffers, lod, still)) = run.filter(|_| drawn.contains(&cell.leader)) else {
            continue;
        };
        let name = format!("{SHADOW_DIAGNOSTIC_SPAN}/{}", shadow_view.pass_name);
        let span = diagnostics.time_span(encoder, name);
        let draw = still.map_or(StillDraw::Anew, |still| still.draw);
        let kept = still.and_then(StillShadow::kept);
        match (draw, kept) {
            (StillDraw::FromKept, Some(kept)) => {
                resolve(encoder, fragment_passes, (shadow_view, frame), kept.tiles());
            }
            _ => {
                if cell.leader == *entity {
                    let raster = Raster {
                        bands: &frame.bands,
                        buffers,
                        multisampled_depth: false,
                        picks: None,
                        lod,
                        light: None,
                        counts_tag: still.map_or(0, |still| still.frame),
                    };
                    record_raster(encoder, (&per_stage, None, timed), pipelines, &raster);
                    if let (StillDraw::AnewAndKeep, Some(kept)) = (draw, kept) {
                        kept.copy_from(encoder, buffers);
                    }
                }
                let bands = buffers.bands.iter().map(BandBuffers::tiles);
                resolve(encoder, fragment_passes, (shadow_view, frame), bands);
            }
        }
        span.end(encoder);
    }
}

/// The depth write into the light's layer, over the tiles the view's splats reach
/// (`bands`' runs, this frame's or the kept ones): the first pass there this frame
/// clears it (`get_attachment`), so it is right whether or not Bevy drew meshes into it.
fn resolve<'a>(
    encoder: &mut CommandEncoder,
    fragment_passes: &FragmentPasses,
    (shadow_view, frame): (&ShadowView, &ShadowFrame),
    bands: impl IntoIterator<Item = BandTiles<'a>>,
) {
    let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("splat shadow depth write"),
        color_attachments: &[],
        depth_stencil_attachment: Some(shadow_view.depth_attachment.get_attachment(StoreOp::Store)),
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    });
    let size = frame.size.as_vec2();
    pass.set_viewport(0.0, 0.0, size.x, size.y, 0.0, 1.0);
    let (pipeline, group) = &frame.resolve;
    fragment_passes
        .depth_write
        .encode(&mut pass, pipeline, group, bands);
}
