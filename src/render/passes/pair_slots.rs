//! pair slots: once the depth sort has run (the radix sort of the visible splats'
//! depth keys, over the top [`DEPTH_KEY_BITS`] bits of the frame's depth-key range,
//! whose values are each splat's slot and pair count, `depth_value` in
//! `common.wgsl`), each visible splat's first pair slot in depth order: the exclusive
//! prefix sum of the splats' pair counts taken nearest first, and its total, the
//! pairs the view needs (`pairs_needed` of the counters).
//!
//! Sorting splats by depth once and their (splat, tile) pairs by tile alone moves
//! less data than sorting every pair by a tile-and-depth key: at 1080p that was six
//! 8-bit passes over the pairs, now three over the visible splats and two over the
//! pairs.
//!
//! The counts travel in the sort's values, so they are read in depth order, one
//! coalesced read each. Gathered by slot through sorted slots, each was a random read
//! (the scan stage took 1.53 ms at 64 M splats). Only a count too large for a
//! value's 4 bits is still read by slot.
//!
//! Three dispatches (`pair_slots.wgsl`): each block's counts with their sum, one
//! workgroup's scan of the block sums (which also clamps the total to the pair
//! capacity and writes the grid over the kept pairs), and each block's scan of its
//! counts. They replaced a gather and the hierarchical
//! [`PrefixScan`](super::scan::PrefixScan) (its setup, its top, and a reduce and a
//! downsweep per level below the top: five dispatches with the gather, seven above a
//! million splats), and read the counts once less.

use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroup, BindGroupLayout, Buffer, ComputePass, ComputePipeline, Device};

use super::builder::{EntryShader, Kernel, PipelineBuilder};
use super::common::{ShaderChecks, bind_group, storage, uniform};
#[cfg(doc)]
use super::indirect::IndirectPass;
use super::indirect::SCAN_DISPATCH_OFFSET;
use super::library::{ShaderDef, wgsl_file};
#[cfg(doc)]
use super::preprocess::DEPTH_KEY_BITS;
use super::radix_sort::SortBuffers;
use super::radix_sort::kernels::preparing_defs;
use super::scan::SCAN_BLOCK;

/// Every loop runs a constant count or up to the kept splats' blocks; every index is
/// below the kept splats (the depth order's slots are below them too), twice the
/// splat capacity (a spilled pair count, `spilled_pairs_word`), their blocks,
/// a workgroup array's length or (preparing the bin sort) the sort status's fixed
/// arrays of counters and digit totals.
pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("pair_slots.wgsl"),
    checks: ShaderChecks::None,
};

/// The bytes of the block sums for up to `splats` visible splats.
pub fn block_sums_bytes(splats: u32) -> u64 {
    u64::from(splats.div_ceil(SCAN_BLOCK).max(1)) * 4
}

pub struct PairSlotsPass {
    /// The counters read-only (the blocks' grid comes from them), writable, and
    /// writable beside the bin sort's state and status (`PREPARES_SORT`).
    layouts: [BindGroupLayout; 3],
    count_blocks: ComputePipeline,
    scan_blocks: ComputePipeline,
    /// `scan_blocks` that also prepares the bin sort, built for a one-sweep sort.
    scan_blocks_preparing: Option<ComputePipeline>,
    scan_within: ComputePipeline,
}

/// A band's bind groups of the pair slots: the blocks' kernels read the counters,
/// the scan of the block sums writes the pairs the view needs into them, and where it
/// can prepares the bin sort.
pub struct PairSlotsGroups {
    blocks: BindGroup,
    block_sums: BindGroup,
    /// Whether `block_sums` binds the bin sort's state and status too.
    prepares_sort: bool,
}

impl PairSlotsGroups {
    /// Whether the scan of the block sums prepares the bin sort, which is then
    /// recorded with `RadixSort::encode_prepared`.
    pub fn prepares_sort(&self) -> bool {
        self.prepares_sort
    }
}

impl PairSlotsPass {
    /// `onesweep_sort`: the grid limit of the views' radix sort where it is a one-sweep
    /// sort, which `scan_blocks` can then prepare; `None` for a classic sort.
    pub fn new(builder: &mut dyn PipelineBuilder, onesweep_sort: Option<u32>) -> Option<Self> {
        let entries = |counters_read_only| {
            [
                storage(0, counters_read_only),
                storage(1, true),
                storage(2, true),
                storage(3, false),
                storage(4, false),
                uniform(5, false),
                storage(6, false),
                storage(7, false),
            ]
        };
        let blocks = BindGroupLayoutDescriptor::new("splat pair slots", &entries(true)[..6]);
        let sums = BindGroupLayoutDescriptor::new("splat pair block sums", &entries(false)[..6]);
        let sums_and_sort =
            BindGroupLayoutDescriptor::new("splat pair block sums and bin sort", &entries(false));
        let writes = [ShaderDef::Flag("WRITES_PAIRS_NEEDED")];
        let preparing = onesweep_sort.map(|max_groups_x| {
            let mut defs = writes.to_vec();
            defs.extend(preparing_defs(max_groups_x, 6, 7));
            defs
        });
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
        let scan_blocks = kernel("splat pair block sums", &sums, "scan_blocks", &writes);
        let scan_blocks_preparing = preparing.as_deref().map(|defs| {
            kernel(
                "splat pair block sums and bin sort setup",
                &sums_and_sort,
                "scan_blocks",
                defs,
            )
        });
        let scan_within = kernel("splat pair slots", &blocks, "scan_within", &[]);
        Some(Self {
            layouts: [
                builder.layout(&blocks),
                builder.layout(&sums),
                builder.layout(&sums_and_sort),
            ],
            count_blocks: count_blocks?,
            scan_blocks: scan_blocks?,
            scan_blocks_preparing: scan_blocks_preparing
                .map_or(Some(None), |kernel| kernel.map(Some))?,
            scan_within: scan_within?,
        })
    }

    /// `by_depth` are the depth sort's output values (each splat's slot and pair
    /// count, nearest first); their pair counts become `first_pair_slots` in that
    /// order, those too large for a value read from `spilled_pairs` (the preprocess's
    /// buffer of depth keys, where they lie after the splat capacity). `block_sums`
    /// holds [`block_sums_bytes`] for the splat capacity. `capacities` is the band's
    /// uniform of the indirect kernels ([`IndirectPass::bind_groups`]): x, the pair
    /// capacity, y, the splat capacity.
    /// `bin_sort`: the band's sort of the pairs by bin, which the scan of the block
    /// sums prepares where it can.
    pub fn bind_groups(
        &self,
        device: &Device,
        (counters, capacities): (&Buffer, &Buffer),
        (by_depth, spilled_pairs): (wgpu::BufferBinding<'_>, &Buffer),
        (first_pair_slots, block_sums): (&Buffer, &Buffer),
        bin_sort: &SortBuffers,
    ) -> PairSlotsGroups {
        let mut entries = vec![
            counters.as_entire_binding(),
            wgpu::BindingResource::Buffer(by_depth),
            spilled_pairs.as_entire_binding(),
            first_pair_slots.as_entire_binding(),
            block_sums.as_entire_binding(),
            capacities.as_entire_binding(),
        ];
        let [blocks_layout, sums_layout, preparing_layout] = &self.layouts;
        let blocks = bind_group(device, "splat pair slots", blocks_layout, &entries[..6]);
        let preparation = bin_sort
            .preparation()
            .filter(|_| self.scan_blocks_preparing.is_some());
        let prepares_sort = preparation.is_some();
        let sums_layout = match preparation {
            Some(sort) => {
                entries.extend(sort);
                preparing_layout
            }
            None => sums_layout,
        };
        PairSlotsGroups {
            blocks,
            block_sums: bind_group(device, "splat pair block sums", sums_layout, &entries),
            prepares_sort,
        }
    }

    /// A workgroup per block of kept visible splats, sized on the GPU, then one, then
    /// one per block again.
    pub fn encode(&self, pass: &mut ComputePass<'_>, groups: &PairSlotsGroups, counters: &Buffer) {
        pass.set_bind_group(0, &groups.blocks, &[]);
        pass.set_pipeline(&self.count_blocks);
        pass.dispatch_workgroups_indirect(counters, SCAN_DISPATCH_OFFSET);
        pass.set_bind_group(0, &groups.block_sums, &[]);
        let scan_blocks = match &self.scan_blocks_preparing {
            Some(preparing) if groups.prepares_sort => preparing,
            _ => &self.scan_blocks,
        };
        pass.set_pipeline(scan_blocks);
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
    use crate::render::passes::common::WORKGROUP_SIZE;
    use crate::render::passes::indirect::{
        DEPTH_KEY_RANGE_OFFSET, IndirectPass, PAIR_DISPATCH_OFFSET, PAIRS_KEPT_OFFSET,
        PAIRS_NEEDED_OFFSET, VISIBLE_KEPT_OFFSET, ViewCounters,
    };
    use crate::render::passes::preprocess::DEPTH_KEY_BITS;
    use crate::render::passes::radix_sort::{RadixSort, SortAlgorithm, SortKey, SortValues};
    use crate::render::passes::shader_library;
    use crate::render::view::bands::MAX_SLOTS;

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
    /// block edges, and past the SCAN_BLOCK block sums one step of `scan_blocks` takes;
    /// the counts ride in the depth values, those too large for them (more than half
    /// of these) read by slot from a stand-in for the depth keys' buffer. The chain
    /// runs as a frame runs it with one-sweep sorts (an NVIDIA or AMD GPU's; lavapipe's
    /// frames sort classically): `visible_dispatch` prepares the depth sort,
    /// whose order the pair slots follow, and `scan_blocks` prepares the bin sort,
    /// which then sorts the kept pairs' keys; both sorts run without a setup of their
    /// own and match the CPU's stable sorts.
    #[test]
    fn pair_slots_are_the_counts_scanned_in_depth_order() {
        let Some((device, queue)) = device() else {
            eprintln!("no GPU adapter: skipped");
            return;
        };
        let mut library = shader_library();
        let mut builder = DirectBuilder::new(&device, &mut library);
        let onesweep = Some(device.limits().max_compute_workgroups_per_dimension);
        let pass = PairSlotsPass::new(&mut builder, onesweep).expect("compiles at once");
        let indirect = IndirectPass::new(&mut builder, onesweep).expect("compiles at once");
        let sort = RadixSort::with_key(&device, SortKey::U32, SortAlgorithm::OneSweep);
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
            // Depth keys within 2^20 of a base, so the depth sort's 24 bits order
            // them exactly; many repeat, so its stability shows.
            let base = 0x1234_5678;
            let depth_keys: Vec<u32> = (0..capacity).map(|_| base + next(1 << 20) / 64).collect();
            let mut by_depth: Vec<u32> = (0..kept).collect();
            by_depth.sort_by_key(|&slot| depth_keys[slot as usize]);
            let (least, most) = by_depth
                .first()
                .zip(by_depth.last())
                .map_or((0, 0), |(l, m)| {
                    (depth_keys[*l as usize], depth_keys[*m as usize])
                });

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
            let mut start = ViewCounters {
                visible,
                ..Default::default()
            };
            start.depth_key_ranges[0].max = most;
            start.depth_key_ranges[0].min_complement = !least;
            let counters = upload(
                bytemuck::cast_slice(&[start]),
                storage | BufferUsages::INDIRECT,
            );
            // Every other case keeps fewer pairs than it needs.
            let pair_capacity = if capacity % 2 == 0 { u32::MAX } else { 1000 };
            let capacities = upload(&[pair_capacity, capacity, 0, 0], BufferUsages::UNIFORM);
            // The depth values (`depth_value` in `common.wgsl`), and a stand-in for the
            // depth keys' buffer with the spilled counts after the capacity
            // (`spilled_pairs_word`), every other word a poison that would show in
            // the sums.
            let slot_bits = MAX_SLOTS.trailing_zeros();
            let spilled_at = (1 << (u32::BITS - slot_bits)) - 1;
            let depth_values: Vec<u32> = (0..capacity)
                .map(|slot| slot | (counts[slot as usize].min(spilled_at) << slot_bits))
                .collect();
            let mut keys_and_spills = vec![u32::MAX; 2 * capacity as usize];
            for (slot, &count) in counts.iter().enumerate() {
                if count >= spilled_at {
                    keys_and_spills[capacity as usize + slot] = count;
                }
            }
            assert!(
                capacity < 100 || counts.iter().any(|&c| c >= spilled_at),
                "some counts spill"
            );
            let spilled_buffer = upload(&keys_and_spills, storage);
            let slots = upload(&vec![u32::MAX; capacity as usize], storage);
            let sums = upload(
                &vec![u32::MAX; (block_sums_bytes(capacity) / 4) as usize],
                storage,
            );
            let depth_sort = SortBuffers::with_key_range(
                &device,
                &sort,
                capacity.max(1),
                &counters,
                VISIBLE_KEPT_OFFSET,
                DEPTH_KEY_RANGE_OFFSET,
                DEPTH_KEY_BITS,
                SortValues::Given,
            );
            queue.write_buffer(&depth_sort.keys[0], 0, bytemuck::cast_slice(&depth_keys));
            queue.write_buffer(
                &depth_sort.values[0],
                0,
                bytemuck::cast_slice(&depth_values),
            );
            let total: u32 = by_depth.iter().map(|&slot| counts[slot as usize]).sum();
            let pairs_kept = total.min(pair_capacity);
            let bin_keys: Vec<u32> = (0..pairs_kept).map(|_| next(1 << 13)).collect();
            let bin_sort = SortBuffers::new(
                &device,
                &sort,
                pairs_kept.max(1),
                &counters,
                PAIRS_KEPT_OFFSET,
            );
            let indices: Vec<u32> = (0..pairs_kept).collect();
            queue.write_buffer(&bin_sort.keys[0], 0, bytemuck::cast_slice(&bin_keys));
            queue.write_buffer(&bin_sort.values[0], 0, bytemuck::cast_slice(&indices));
            assert!(depth_sort.preparation().is_some() && bin_sort.preparation().is_some());

            let indirect_groups =
                indirect.bind_groups(&device, (&counters, &capacities), &depth_sort);
            assert!(indirect_groups.prepares_depth_sort());
            let depth_output = RadixSort::output_index(DEPTH_KEY_BITS);
            let group = pass.bind_groups(
                &device,
                (&counters, &capacities),
                (depth_sort.value_binding(depth_output), &spilled_buffer),
                (&slots, &sums),
                &bin_sort,
            );
            assert!(group.prepares_sort());
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut compute = encoder.begin_compute_pass(&Default::default());
                indirect.encode_visible(&mut compute, &indirect_groups);
                sort.encode_prepared(&mut compute, &depth_sort, DEPTH_KEY_BITS);
                pass.encode(&mut compute, &group, &counters);
                sort.encode_prepared(&mut compute, &bin_sort, 13);
            }
            queue.submit([encoder.finish()]);

            let case = format!("{visible} visible, capacity {capacity}");
            let sorted = read_back(&device, &queue, &depth_sort.values[depth_output]);
            let want_sorted: Vec<u32> = by_depth
                .iter()
                .map(|&slot| depth_values[slot as usize])
                .collect();
            assert_eq!(
                sorted[..kept as usize],
                want_sorted[..],
                "{case}: the depth order"
            );
            let mut want = Vec::with_capacity(capacity as usize);
            let mut sum = 0u32;
            for &slot in &by_depth {
                want.push(sum);
                sum += counts[slot as usize];
            }
            want.resize(capacity as usize, u32::MAX);
            let got = read_back(&device, &queue, &slots);
            let first_wrong = got.iter().zip(&want).position(|(g, w)| g != w);
            assert_eq!(first_wrong, None, "{case}");
            let words = read_back(&device, &queue, &counters);
            let word = |offset: u64| words[(offset / 4) as usize];
            assert_eq!(word(PAIRS_NEEDED_OFFSET), total, "{case}: the pairs needed");
            assert_eq!(
                word(PAIRS_KEPT_OFFSET),
                pairs_kept,
                "{case}: the pairs kept"
            );
            let grid = [0, 4, 8].map(|at| word(PAIR_DISPATCH_OFFSET + at));
            let groups = pairs_kept.div_ceil(WORKGROUP_SIZE);
            assert_eq!(
                grid,
                [groups, u32::from(groups > 0), 1],
                "{case}: the pair grid"
            );

            let mut by_bin = indices;
            by_bin.sort_by_key(|&pair| bin_keys[pair as usize]);
            let bin_output = RadixSort::output_index(13);
            let sorted = read_back(&device, &queue, &bin_sort.values[bin_output]);
            assert_eq!(
                sorted[..pairs_kept as usize],
                by_bin[..],
                "{case}: the bin order"
            );
        }
    }
}
