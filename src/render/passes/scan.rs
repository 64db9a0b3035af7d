//! Exclusive prefix sum of `u32` values on the GPU, in place, for a count that only the
//! GPU knows.
//!
//! The scan is hierarchical (reduce-then-scan): level 0 is the values, level `k + 1`
//! holds one sum per block of [`SCAN_BLOCK`] values of level `k`, up to a top level
//! that fits in one block. Per frame:
//!
//! 1. `setup` (one thread) reads n and writes each level's count and indirect
//!    dispatch arguments (2-D grids, so no dispatch exceeds the per-dimension limit);
//! 2. `reduce` for every level below the top, bottom up;
//! 3. `top`: one workgroup scans the top level and writes the grand total;
//! 4. `downsweep` for every level below the top, top down: each block scans its
//!    values and adds its offset from the level above.
//!
//! Level 0 is read twice and written once. The hierarchy depth follows the capacity
//! (two levels up to 1M values, three up to 1G).
//!
//! The kernels (`scan_setup.wgsl`, `scan.wgsl`) are composed through the crate's
//! `ShaderLibrary`, with the sizes below as shader defs (`shared_defs`) and a scan's
//! grid limit as `SCAN_MAX_GROUPS_X`; the records of a scan's state are
//! `ScanConfig` and `ScanLevel`, twins of the structs of `scan_state.wgsl`.

use std::mem::{offset_of, size_of};
use std::num::NonZeroU64;

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use bevy::render::render_resource::BindGroupLayoutDescriptor;

use super::builder::{DirectBuilder, EntryShader, Kernel, PipelineBuilder};
use super::common::{ShaderChecks, buffer_entry, storage, word_binding};
use super::library::{ShaderDef, ShaderLibrary, WgslFile, wgsl_file};

/// Threads per workgroup of the scan kernels.
pub const SCAN_WORKGROUP_SIZE: u32 = 256;
/// Values per thread.
pub const SCAN_ITEMS_PER_THREAD: u32 = 4;
/// Values scanned by one workgroup.
pub const SCAN_BLOCK: u32 = SCAN_WORKGROUP_SIZE * SCAN_ITEMS_PER_THREAD;
/// Threads raking the per-thread sums (`RAKE * RAKE == SCAN_WORKGROUP_SIZE`).
const RAKE: u32 = 16;
const _: () = assert!(RAKE * RAKE == SCAN_WORKGROUP_SIZE);

/// Size of one record of a state buffer. 256 bytes is a multiple of every allowed
/// `min_storage_buffer_offset_alignment`, so records can be bound on their own.
const RECORD_BYTES: u64 = 256;

/// Record 0 of a scan's state, written by the host (`ScanConfig` in
/// `scan_state.wgsl`, which says what each field holds).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct ScanConfig {
    pub count_word: u32,
    pub capacity: u32,
    pub levels: u32,
}

/// Record 1 + k of a scan's state: level k, written by the setup kernel but for
/// `total_word` (`ScanLevel` in `scan_state.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct ScanLevel {
    pub count: u32,
    pub grid_x: u32,
    pub grid_y: u32,
    pub grid_z: u32,
    pub groups: u32,
    pub total_word: u32,
}

const _: () = assert!(size_of::<ScanConfig>() as u64 <= RECORD_BYTES);
const _: () = assert!(size_of::<ScanLevel>() as u64 <= RECORD_BYTES);

/// Byte offset, inside a level's record, of its indirect dispatch arguments.
const ARGS_IN_RECORD: u64 = offset_of!(ScanLevel, grid_x) as u64;

/// The setup kernel, the reduce, top and downsweep kernels, and the module of the
/// records they share (`bevy_splat::scan::state`, in the shader library).
pub(crate) const SETUP_WGSL: WgslFile = wgsl_file!("scan_setup.wgsl");
pub(crate) const SCAN_WGSL: WgslFile = wgsl_file!("scan.wgsl");

pub(crate) const SETUP_SHADER: EntryShader = EntryShader {
    file: SETUP_WGSL,
    checks: ShaderChecks::All,
};
/// Every loop runs a constant count or up to n; every index is below n, the capacity
/// or a workgroup array's length (tests/gpu_sort.rs).
pub(crate) const SCAN_SHADER: EntryShader = EntryShader {
    file: SCAN_WGSL,
    checks: ShaderChecks::None,
};

/// The sizes the scan's modules are composed with, as shader defs (every module gets
/// them); a scan's grid limit is its own, `SCAN_MAX_GROUPS_X`.
pub(crate) fn shared_defs() -> [ShaderDef; 7] {
    [
        ShaderDef::UInt("SCAN_WORKGROUP_SIZE", SCAN_WORKGROUP_SIZE),
        ShaderDef::UInt("SCAN_ITEMS_PER_THREAD", SCAN_ITEMS_PER_THREAD),
        ShaderDef::UInt("SCAN_BLOCK", SCAN_BLOCK),
        ShaderDef::UInt("SCAN_RAKE", RAKE),
        ShaderDef::UInt("SCAN_RECORD_BYTES", RECORD_BYTES as u32),
        ShaderDef::UInt(
            "SCAN_CONFIG_PAD_WORDS",
            ((RECORD_BYTES as usize - size_of::<ScanConfig>()) / 4) as u32,
        ),
        ShaderDef::UInt(
            "SCAN_LEVEL_PAD_WORDS",
            ((RECORD_BYTES as usize - size_of::<ScanLevel>()) / 4) as u32,
        ),
    ]
}

/// The pipelines of the prefix scan; create once per device.
pub struct PrefixScan {
    setup_layout: wgpu::BindGroupLayout,
    level_layout: wgpu::BindGroupLayout,
    top_layout: wgpu::BindGroupLayout,
    setup: wgpu::ComputePipeline,
    reduce: wgpu::ComputePipeline,
    top: wgpu::ComputePipeline,
    downsweep: wgpu::ComputePipeline,
}

/// Per-use buffers of a scan: the block sums of every level, the indirect dispatch
/// arguments, and the bind groups over the caller's buffers.
pub struct ScanBuffers {
    capacity: u32,
    state: wgpu::Buffer,
    /// Levels 1.. (level 0 is the caller's values).
    levels: Vec<wgpu::Buffer>,
    setup_group: wgpu::BindGroup,
    /// One per level below the top, bottom up.
    level_groups: Vec<wgpu::BindGroup>,
    top_group: wgpu::BindGroup,
}

impl PrefixScan {
    /// The scan's pipelines for `device`, its grids within the device's limit on
    /// workgroups per dimension.
    pub fn new(device: &wgpu::Device) -> Self {
        Self::with_max_workgroups_per_dimension(
            device,
            device.limits().max_compute_workgroups_per_dimension,
        )
    }

    /// Like [`PrefixScan::new`], with the dispatches' grids limited to `max_groups_x`
    /// workgroups along x (more rows instead). Tests use a small limit to exercise the
    /// 2-D grid path without 65,536 workgroups' worth of data.
    pub fn with_max_workgroups_per_dimension(device: &wgpu::Device, max_groups_x: u32) -> Self {
        // A library with the scan's own sizes: it composes no other module.
        let mut library = ShaderLibrary::new(shared_defs().to_vec());
        Self::build(&mut DirectBuilder::new(device, &mut library), max_groups_x)
            .expect("a direct builder compiles every kernel at once")
    }

    /// The scan's pipelines from `builder`, or `None` while any is being compiled.
    pub(crate) fn build(builder: &mut dyn PipelineBuilder, max_groups_x: u32) -> Option<Self> {
        let max_groups_x = max_groups_x.max(1);
        let setup_layout = BindGroupLayoutDescriptor::new(
            "prefix scan setup",
            &[storage(0, true), storage(1, false)],
        );
        let level_layout = BindGroupLayoutDescriptor::new(
            "prefix scan level",
            &[storage(0, false), storage(1, false), storage(2, true)],
        );
        let top_layout = BindGroupLayoutDescriptor::new(
            "prefix scan top",
            &[storage(0, false), storage(2, true), storage(3, false)],
        );
        let setup_defs = [ShaderDef::UInt("SCAN_MAX_GROUPS_X", max_groups_x)];
        let setup = builder.kernel(&Kernel {
            label: "prefix scan setup",
            layout: &setup_layout,
            shader: SETUP_SHADER,
            entry_point: "setup",
            defs: &setup_defs,
        });
        let mut kernel = |label, layout, entry_point| {
            builder.kernel(&Kernel {
                label,
                layout,
                shader: SCAN_SHADER,
                entry_point,
                defs: &[],
            })
        };
        let reduce = kernel("prefix scan reduce", &level_layout, "reduce");
        let top = kernel("prefix scan top", &top_layout, "top");
        let downsweep = kernel("prefix scan downsweep", &level_layout, "downsweep");
        Some(Self {
            setup_layout: builder.layout(&setup_layout),
            level_layout: builder.layout(&level_layout),
            top_layout: builder.layout(&top_layout),
            setup: setup?,
            reduce: reduce?,
            top: top?,
            downsweep: downsweep?,
        })
    }

    /// Records the scan into an open compute pass. `values[0..n]` becomes its
    /// exclusive prefix sum (wrapping on overflow); `values[n..]` is left untouched, and
    /// the sum of the n inputs is written to the `total` slot.
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>, buffers: &ScanBuffers) {
        pass.push_debug_group("prefix scan");
        self.encode_setup(pass, buffers);
        self.encode_levels(pass, buffers);
        pass.pop_debug_group();
    }

    /// The setup kernel alone: reads n and writes the dispatch arguments.
    pub(crate) fn encode_setup(&self, pass: &mut wgpu::ComputePass<'_>, buffers: &ScanBuffers) {
        pass.set_pipeline(&self.setup);
        pass.set_bind_group(0, &buffers.setup_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// The scan proper, using the dispatch arguments of the last setup. The radix sort
    /// runs setup once and this once per digit pass.
    pub(crate) fn encode_levels(&self, pass: &mut wgpu::ComputePass<'_>, buffers: &ScanBuffers) {
        let below_top = buffers.level_groups.len();
        pass.set_pipeline(&self.reduce);
        for (k, group) in buffers.level_groups.iter().enumerate() {
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups_indirect(&buffers.state, level_args_offset(k));
        }
        pass.set_pipeline(&self.top);
        pass.set_bind_group(0, &buffers.top_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        pass.set_pipeline(&self.downsweep);
        for k in (0..below_top).rev() {
            pass.set_bind_group(0, &buffers.level_groups[k], &[]);
            pass.dispatch_workgroups_indirect(&buffers.state, level_args_offset(k));
        }
    }
}

impl ScanBuffers {
    /// For scanning up to `capacity` u32 values held in `values` (in place).
    /// `count` holds n (u32 at byte offset `count_offset`), n <= capacity (a larger n
    /// is clamped to the capacity). After the scan, the total sum of the n inputs is
    /// written as u32 into `total` at byte offset `total_offset`.
    ///
    /// Offsets need only be multiples of 4. `count` and `total` may be the same buffer.
    /// The first `capacity * 4` bytes of `values` are bound as one storage binding, so
    /// they must fit `max_storage_buffer_binding_size`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        device: &wgpu::Device,
        scan: &PrefixScan,
        capacity: u32,
        values: &wgpu::Buffer,
        count: &wgpu::Buffer,
        count_offset: u64,
        total: &wgpu::Buffer,
        total_offset: u64,
    ) -> Self {
        // Element capacity of every level: level k + 1 holds one sum per block of level k.
        let mut caps = vec![capacity];
        while *caps.last().unwrap() > SCAN_BLOCK {
            caps.push(caps.last().unwrap().div_ceil(SCAN_BLOCK));
        }
        let top = caps.len() - 1;

        let (count_binding, count_index) = word_binding(count, count_offset);
        let (total_binding, total_index) = word_binding(total, total_offset);

        // State: record 0 = config, record 1 + k = level k.
        let record = RECORD_BYTES as usize;
        let mut init = vec![0u8; record * (1 + caps.len())];
        let config = ScanConfig {
            count_word: count_index,
            capacity,
            levels: caps.len() as u32,
        };
        init[..size_of::<ScanConfig>()].copy_from_slice(bytemuck::bytes_of(&config));
        let level = ScanLevel {
            total_word: total_index,
            ..ScanLevel::default()
        };
        for k in 0..caps.len() {
            let at = record * (1 + k);
            init[at..at + size_of::<ScanLevel>()].copy_from_slice(bytemuck::bytes_of(&level));
        }
        let state = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("prefix scan state"),
            contents: &init,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
        });

        let levels: Vec<wgpu::Buffer> = caps[1..]
            .iter()
            .enumerate()
            .map(|(k, &cap)| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("prefix scan level {}", k + 1)),
                    size: u64::from(cap.max(1)) * 4,
                    usage: wgpu::BufferUsages::STORAGE,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let values_binding = wgpu::BufferBinding {
            buffer: values,
            offset: 0,
            size: NonZeroU64::new((u64::from(capacity) * 4).clamp(4, values.size())),
        };
        let level_binding = |k: usize| -> wgpu::BufferBinding<'_> {
            if k == 0 {
                values_binding.clone()
            } else {
                levels[k - 1].as_entire_buffer_binding()
            }
        };
        let record_binding = |k: usize| wgpu::BufferBinding {
            buffer: &state,
            offset: RECORD_BYTES * (1 + k as u64),
            size: NonZeroU64::new(RECORD_BYTES),
        };

        let setup_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("prefix scan setup"),
            layout: &scan.setup_layout,
            entries: &[
                buffer_entry(0, count_binding),
                buffer_entry(1, state.as_entire_buffer_binding()),
            ],
        });
        let level_groups = (0..top)
            .map(|k| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&format!("prefix scan level {k}")),
                    layout: &scan.level_layout,
                    entries: &[
                        buffer_entry(0, level_binding(k)),
                        buffer_entry(1, level_binding(k + 1)),
                        buffer_entry(2, record_binding(k)),
                    ],
                })
            })
            .collect();
        let top_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("prefix scan top"),
            layout: &scan.top_layout,
            entries: &[
                buffer_entry(0, level_binding(top)),
                buffer_entry(2, record_binding(top)),
                buffer_entry(3, total_binding),
            ],
        });
        Self {
            capacity,
            state,
            levels,
            setup_group,
            level_groups,
            top_group,
        }
    }

    /// Most values one scan handles.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Bytes of GPU memory these buffers hold (not counting the caller's buffers).
    pub fn gpu_bytes(&self) -> u64 {
        self.state.size() + self.levels.iter().map(wgpu::Buffer::size).sum::<u64>()
    }
}

fn level_args_offset(level: usize) -> u64 {
    RECORD_BYTES * (1 + level as u64) + ARGS_IN_RECORD
}
