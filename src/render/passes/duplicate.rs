//! duplicate: one (tile | depth key, splat) pair per tile each visible splat touches.

use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::common::{ShaderChecks, bind_group, storage, uniform};
use super::indirect::VISIBLE_DISPATCH_OFFSET;
use super::library::{ShaderDef, wgsl_file};

/// Its loops run over the bin rows and columns of a splat's spans, clamped to the
/// view's tiles, and over the window; it indexes the window below WINDOW, pair buffers
/// below the pair capacity, splats by the slots the preprocess wrote.
pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("duplicate.wgsl"),
    checks: ShaderChecks::None,
};

pub struct DuplicatePass {
    layout: BindGroupLayout,
    /// For views of one cell (every camera): `ONE_CELL`, the layer's grid compiled out.
    pipeline: ComputePipeline,
    /// For a run of several views in cells of one layer (a light's cascades).
    cells_pipeline: ComputePipeline,
}

/// `splat_rect` of a view of one cell: the viewport, without the grid's arithmetic,
/// which made a camera's duplicate 5 % slower (0.203 → 0.214 ms at K = 9 on an H100).
const ONE_CELL: ShaderDef = ShaderDef::Flag("ONE_CELL");

impl DuplicatePass {
    pub fn new(builder: &mut dyn PipelineBuilder) -> Option<Self> {
        let layout = BindGroupLayoutDescriptor::new(
            "splat duplicate",
            &[
                uniform(0, false),
                storage(1, true),
                storage(2, true),
                storage(3, true),
                storage(4, false),
                storage(5, false),
                storage(6, true),
            ],
        );
        let mut kernel = |label, defs| {
            builder.kernel(&Kernel {
                label,
                layout: &layout,
                shader: SHADER,
                entry_point: "duplicate",
                defs,
            })
        };
        let pipeline = kernel("splat duplicate", &[ONE_CELL])?;
        let cells_pipeline = kernel("splat duplicate (cells)", &[])?;
        Some(Self {
            layout: builder.layout(&layout),
            pipeline,
            cells_pipeline,
        })
    }

    /// `first_pair_slots` is the scanned pair counts and `by_depth` the visible splats'
    /// depth values (slot and pair count), both nearest first; pairs go to `keys`/`values`.
    pub fn bind_group(
        &self,
        device: &Device,
        view_uniform: &Buffer,
        projected: &Buffer,
        first_pair_slots: &Buffer,
        counters: &Buffer,
        keys: &Buffer,
        values: &Buffer,
        by_depth: wgpu::BufferBinding<'_>,
    ) -> BindGroup {
        bind_group(
            device,
            "splat duplicate",
            &self.layout,
            &[
                view_uniform.as_entire_binding(),
                projected.as_entire_binding(),
                first_pair_slots.as_entire_binding(),
                counters.as_entire_binding(),
                keys.as_entire_binding(),
                values.as_entire_binding(),
                wgpu::BindingResource::Buffer(by_depth),
            ],
        )
    }

    /// One thread per visible splat, sized on the GPU; `cells`: the view is a run of
    /// several in cells of one layer.
    pub fn encode(
        &self,
        pass: &mut ComputePass<'_>,
        bind_group: &BindGroup,
        counters: &Buffer,
        cells: bool,
    ) {
        pass.set_pipeline(match cells {
            false => &self.pipeline,
            true => &self.cells_pipeline,
        });
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups_indirect(counters, VISIBLE_DISPATCH_OFFSET);
    }
}
