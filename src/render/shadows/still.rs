//! Shadow views that do not change. A static light over static clouds (a lamp in a
//! scanned room), or the cascades of a camera that stands still, would draw the same
//! surface every frame. Such a view keeps a copy of its surface, the median depth and
//! the runs of tiles it drew, once the GPU's counts of the frame it copied say nothing
//! was left out, and from then on only writes that copy into the light's map (Bevy
//! clears the maps every frame), until something it draws from changes.
//!
//! What it draws from is [`StillInputs`]: its camera, its clouds as the preprocess sees
//! them, its dispatches, its level-of-detail cut and the GPU buffers they read (held,
//! so that a buffer dropped and another made at its address can never match). Views
//! whose clouds run a `SplatShader` (which may move with time) or stream pages (whose
//! content changes under the same dispatch) draw anew every frame, as do the views of
//! a light with [`RedrawSplatShadows`](crate::lighting::RedrawSplatShadows). A moving
//! view holds no copy: one is made only after two frames with the same inputs.

use bevy::ecs::prelude::*;
use bevy::math::UVec2;
use bevy::render::render_asset::RenderAssets;
use wgpu::{Buffer, BufferUsages, CommandEncoder, Device, TextureView};

use crate::render::gpu_cloud::GpuSplats;
use crate::render::lod_trees::GpuLodTrees;
use crate::render::memory::{GpuBytes, SplatMemory};
use crate::render::passes::common::buffer;
use crate::render::passes::indirect::COUNTERS_SIZE;
use crate::render::passes::tile_quads::{BandTiles, TILE_RUN_BYTES};
use crate::render::passes::tile_render::MEDIAN_DEPTH_FORMAT;
use crate::render::prepare::draw_plan::ViewDraw;
use crate::render::view::ViewBuffers;
use crate::render::view::band_buffers::BandCapacity;
use crate::render::view::dispatch::{DispatchPlan, LodNodes};
use crate::render::view::lod::LodFrame;
use crate::render::view::readback::GpuCounts;
use crate::render::view::uniform::{LayerCells, SplatCamera};

/// Everything a shadow view's passes read that can change from one frame to the next.
#[derive(Clone, PartialEq)]
pub struct StillInputs {
    camera: SplatCamera,
    size: UVec2,
    /// A run of several views' cells (`cells`), whose depth mappings the instances
    /// do not carry.
    cells: Option<LayerCells>,
    /// The clouds' instances as bytes (`CloudInstance`), without the shader time, which
    /// only a `SplatShader` reads and views with one are never still.
    instances: Vec<u8>,
    dispatches: Vec<DispatchPlan>,
    lod: Option<LodFrame>,
    /// The splat, SH and tree buffers the dispatches read, in order.
    buffers: Vec<Buffer>,
}

impl StillInputs {
    /// `draw`'s inputs; `None` for a view that must draw anew every frame (a cloud with
    /// a `SplatShader`, a streamed page) or whose assets are gone.
    pub fn of(
        draw: &ViewDraw,
        assets: &RenderAssets<GpuSplats>,
        trees: &GpuLodTrees,
    ) -> Option<Self> {
        let mut buffers = Vec::with_capacity(draw.dispatches.len() * 3);
        for plan in &draw.dispatches {
            if plan.shader.is_some() || matches!(plan.lod, Some(LodNodes::Page(_))) {
                return None;
            }
            let dispatch = plan.resolve(assets, trees)?;
            buffers.push(dispatch.chunk.geometry.clone());
            buffers.push(dispatch.chunk.sh.clone());
            buffers.extend(dispatch.lod.map(|lod| lod.records.clone()));
        }
        let mut instances = draw.instances.clone();
        for instance in &mut instances {
            instance.shader_time = 0.0;
        }
        Some(Self {
            camera: draw.camera,
            size: draw.size,
            cells: draw.cells.clone(),
            instances: bytemuck::cast_slice(&instances).to_vec(),
            dispatches: draw.dispatches.clone(),
            lod: draw.lod,
            buffers,
        })
    }
}

/// How a shadow view draws this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StillDraw {
    /// Through every pass, as any view.
    #[default]
    Anew,
    /// Through every pass, then copies its surface into the kept one.
    AnewAndKeep,
    /// Only the depth write, from the kept surface.
    FromKept,
}

/// A shadow view's frames and the surface it keeps while it stands still (a component
/// on Bevy's shadow view entity, dropped with its other splat state).
#[derive(Component, Default)]
pub struct StillShadow {
    /// Its frames, counted: the tag its counters are read back under.
    pub frame: u64,
    /// How this frame draws it.
    pub draw: StillDraw,
    /// The previous frame's inputs.
    last: Option<StillInputs>,
    kept: Option<KeptSurface>,
}

/// Where a kept surface stands with the GPU's counts of the frame it was copied from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Copied from this frame; its counts are not back yet.
    Waiting(u64),
    /// That frame drew every splat and pair: the copy is drawn from.
    Complete,
    /// That frame left some out (its buffers were growing, or cannot hold the view),
    /// or its counts were never read back: copy again, into the same buffers.
    Again,
}

/// A copy of one frame's surface of a shadow view: what its depth write reads.
pub struct KeptSurface {
    inputs: StillInputs,
    verdict: Verdict,
    /// The view's size and bands it was made for.
    made_for: (UVec2, Vec<UVec2>),
    pub median_depth: TextureView,
    /// Each band's runs of drawn tiles and counters (the depth write's instances and
    /// arguments).
    bands: Vec<(Buffer, Buffer)>,
    _bytes: GpuBytes,
}

impl StillShadow {
    /// Takes in counts the GPU sent back under `tag`: the verdict on a copy waiting
    /// for its frame's counts. A frame that left splats or pairs out (its buffers were
    /// growing) is not drawn from; neither is one whose counts were never read back
    /// (the read-back was busy): the view copies again.
    pub fn take_counts(&mut self, tag: u64, bands: &[GpuCounts]) {
        let Some(kept) = &mut self.kept else {
            return;
        };
        let Verdict::Waiting(frame) = kept.verdict else {
            return;
        };
        if tag == frame {
            kept.verdict = if bands.iter().all(GpuCounts::complete) {
                Verdict::Complete
            } else {
                Verdict::Again
            };
        } else if tag > frame {
            kept.verdict = Verdict::Again;
        }
    }

    /// Decides how this frame draws the view, from its inputs (`None`: anew, keeping
    /// nothing), and makes the copy's buffers when it starts keeping one, for the
    /// bands planned this frame over a view of `size` pixels.
    pub fn plan(
        &mut self,
        inputs: Option<StillInputs>,
        (size, bands): (UVec2, &[BandCapacity]),
        device: &Device,
        memory: &SplatMemory,
    ) {
        self.frame += 1;
        self.draw = self.next_draw(inputs, (size, bands), device, memory);
    }

    fn next_draw(
        &mut self,
        inputs: Option<StillInputs>,
        (size, bands): (UVec2, &[BandCapacity]),
        device: &Device,
        memory: &SplatMemory,
    ) -> StillDraw {
        let Some(inputs) = inputs else {
            self.last = None;
            self.kept = None;
            return StillDraw::Anew;
        };
        if let Some(kept) = &mut self.kept {
            if kept.inputs == inputs {
                match kept.verdict {
                    Verdict::Complete => return StillDraw::FromKept,
                    Verdict::Waiting(_) => return StillDraw::Anew,
                    // A view its buffers cannot hold would otherwise make a new copy
                    // every few frames.
                    Verdict::Again if kept.made_for == made_for(size, bands) => {
                        kept.verdict = Verdict::Waiting(self.frame);
                        return StillDraw::AnewAndKeep;
                    }
                    Verdict::Again => {}
                }
            }
            self.kept = None;
        }
        if self.last.as_ref() != Some(&inputs) {
            self.last = Some(inputs);
            return StillDraw::Anew;
        }
        self.kept = Some(KeptSurface::new(
            device,
            memory,
            (inputs, self.frame),
            (size, bands),
        ));
        StillDraw::AnewAndKeep
    }

    /// The kept surface, while this frame draws from it or copies into it.
    pub fn kept(&self) -> Option<&KeptSurface> {
        self.kept.as_ref()
    }
}

/// What a kept surface's buffers are sized by: the view's size and each band's tiles.
fn made_for(size: UVec2, bands: &[BandCapacity]) -> (UVec2, Vec<UVec2>) {
    (size, bands.iter().map(BandCapacity::band_tiles).collect())
}

impl KeptSurface {
    fn new(
        device: &Device,
        memory: &SplatMemory,
        (inputs, frame): (StillInputs, u64),
        (size, capacities): (UVec2, &[BandCapacity]),
    ) -> Self {
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("kept splat shadow depth"),
            size: wgpu::Extent3d {
                width: size.x.max(1),
                height: size.y.max(1),
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: MEDIAN_DEPTH_FORMAT,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        let bands: Vec<(Buffer, Buffer)> = capacities
            .iter()
            .map(|band| {
                let runs = u64::from(band.band_tiles().element_product().max(1)) * TILE_RUN_BYTES;
                (
                    buffer(
                        device,
                        "kept splat shadow tile runs",
                        runs,
                        BufferUsages::VERTEX | BufferUsages::COPY_DST,
                    ),
                    buffer(
                        device,
                        "kept splat shadow counters",
                        COUNTERS_SIZE,
                        BufferUsages::INDIRECT | BufferUsages::COPY_DST,
                    ),
                )
            })
            .collect();
        let bytes = u64::from(size.x.max(1)) * u64::from(size.y.max(1)) * 4
            + bands
                .iter()
                .map(|(runs, counters)| runs.size() + counters.size())
                .sum::<u64>();
        Self {
            inputs,
            verdict: Verdict::Waiting(frame),
            made_for: made_for(size, capacities),
            median_depth: texture.create_view(&Default::default()),
            bands,
            _bytes: memory.track(bytes),
        }
    }

    /// Records the copy of what `buffers`' depth write reads (the layer's median depth,
    /// every band's tile runs and counters) into this surface, after the view's passes.
    pub fn copy_from(&self, encoder: &mut CommandEncoder, buffers: &ViewBuffers) {
        let source = buffers.layer.median_depth.texture();
        let target = self.median_depth.texture();
        let extent = wgpu::Extent3d {
            width: source.width().min(target.width()),
            height: source.height().min(target.height()),
            depth_or_array_layers: 1,
        };
        encoder.copy_texture_to_texture(source.as_image_copy(), target.as_image_copy(), extent);
        for (band, (runs, counters)) in buffers.bands.iter().zip(&self.bands) {
            let work = &band.work;
            let run_bytes = work.tile_runs.size().min(runs.size());
            encoder.copy_buffer_to_buffer(&work.tile_runs, 0, runs, 0, run_bytes);
            encoder.copy_buffer_to_buffer(&work.counters, 0, counters, 0, COUNTERS_SIZE);
        }
    }

    /// What the depth write draws from it: each band's kept tiles.
    pub fn tiles(&self) -> impl Iterator<Item = BandTiles<'_>> {
        self.bands.iter().map(|(tile_runs, counters)| BandTiles {
            tile_runs,
            counters,
        })
    }
}
