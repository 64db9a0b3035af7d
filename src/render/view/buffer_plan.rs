//! The buffer plan: which of a band's four shared buffers holds which of the frame's
//! per-splat and per-pair arrays, from which step to which.
//!
//! The arrays of one frame outnumber the buffers: the depth sort's keys and values and
//! their scratch, the pair counts too large for a depth value, the splats by depth,
//! the first pair slots, the pair sort's keys and values and their scratch, and the
//! four tile lists.
//! Most live for a few steps, so four buffers hold them all, each array in a buffer
//! that no array living at the same time shares. [`placements`] is that plan as data;
//! the band's buffers are sized from it ([`SharedBuffers::new`]), every bind group
//! finds its arrays through it ([`SharedBuffers::buffer`], [`SharedBuffers::binding`],
//! which check that the array is alive at the step binding it), and the tests check
//! that no two arrays that overlap in one buffer are alive at the same step.

use wgpu::{Buffer, BufferBinding, BufferUsages, Device};

use crate::render::passes::common::buffer;
use crate::render::passes::radix_sort::{RadixSort, SortStorage};

/// A step of a band's frame that binds shared arrays, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// Writes the depth keys and values (each visible splat's slot and pair count).
    Preprocess,
    /// Sorts the visible splats by depth (ping-pong over its keys and values).
    DepthSort,
    /// Takes the pair counts in depth order and scans them into first pair slots.
    PairSlots,
    /// Writes each visible splat's pairs, in depth order.
    Duplicate,
    /// Sorts the pairs by bin (ping-pong over its keys and values).
    TileSort,
    /// Finds each bin's run in the sorted keys.
    TileRange,
    /// Splits each bin's run into its tiles' lists.
    TileSplit,
    /// Blends every tile's list.
    TileRender,
    /// Reads the tile lists under the pointers, after the render.
    Pick,
}

/// One of the frame's arrays that lives in a shared buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The visible splats' depth values, each its slot and pair count (`depth_value`
    /// in `common.wgsl`): the depth sort's input values, then its value scratch.
    DepthValues,
    /// The pair counts too large for a depth value, by slot, right after the depth
    /// keys (`spilled_pairs_word`), written and read through bindings of the whole
    /// buffer. Not beside the depth values: the pair slots write the first pair slots
    /// into that buffer, and wgpu lets no dispatch read a buffer through one binding
    /// while it writes it through another.
    SpilledPairs,
    /// The visible splats' depth keys: the depth sort's input.
    DepthKeys,
    /// The depth sort's other key buffer (its sorted keys end here, read by nobody).
    DepthKeysAlt,
    /// The depth sort's result: the depth values of the visible splats by depth.
    SortedDepthValues,
    /// Each visible splat's first pair slot, in depth order: the pair slots' scan of
    /// the counts the sorted depth values carry, which the duplicate reads.
    FirstPairSlots,
    /// The pairs' bin keys as the duplicate writes them: the pair sort's input (and,
    /// when the sort takes an even number of passes, its sorted keys).
    PairKeys,
    /// The pair sort's other key buffer.
    PairKeysAlt,
    /// The pairs' splat indices as the duplicate writes them.
    PairValues,
    /// The pair sort's other value buffer.
    PairValuesAlt,
    /// One of the four tile lists the tile split writes.
    TileList(u8),
}

/// Which part of a buffer an array takes, for a band of `splats` splats and `pairs`
/// pairs of capacity (4 bytes an element).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// One word per splat, from the start.
    Splats,
    /// One word per splat, right after the first [`Extent::Splats`] (not aligned:
    /// never bound on its own).
    SplatsAfterSplats,
    /// One word per pair, from the start.
    Pairs,
}

impl Extent {
    /// Its byte range in the buffer.
    pub fn bytes(self, splats: u32, pairs: u32) -> std::ops::Range<u64> {
        let splats = u64::from(splats.max(1)) * 4;
        let pairs = u64::from(pairs.max(1)) * 4;
        match self {
            Self::Splats => 0..splats,
            Self::SplatsAfterSplats => splats..2 * splats,
            Self::Pairs => 0..pairs,
        }
    }
}

/// Where one array lives: its buffer (0 to 3), its part of it, and the steps from the
/// one that first writes it to the last that reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub role: Role,
    pub buffer: usize,
    pub extent: Extent,
    pub first: Step,
    pub last: Step,
}

impl Placement {
    /// Whether the array is alive at `step`.
    pub fn alive_at(&self, step: Step) -> bool {
        (self.first..=self.last).contains(&step)
    }
}

/// How many buffers the arrays share.
pub const SHARED_BUFFERS: usize = 4;

/// Arrays that one step turns into the next in place: the tile split writes each
/// bin's first list over the sorted values it reads that bin's run from (each
/// workgroup reads its run whole before it writes). No other two arrays of one
/// buffer may be alive at one step.
pub const IN_PLACE: [(Role, Role); 2] = [
    (Role::PairValues, Role::TileList(0)),
    (Role::PairValuesAlt, Role::TileList(0)),
];

/// The plan for a frame whose pair sort leaves its result in buffer `pairs_sorted`
/// (0 or 1) of its ping-pong pairs ([`RadixSort::output_index`] of its key bits). The
/// depth sort's result lands in its second value buffer (checked by a test).
pub fn placements(pairs_sorted: usize) -> [Placement; 14] {
    use Extent::*;
    use Role::*;
    use Step::*;
    let place = |role, buffer, extent, first, last| Placement {
        role,
        buffer,
        extent,
        first,
        last,
    };
    // The pair sort's result is read by the tile range (keys) and the split (values);
    // its other buffers are free once the sort is done.
    let (keys_last, alt_keys_last, values_last, alt_values_last) = if pairs_sorted == 0 {
        (TileRange, TileSort, TileSplit, TileSort)
    } else {
        (TileSort, TileRange, TileSort, TileSplit)
    };
    // The lists take the sorted values (in place), then the sorted keys, then the
    // two scratch buffers (see `frame::band_frame`).
    let [list0, list1, list2, list3] = if pairs_sorted == 0 {
        [3, 1, 0, 2]
    } else {
        [2, 0, 1, 3]
    };
    [
        place(SortedDepthValues, 0, Splats, DepthSort, Duplicate),
        place(PairKeysAlt, 0, Pairs, TileSort, alt_keys_last),
        place(DepthKeys, 1, Splats, Preprocess, DepthSort),
        place(SpilledPairs, 1, SplatsAfterSplats, Preprocess, PairSlots),
        place(PairKeys, 1, Pairs, Duplicate, keys_last),
        place(DepthValues, 2, Splats, Preprocess, DepthSort),
        place(FirstPairSlots, 2, Splats, PairSlots, Duplicate),
        place(PairValuesAlt, 2, Pairs, TileSort, alt_values_last),
        place(DepthKeysAlt, 3, Splats, DepthSort, DepthSort),
        place(PairValues, 3, Pairs, Duplicate, values_last),
        place(TileList(0), list0, Pairs, TileSplit, Pick),
        place(TileList(1), list1, Pairs, TileSplit, Pick),
        place(TileList(2), list2, Pairs, TileSplit, Pick),
        place(TileList(3), list3, Pairs, TileSplit, Pick),
    ]
}

/// The pairs of arrays in `plan` that share bytes of one buffer while both alive (and
/// are not an [`IN_PLACE`] hand-over), for `splats` and `pairs` of capacity.
pub fn clashes(plan: &[Placement], splats: u32, pairs: u32) -> Vec<(Placement, Placement)> {
    let shares_bytes = |a: &Placement, b: &Placement| {
        let (a_bytes, b_bytes) = (a.extent.bytes(splats, pairs), b.extent.bytes(splats, pairs));
        a.buffer == b.buffer && a_bytes.start < b_bytes.end && b_bytes.start < a_bytes.end
    };
    let handed_over =
        |a: &Placement, b: &Placement| a.last == b.first && IN_PLACE.contains(&(a.role, b.role));
    let mut found = Vec::new();
    for (i, a) in plan.iter().enumerate() {
        for b in &plan[i + 1..] {
            let apart = a.last < b.first || b.last < a.first;
            if shares_bytes(a, b) && !apart && !handed_over(a, b) && !handed_over(b, a) {
                found.push((*a, *b));
            }
        }
    }
    found
}

/// A band's four shared buffers, sized and labelled from the plan.
pub struct SharedBuffers {
    buffers: [Buffer; SHARED_BUFFERS],
    /// The ping-pong buffer (0 or 1) the pair sort leaves its result in.
    pairs_sorted: usize,
    plan: [Placement; 14],
    splats: u32,
    pairs: u32,
}

impl SharedBuffers {
    /// Buffers for `splats` and `pairs` of capacity, for a pair sort of `pair_key_bits`.
    pub fn new(device: &Device, splats: u32, pairs: u32, pair_key_bits: u32) -> Self {
        let pairs_sorted = RadixSort::output_index(pair_key_bits);
        let plan = placements(pairs_sorted);
        debug_assert!(clashes(&plan, splats, pairs).is_empty());
        let usage = BufferUsages::STORAGE | BufferUsages::COPY_DST | BufferUsages::COPY_SRC;
        let buffers = std::array::from_fn(|index| {
            let held = plan.iter().filter(|p| p.buffer == index);
            let bytes = held
                .clone()
                .map(|p| p.extent.bytes(splats, pairs).end)
                .max()
                .unwrap_or(4);
            let mut roles: Vec<_> = held.collect();
            roles.sort_by_key(|p| p.first);
            let label = roles
                .iter()
                .map(|p| format!("{:?}", p.role))
                .collect::<Vec<_>>()
                .join(", then ");
            buffer(device, &format!("splat shared: {label}"), bytes, usage)
        });
        Self {
            buffers,
            pairs_sorted,
            plan,
            splats,
            pairs,
        }
    }

    fn placement(&self, step: Step, role: Role) -> &Placement {
        let placement = self
            .plan
            .iter()
            .find(|p| p.role == role)
            .expect("every role has a placement in the plan");
        debug_assert!(
            placement.alive_at(step),
            "{role:?} is bound at {step:?} but lives from {:?} to {:?}",
            placement.first,
            placement.last
        );
        placement
    }

    /// The buffer holding `role`, bound whole by `step`; the array starts at its
    /// start, or for [`Extent::SplatsAfterSplats`] at word `splats`.
    pub fn buffer(&self, step: Step, role: Role) -> &Buffer {
        &self.buffers[self.placement(step, role).buffer]
    }

    /// The binding of exactly `role`'s part of its buffer, for `step`.
    pub fn binding(&self, step: Step, role: Role) -> BufferBinding<'_> {
        let placement = self.placement(step, role);
        debug_assert_ne!(placement.extent, Extent::SplatsAfterSplats);
        let bytes = placement.extent.bytes(self.splats, self.pairs);
        BufferBinding {
            buffer: &self.buffers[placement.buffer],
            offset: bytes.start,
            size: std::num::NonZeroU64::new(bytes.end - bytes.start),
        }
    }

    /// Where the depth sort ping-pongs: its keys, then its values, in the buffers the
    /// plan gives them.
    pub fn depth_sort_storage(&self) -> SortStorage {
        let at = |role| self.placement(Step::DepthSort, role);
        let buffer = |role| self.buffers[at(role).buffer].clone();
        let offset = |role| at(role).extent.bytes(self.splats, self.pairs).start;
        SortStorage {
            keys: [buffer(Role::DepthKeys), buffer(Role::DepthKeysAlt)],
            values: [buffer(Role::DepthValues), buffer(Role::SortedDepthValues)],
            values_offset: [offset(Role::DepthValues), offset(Role::SortedDepthValues)],
        }
    }

    /// The role holding the pair sort's sorted keys, which the tile range reads.
    pub fn sorted_pair_keys(&self) -> Role {
        [Role::PairKeys, Role::PairKeysAlt][self.pairs_sorted]
    }

    /// Where the pair sort ping-pongs.
    pub fn pair_sort_storage(&self) -> SortStorage {
        let buffer = |role| self.buffers[self.placement(Step::TileSort, role).buffer].clone();
        SortStorage {
            keys: [buffer(Role::PairKeys), buffer(Role::PairKeysAlt)],
            values: [buffer(Role::PairValues), buffer(Role::PairValuesAlt)],
            values_offset: [0; 2],
        }
    }

    /// The four tile lists, in list order.
    pub fn tile_lists(&self, step: Step) -> [&Buffer; 4] {
        std::array::from_fn(|list| self.buffer(step, Role::TileList(list as u8)))
    }

    /// Every buffer's size, for the memory count.
    pub fn bytes(&self) -> u64 {
        self.buffers.iter().map(Buffer::size).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::passes::preprocess::DEPTH_KEY_BITS;

    /// Capacities with more pairs than splats, fewer, equal, and tiny.
    const CAPACITIES: [(u32, u32); 5] = [(1, 1), (100, 5_000), (5_000, 100), (777, 777), (64, 65)];

    #[test]
    fn no_two_arrays_of_one_buffer_are_alive_at_once() {
        for pairs_sorted in 0..2 {
            for (splats, pairs) in CAPACITIES {
                let found = clashes(&placements(pairs_sorted), splats, pairs);
                assert!(
                    found.is_empty(),
                    "sort result {pairs_sorted}, {splats} splats, {pairs} pairs: {found:?}"
                );
            }
        }
    }

    #[test]
    fn every_role_has_one_place_and_the_lists_take_every_buffer() {
        for pairs_sorted in 0..2 {
            let plan = placements(pairs_sorted);
            for (i, a) in plan.iter().enumerate() {
                assert!(a.buffer < SHARED_BUFFERS && a.first <= a.last, "{a:?}");
                assert!(plan[i + 1..].iter().all(|b| b.role != a.role), "{a:?}");
            }
            let mut lists: Vec<_> = (0..4)
                .map(|list| {
                    let role = Role::TileList(list);
                    plan.iter().find(|p| p.role == role).map(|p| p.buffer)
                })
                .collect();
            lists.sort();
            assert_eq!(lists, [Some(0), Some(1), Some(2), Some(3)]);
        }
    }

    /// The plan puts the depth sort's result (its second value buffer) where the
    /// pair slots and the duplicate read the sorted depth values, the spilled pair
    /// counts right after the depth keys in their buffer (where the preprocess and the
    /// pair slots index them through the whole buffer), and the first tile list over
    /// the pair sort's sorted values.
    #[test]
    fn the_sorts_results_are_where_the_plan_reads_them() {
        assert_eq!(RadixSort::output_index(DEPTH_KEY_BITS), 1);
        for pairs_sorted in 0..2 {
            let plan = placements(pairs_sorted);
            let at = |role| plan.iter().find(|p| p.role == role).map(|p| p.buffer);
            let extent = |role| plan.iter().find(|p| p.role == role).map(|p| p.extent);
            assert_eq!(at(Role::SpilledPairs), at(Role::DepthKeys));
            assert_eq!(extent(Role::DepthKeys), Some(Extent::Splats));
            assert_eq!(extent(Role::SpilledPairs), Some(Extent::SplatsAfterSplats));
            let sorted_values = [Role::PairValues, Role::PairValuesAlt][pairs_sorted];
            let sorted_keys = [Role::PairKeys, Role::PairKeysAlt][pairs_sorted];
            assert_eq!(at(Role::TileList(0)), at(sorted_values));
            assert_eq!(at(Role::TileList(1)), at(sorted_keys));
            let read_by_range = plan.iter().find(|p| p.role == sorted_keys);
            assert!(read_by_range.is_some_and(|p| p.alive_at(Step::TileRange)));
            let read_by_split = plan.iter().find(|p| p.role == sorted_values);
            assert!(read_by_split.is_some_and(|p| p.alive_at(Step::TileSplit)));
        }
    }

    /// Arrays moved so that they meet a live one are caught.
    #[test]
    fn a_clash_is_caught() {
        let moved = |role, buffer, first| {
            let mut plan = placements(0);
            let placement = plan.iter_mut().find(|p| p.role == role).unwrap();
            placement.buffer = buffer;
            placement.first = first;
            clashes(&plan, 1_000, 3_000)
        };
        // The first pair slots into the depth keys' buffer while the sort runs.
        let found = moved(Role::FirstPairSlots, 1, Step::DepthSort);
        assert!(
            found
                .iter()
                .any(|(a, b)| a.role == Role::DepthKeys && b.role == Role::FirstPairSlots)
        );
        // The sorted depth values in the depth keys' buffer: from its start they meet
        // the keys the sort still reads, right after the keys the spilled pair counts
        // the pair slots still read; a clash only where their bytes meet.
        let sorted_values_beside_keys = |extent| {
            let mut plan = placements(0);
            let sorted = plan
                .iter_mut()
                .find(|p| p.role == Role::SortedDepthValues)
                .unwrap();
            sorted.buffer = 1;
            sorted.extent = extent;
            clashes(&plan, 1_000, 3_000)
                .iter()
                .filter(|(a, b)| {
                    a.role == Role::SortedDepthValues || b.role == Role::SortedDepthValues
                })
                .map(|(a, b)| {
                    if a.role == Role::SortedDepthValues {
                        b.role
                    } else {
                        a.role
                    }
                })
                .filter(|role| *role != Role::PairKeys)
                .collect::<Vec<Role>>()
        };
        assert_eq!(sorted_values_beside_keys(Extent::Splats), [Role::DepthKeys]);
        assert_eq!(
            sorted_values_beside_keys(Extent::SplatsAfterSplats),
            [Role::SpilledPairs]
        );
        // A list written before the sort is done.
        let found = moved(Role::TileList(2), 0, Step::TileSort);
        assert!(
            found
                .iter()
                .any(|(a, b)| a.role == Role::PairKeysAlt && b.role == Role::TileList(2))
        );
    }
}
