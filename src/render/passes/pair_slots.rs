//! pair slots: once the depth sort (the radix sort of the visible splats' depth keys,
//! over the top [`DEPTH_KEY_BITS`] bits of the frame's depth-key range, the values
//! being the slots) has run, each visible splat's first pair slot in depth order: the
//! exclusive prefix sum of the splats' pair counts taken nearest first, and its total,
//! the pairs the view needs (`pairs_needed` of the counters).
//!
//! Sorting splats by depth once and their (splat, tile) pairs by tile alone moves
//! less data than sorting every pair by a tile-and-depth key: at 1080p that was six
//! 8-bit passes over the pairs, now three over the visible splats and two over the
//! pairs.
//!
//! Three dispatches (`pair_slots.wgsl`): the gather of each block's counts with its
//! sum, one workgroup's scan of the block sums, and each block's scan of its counts.
//! They replaced a gather and the hierarchical [`PrefixScan`](super::scan::PrefixScan)
//! (its setup, its top, and a reduce and a downsweep per level below the top: five
//! dispatches with the gather, seven above a million splats), and read the counts
//! once less.

use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::common::{ShaderChecks, bind_group, storage};
use super::indirect::SCAN_DISPATCH_OFFSET;
use super::library::{ShaderDef, wgsl_file};
#[cfg(doc)]
use super::preprocess::DEPTH_KEY_BITS;
use super::scan::SCAN_BLOCK;

/// Every loop runs a constant count or up to the kept splats' blocks; every index is
/// below the kept splats (the depth order's slots are below them too), their blocks or
/// a workgroup array's length.
pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("pair_slots.wgsl"),
    checks: ShaderChecks::None,
};

/// The bytes of the block sums for up to `splats` visible splats.
pub fn block_sums_bytes(splats: u32) -> u64 {
    u64::from(splats.div_ceil(SCAN_BLOCK).max(1)) * 4
}

pub struct PairSlotsPass {
    /// The counters read-only (the blocks' grid comes from them), and writable.
    layouts: [BindGroupLayout; 2],
    count_blocks: ComputePipeline,
    scan_blocks: ComputePipeline,
    scan_within: ComputePipeline,
}

/// A band's bind groups of the pair slots: the blocks' kernels read the counters,
/// the scan of the block sums writes the pairs the view needs into them.
pub struct PairSlotsGroups {
    blocks: BindGroup,
    block_sums: BindGroup,
}

impl PairSlotsPass {
    pub fn new(builder: &mut dyn PipelineBuilder) -> Option<Self> {
        let layout = |label, counters_read_only| {
            BindGroupLayoutDescriptor::new(
                label,
                &[
                    storage(0, counters_read_only),
                    storage(1, true),
                    storage(2, true),
                    storage(3, false),
                    storage(4, false),
                ],
            )
        };
        let blocks = layout("splat pair slots", true);
        let sums = layout("splat pair block sums", false);
        let mut kernel = |label, layout, entry_point, defs| {
            builder.kernel(&Kernel {
                label,
                layout,
                shader: SHADER,
                entry_point,
                defs,
            })
        };
        let count_blocks = kernel("splat pair counts by block", &blocks, "count_blocks", &[]);
        let scan_blocks = kernel(
            "splat pair block sums",
            &sums,
            "scan_blocks",
            &[ShaderDef::Flag("WRITES_PAIRS_NEEDED")],
        );
        let scan_within = kernel("splat pair slots", &blocks, "scan_within", &[]);
        Some(Self {
            layouts: [builder.layout(&blocks), builder.layout(&sums)],
            count_blocks: count_blocks?,
            scan_blocks: scan_blocks?,
            scan_within: scan_within?,
        })
    }

    /// `by_depth` are the depth sort's output values (slots, nearest first); their
    /// `pair_counts` become `first_pair_slots` in that order. `block_sums` holds
    /// [`block_sums_bytes`] for the splat capacity.
    pub fn bind_groups(
        &self,
        device: &Device,
        counters: &Buffer,
        (by_depth, pair_counts): (wgpu::BufferBinding<'_>, &Buffer),
        (first_pair_slots, block_sums): (&Buffer, &Buffer),
    ) -> PairSlotsGroups {
        let [blocks, sums] = self.layouts.each_ref().map(|layout| {
            bind_group(
                device,
                "splat pair slots",
                layout,
                &[
                    counters.as_entire_binding(),
                    wgpu::BindingResource::Buffer(by_depth.clone()),
                    pair_counts.as_entire_binding(),
                    first_pair_slots.as_entire_binding(),
                    block_sums.as_entire_binding(),
                ],
            )
        });
        PairSlotsGroups {
            blocks,
            block_sums: sums,
        }
    }

    /// A workgroup per block of kept visible splats, sized on the GPU, then one, then
    /// one per block again.
    pub fn encode(&self, pass: &mut ComputePass<'_>, groups: &PairSlotsGroups, counters: &Buffer) {
        pass.set_bind_group(0, &groups.blocks, &[]);
        pass.set_pipeline(&self.count_blocks);
        pass.dispatch_workgroups_indirect(counters, SCAN_DISPATCH_OFFSET);
        pass.set_bind_group(0, &groups.block_sums, &[]);
        pass.set_pipeline(&self.scan_blocks);
        pass.dispatch_workgroups(1, 1, 1);
        pass.set_bind_group(0, &groups.blocks, &[]);
        pass.set_pipeline(&self.scan_within);
        pass.dispatch_workgroups_indirect(counters, SCAN_DISPATCH_OFFSET);
    }
}

#[cfg(test)]
mod tests {
    use wgpu::util::DeviceExt;
    use wgpu::{BufferUsages, Device, Queue};

    use super::*;
    use crate::render::passes::builder::DirectBuilder;
    use crate::render::passes::indirect::{IndirectPass, PAIRS_NEEDED_OFFSET, ViewCounters};
    use crate::render::passes::shader_library;

    /// This machine's first adapter (lavapipe in CI), or `None` without one.
    fn device() -> Option<(Device, Queue)> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        if wgpu::Backends::from_env().is_none() {
            desc.backends = wgpu::Backends::VULKAN;
        }
        let instance = wgpu::Instance::new(desc);
        let adapter = bevy::tasks::block_on(
            instance.request_adapter(&wgpu::RequestAdapterOptions::default()),
        )
        .ok()?;
        bevy::tasks::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .ok()
    }

    fn read_back(device: &Device, queue: &Queue, buffer: &Buffer) -> Vec<u32> {
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: buffer.size(),
            usage: BufferUsages::MAP_READ | BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
        queue.submit([encoder.finish()]);
        staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("the device polls");
        bytemuck::cast_slice(&staging.slice(..).get_mapped_range()).to_vec()
    }

    /// Every kept splat's first pair slot is the sum of the pair counts of the splats
    /// before it in depth order, and the counters' `pairs_needed` their total: across
    /// block edges, and past the SCAN_BLOCK block sums one step of `scan_blocks` takes.
    #[test]
    fn pair_slots_are_the_counts_scanned_in_depth_order() {
        let Some((device, queue)) = device() else {
            eprintln!("no GPU adapter: skipped");
            return;
        };
        let mut library = shader_library();
        let mut builder = DirectBuilder::new(&device, &mut library);
        let pass = PairSlotsPass::new(&mut builder).expect("compiles at once");
        let indirect = IndirectPass::new(&mut builder).expect("compiles at once");
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |bound: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(bound)) as u32
        };
        let big = SCAN_BLOCK * SCAN_BLOCK + 3 * SCAN_BLOCK / 2 + 7;
        for (visible, capacity) in [
            (0, 10),
            (1, 1),
            (SCAN_BLOCK - 1, SCAN_BLOCK),
            (SCAN_BLOCK + 1, 3 * SCAN_BLOCK),
            (5 * SCAN_BLOCK + 17, 5 * SCAN_BLOCK),
            (big, big),
        ] {
            let kept = visible.min(capacity);
            let counts: Vec<u32> = (0..capacity).map(|_| next(40)).collect();
            // A permutation of the kept slots, as the depth sort leaves them.
            let mut by_depth: Vec<u32> = (0..kept).collect();
            for i in (1..by_depth.len()).rev() {
                by_depth.swap(i, next(i as u32 + 1) as usize);
            }
            let storage = BufferUsages::STORAGE | BufferUsages::COPY_SRC;
            let upload = |words: &[u32], usage| {
                let contents: &[u8] = bytemuck::cast_slice(words);
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: if contents.is_empty() {
                        &[0; 4]
                    } else {
                        contents
                    },
                    usage,
                })
            };
            let start = ViewCounters {
                visible,
                ..Default::default()
            };
            let counters = upload(
                bytemuck::cast_slice(&[start]),
                storage | BufferUsages::INDIRECT,
            );
            let capacities = upload(&[u32::MAX, capacity, 0, 0], BufferUsages::UNIFORM);
            let by_depth_buffer = upload(&by_depth, storage);
            let counts_buffer = upload(&counts, storage);
            let slots = upload(&vec![u32::MAX; capacity as usize], storage);
            let sums = upload(
                &vec![u32::MAX; (block_sums_bytes(capacity) / 4) as usize],
                storage,
            );
            let indirect_group = indirect.bind_group(&device, &counters, &capacities);
            let group = pass.bind_groups(
                &device,
                &counters,
                (by_depth_buffer.as_entire_buffer_binding(), &counts_buffer),
                (&slots, &sums),
            );
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut compute = encoder.begin_compute_pass(&Default::default());
                indirect.encode_visible(&mut compute, &indirect_group);
                pass.encode(&mut compute, &group, &counters);
            }
            queue.submit([encoder.finish()]);

            let mut want = Vec::with_capacity(capacity as usize);
            let mut total = 0u32;
            for &slot in &by_depth {
                want.push(total);
                total = total.wrapping_add(counts[slot as usize]);
            }
            want.resize(capacity as usize, u32::MAX);
            let got = read_back(&device, &queue, &slots);
            let first_wrong = got.iter().zip(&want).position(|(g, w)| g != w);
            assert_eq!(first_wrong, None, "{visible} visible, capacity {capacity}");
            let words = read_back(&device, &queue, &counters);
            let needed = words[(PAIRS_NEEDED_OFFSET / 4) as usize];
            assert_eq!(needed, total, "{visible} visible: the pairs needed");
        }
    }
}
