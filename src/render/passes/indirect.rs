//! The view's counters buffer and the tiny kernels that turn its GPU-only counts into
//! indirect dispatch arguments.

use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::common::{ShaderChecks, bind_group, storage, uniform};
use super::library::{ShaderDef, wgsl_file};
use super::radix_sort::SortBuffers;
use super::radix_sort::kernels::preparing_defs;
#[cfg(doc)]
use super::scan::SCAN_BLOCK;

/// A band's counters buffer, what its passes count on the GPU each frame. The WGSL
/// indexes it by word through the shader defs [`counter_defs`] makes from this
/// struct, and the preprocess's `PreprocessCounters` is checked against it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ViewCounters {
    /// Splats the preprocess found visible (it writes at most the splat capacity).
    pub visible: u32,
    /// Pairs the visible splats make (the scan's total).
    pub pairs_needed: u32,
    /// Pairs within the band's capacity.
    pub pairs_kept: u32,
    /// Visible splats within the band's capacity.
    pub visible_kept: u32,
    /// Dispatch arguments over the kept splats (x, y, z, unused).
    pub visible_dispatch: [u32; 4],
    /// Dispatch arguments over the kept pairs (x, y, z, unused).
    pub pair_dispatch: [u32; 4],
    /// Tiles of the band that some splat reaches (the tile order's count).
    pub tiles_drawn: u32,
    /// Chunks of long tile lists the tile order filed (shadow views; may pass the
    /// band's chunk capacity, beyond which tiles are drawn whole).
    pub tile_chunks: u32,
    /// Dispatch arguments of the tile render over the drawn tiles: the band's tiles
    /// across, and rows of them enough for every drawn tile (x, y, z, unused).
    pub tile_dispatch: [u32; 4],
    /// Draw arguments of the fragment passes over the drawn tiles: six vertices (two
    /// triangles) per run of drawn tiles along a row, one instance per run (vertex
    /// count, instance count, first vertex, first instance).
    pub tile_draw: [u32; 4],
    /// Dispatch arguments over the filed chunks, one workgroup each (x, y, z, unused).
    pub chunk_dispatch: [u32; 4],
    /// Dispatch arguments over the kept splats' blocks of the pair slots' scan, one
    /// workgroup per [`SCAN_BLOCK`] (x, y, z, unused).
    pub scan_dispatch: [u32; 4],
    /// The rest of the first line.
    pub _first_line_end: [u32; 2],
    /// The range of the depth keys the preprocess wrote, in copies of a cache line each:
    /// the workgroup with id (x, y) takes its range into copy `(x + y) %
    /// DEPTH_KEY_RANGE_COPIES`, and `visible_dispatch` folds them all into the first,
    /// which the depth sort reads. Every splat also takes its slot with an atomic on
    /// `visible`, and the range's atomics queue behind those wherever the two land in
    /// the same part of the GPU's L2: on an H100 the preprocess took 0.306 ms at K = 9
    /// with the range beside `visible`, 0.282 with it one line further, 0.253 one line
    /// and a sector further, and at K = 30 between 2.4 and 3.7 ms from one process to
    /// the next, as the buffers landed. Spread over lines, 0.251–0.254 and 2.40–2.42
    /// in every process (BENCHMARKS.md).
    pub depth_key_ranges: [DepthKeyRange; DEPTH_KEY_RANGE_COPIES],
}

/// How many copies of the depth-key range the preprocess spreads its atomics over.
pub const DEPTH_KEY_RANGE_COPIES: usize = 16;

/// The bytes of a line of the GPU's last-level cache (128 on NVIDIA and AMD GPUs).
pub const COUNTER_LINE_BYTES: u64 = 128;

/// One copy of the depth-key range, alone in its cache line (`DepthKeyRange` in
/// `preprocess.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DepthKeyRange {
    /// The largest depth key, then the complement of the smallest (so that a buffer
    /// cleared to zero starts both).
    pub max: u32,
    pub min_complement: u32,
    pub _rest_of_line: [u32; COUNTER_LINE_BYTES as usize / 4 - 2],
}

/// Byte offsets of the counters buffer's fields.
pub const PAIRS_NEEDED_OFFSET: u64 = std::mem::offset_of!(ViewCounters, pairs_needed) as u64;
pub const PAIRS_KEPT_OFFSET: u64 = std::mem::offset_of!(ViewCounters, pairs_kept) as u64;
pub const VISIBLE_KEPT_OFFSET: u64 = std::mem::offset_of!(ViewCounters, visible_kept) as u64;
pub const VISIBLE_DISPATCH_OFFSET: u64 =
    std::mem::offset_of!(ViewCounters, visible_dispatch) as u64;
pub const PAIR_DISPATCH_OFFSET: u64 = std::mem::offset_of!(ViewCounters, pair_dispatch) as u64;
/// The range of the depth keys the preprocess wrote (the first copy, which holds them
/// all once `visible_dispatch` has run): the largest, then the complement of the
/// smallest.
pub const DEPTH_KEY_RANGE_OFFSET: u64 = std::mem::offset_of!(ViewCounters, depth_key_ranges) as u64;
pub const TILES_DRAWN_OFFSET: u64 = std::mem::offset_of!(ViewCounters, tiles_drawn) as u64;
pub const TILE_DISPATCH_OFFSET: u64 = std::mem::offset_of!(ViewCounters, tile_dispatch) as u64;
pub const TILE_DRAW_OFFSET: u64 = std::mem::offset_of!(ViewCounters, tile_draw) as u64;
pub const TILE_CHUNKS_OFFSET: u64 = std::mem::offset_of!(ViewCounters, tile_chunks) as u64;
pub const CHUNK_DISPATCH_OFFSET: u64 = std::mem::offset_of!(ViewCounters, chunk_dispatch) as u64;
pub const SCAN_DISPATCH_OFFSET: u64 = std::mem::offset_of!(ViewCounters, scan_dispatch) as u64;
const _: () = assert!(DEPTH_KEY_RANGE_OFFSET == COUNTER_LINE_BYTES);
const _: () = assert!(size_of::<DepthKeyRange>() as u64 == COUNTER_LINE_BYTES);
/// Size of the counters buffer.
pub const COUNTERS_SIZE: u64 = size_of::<ViewCounters>() as u64;

/// The word of each counter, as the shader defs `COUNTER_*` the WGSL indexes with.
pub(crate) fn counter_defs() -> [ShaderDef; 15] {
    let word = |offset: u64| (offset / 4) as u32;
    [
        ShaderDef::UInt("COUNTER_VISIBLE", 0),
        ShaderDef::UInt("COUNTER_PAIRS_NEEDED", word(PAIRS_NEEDED_OFFSET)),
        ShaderDef::UInt("COUNTER_PAIRS_KEPT", word(PAIRS_KEPT_OFFSET)),
        ShaderDef::UInt("COUNTER_VISIBLE_KEPT", word(VISIBLE_KEPT_OFFSET)),
        ShaderDef::UInt("COUNTER_VISIBLE_DISPATCH", word(VISIBLE_DISPATCH_OFFSET)),
        ShaderDef::UInt("COUNTER_PAIR_DISPATCH", word(PAIR_DISPATCH_OFFSET)),
        ShaderDef::UInt("COUNTER_DEPTH_KEY_MAX", word(DEPTH_KEY_RANGE_OFFSET)),
        ShaderDef::UInt("DEPTH_KEY_RANGE_COPIES", DEPTH_KEY_RANGE_COPIES as u32),
        ShaderDef::UInt("COUNTER_LINE_WORDS", word(COUNTER_LINE_BYTES)),
        ShaderDef::UInt("COUNTER_TILES_DRAWN", word(TILES_DRAWN_OFFSET)),
        ShaderDef::UInt("COUNTER_TILE_DISPATCH", word(TILE_DISPATCH_OFFSET)),
        ShaderDef::UInt("COUNTER_TILE_DRAW", word(TILE_DRAW_OFFSET)),
        ShaderDef::UInt("COUNTER_TILE_CHUNKS", word(TILE_CHUNKS_OFFSET)),
        ShaderDef::UInt("COUNTER_CHUNK_DISPATCH", word(CHUNK_DISPATCH_OFFSET)),
        ShaderDef::UInt("COUNTER_SCAN_DISPATCH", word(SCAN_DISPATCH_OFFSET)),
    ]
}

pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("indirect.wgsl"),
    checks: ShaderChecks::All,
};

pub struct IndirectPass {
    layout: BindGroupLayout,
    /// Also the depth sort's state and status (`PREPARES_SORT`).
    preparing_layout: BindGroupLayout,
    visible: ComputePipeline,
    /// `visible_dispatch` that also prepares the depth sort, built for a one-sweep sort.
    visible_preparing: Option<ComputePipeline>,
    chunks: ComputePipeline,
}

/// A band's bind groups of the indirect kernels.
pub struct IndirectGroups {
    plain: BindGroup,
    /// With the depth sort's state and status, where `visible_dispatch` prepares it (a
    /// one-sweep sort): the sort is then recorded with `RadixSort::encode_prepared`.
    preparing: Option<BindGroup>,
}

impl IndirectGroups {
    /// Whether `visible_dispatch` prepares the depth sort.
    pub fn prepares_depth_sort(&self) -> bool {
        self.preparing.is_some()
    }
}

impl IndirectPass {
    /// `onesweep_sort`: the grid limit of the views' radix sort where it is a one-sweep
    /// sort, which `visible_dispatch` can then prepare; `None` for a classic sort.
    pub fn new(builder: &mut dyn PipelineBuilder, onesweep_sort: Option<u32>) -> Option<Self> {
        let entries = [
            storage(0, false),
            uniform(1, false),
            storage(2, false),
            storage(3, false),
        ];
        let layout = BindGroupLayoutDescriptor::new("splat indirect args", &entries[..2]);
        let preparing_layout =
            BindGroupLayoutDescriptor::new("splat indirect args and depth sort", &entries);
        let preparing = onesweep_sort.map(|max_groups_x| preparing_defs(max_groups_x, 2, 3));
        let mut kernel = |label, layout, entry_point, defs| {
            builder.kernel(&Kernel {
                label,
                layout,
                shader: SHADER,
                entry_point,
                defs,
            })
        };
        let visible = kernel("splat visible dispatch", &layout, "visible_dispatch", &[]);
        let visible_preparing = preparing.as_deref().map(|defs| {
            kernel(
                "splat visible dispatch and depth sort setup",
                &preparing_layout,
                "visible_dispatch",
                defs,
            )
        });
        let chunks = kernel("splat tile chunk dispatch", &layout, "chunk_dispatch", &[]);
        Some(Self {
            layout: builder.layout(&layout),
            preparing_layout: builder.layout(&preparing_layout),
            visible: visible?,
            visible_preparing: visible_preparing.map_or(Some(None), |kernel| kernel.map(Some))?,
            chunks: chunks?,
        })
    }

    /// `capacities` is a uniform of three u32: the pair capacity, the splat capacity,
    /// the tile chunk capacity. `depth_sort`: the band's depth sort, which
    /// `visible_dispatch` prepares where it can.
    pub fn bind_groups(
        &self,
        device: &Device,
        (counters, capacities): (&Buffer, &Buffer),
        depth_sort: &SortBuffers,
    ) -> IndirectGroups {
        let plain = [counters.as_entire_binding(), capacities.as_entire_binding()];
        let preparation = depth_sort
            .preparation()
            .filter(|_| self.visible_preparing.is_some());
        let preparing = preparation.map(|[state, status]| {
            let [counters, capacities] = plain.clone();
            bind_group(
                device,
                "splat indirect args and depth sort",
                &self.preparing_layout,
                &[counters, capacities, state, status],
            )
        });
        IndirectGroups {
            plain: bind_group(device, "splat indirect args", &self.layout, &plain),
            preparing,
        }
    }

    /// After preprocess: clamps the visible count to the capacity, and the grids over
    /// the kept splats and over their blocks of the pair slots' scan; and prepares the
    /// depth sort where `groups` say so.
    pub fn encode_visible(&self, pass: &mut ComputePass<'_>, groups: &IndirectGroups) {
        match (&groups.preparing, &self.visible_preparing) {
            (Some(group), Some(pipeline)) => {
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, group, &[]);
            }
            _ => {
                pass.set_pipeline(&self.visible);
                pass.set_bind_group(0, &groups.plain, &[]);
            }
        }
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// After the tile order: the grid over the tile chunks it filed, one workgroup
    /// each, within the chunk capacity.
    pub fn encode_chunks(&self, pass: &mut ComputePass<'_>, groups: &IndirectGroups) {
        pass.set_pipeline(&self.chunks);
        pass.set_bind_group(0, &groups.plain, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
}
