//! What a split of the BVH build is made of: the items being sorted into leaves,
//! the summaries of their ranges (node box, centroid box, count), the binning of
//! centroids along an axis, the SAH sweep over the bins that picks the cheapest
//! boundary, and the ways a range is divided (at a position, at the median, by bin).

use bevy::math::{Vec3, Vec3A};

use crate::raycast::gaussian::Aabb;

/// Candidate split positions along the chosen axis. Beyond about a dozen
/// the tree barely improves while the binning pass keeps getting slower.
pub(super) const BIN_COUNT: usize = 12;
/// Index of the last bin, as the float that bin positions are clamped to.
const LAST_BIN: f32 = (BIN_COUNT - 1) as f32;

/// One splat during the build. The partitioning moves these (not indices),
/// so every pass over a range reads memory sequentially.
#[derive(Clone, Copy, Debug)]
pub(super) struct BuildItem {
    pub(super) bounds: Aabb,
    /// Index into the prepared (input-order) splats.
    pub(super) prepared: u32,
}

impl BuildItem {
    fn centroid(&self) -> Vec3 {
        self.bounds.centroid()
    }
}

/// A box in SIMD registers. The builder spends most of its time taking
/// unions; `Vec3A` does each in two instructions where `Vec3`'s NaN-aware
/// scalar min/max take many. The values are the same floats either way.
#[derive(Clone, Copy, Debug)]
pub(super) struct SimdBox {
    pub(super) min: Vec3A,
    pub(super) max: Vec3A,
}

impl SimdBox {
    const EMPTY: Self = Self {
        min: Vec3A::INFINITY,
        max: Vec3A::NEG_INFINITY,
    };

    fn grow(self, min: Vec3A, max: Vec3A) -> Self {
        Self {
            min: self.min.min(min),
            max: self.max.max(max),
        }
    }

    fn union(self, other: Self) -> Self {
        self.grow(other.min, other.max)
    }

    pub(super) fn half_area(&self) -> f32 {
        Aabb::from(*self).half_area()
    }
}

impl From<SimdBox> for Aabb {
    fn from(simd: SimdBox) -> Self {
        Self {
            min: simd.min.into(),
            max: simd.max.into(),
        }
    }
}

/// What the builder needs to know about a range of items: the union of their
/// boxes (the node box) and the box of their centroids (the binning domain).
/// Unions are exact and order-independent, so a range's summary can be
/// assembled from its bins' summaries instead of another pass.
#[derive(Clone, Copy, Debug)]
pub(super) struct RangeSummary {
    pub(super) bounds: SimdBox,
    pub(super) centroids: SimdBox,
    pub(super) count: u32,
}

impl RangeSummary {
    const EMPTY: Self = Self {
        bounds: SimdBox::EMPTY,
        centroids: SimdBox::EMPTY,
        count: 0,
    };

    pub(super) fn of(items: &[BuildItem]) -> Self {
        items
            .iter()
            .fold(Self::EMPTY, |summary, item| summary.with(item))
    }

    fn with(self, item: &BuildItem) -> Self {
        let min = Vec3A::from(item.bounds.min);
        let max = Vec3A::from(item.bounds.max);
        let centroid = (min + max) * 0.5;
        Self {
            bounds: self.bounds.grow(min, max),
            centroids: self.centroids.grow(centroid, centroid),
            count: self.count + 1,
        }
    }

    fn union(self, other: Self) -> Self {
        Self {
            bounds: self.bounds.union(other.bounds),
            centroids: self.centroids.union(other.centroids),
            count: self.count + other.count,
        }
    }

    /// SAH weight of this range as a child: its area times its splat count.
    pub(super) fn sah_weight(&self) -> f32 {
        self.bounds.half_area() * self.count as f32
    }
}

/// How a range is divided: the first `left.count` items (after
/// partitioning) go left.
#[derive(Clone, Copy, Debug)]
pub(super) struct Split {
    pub(super) left: RangeSummary,
    pub(super) right: RangeSummary,
}

/// Maps a centroid coordinate along `axis` to one of `BIN_COUNT` equal bins
/// spanning the range's centroid box.
#[derive(Clone, Copy, Debug)]
pub(super) struct Binning {
    pub(super) axis: usize,
    pub(super) origin: f32,
    pub(super) bins_per_unit: f32,
}

impl Binning {
    fn bin_of(&self, item: &BuildItem) -> usize {
        let coordinate = (item.bounds.min[self.axis] + item.bounds.max[self.axis]) * 0.5;
        // Clamped in float first: rounding can put the low end slightly
        // below 0 and the far end lands on BIN_COUNT itself.
        let position = ((coordinate - self.origin) * self.bins_per_unit).clamp(0.0, LAST_BIN);
        position as usize
    }
}

/// Bins `items` by centroid and returns the cheapest SAH split between
/// bins, as (first bin of the right side, split); `None` when all items
/// land in one bin.
pub(super) fn best_binned_split(
    items: &[BuildItem],
    bin_ids: &mut [u8],
    binning: &Binning,
) -> Option<(usize, Split)> {
    let mut bins = [RangeSummary::EMPTY; BIN_COUNT];
    for (item, bin_id) in items.iter().zip(bin_ids.iter_mut()) {
        let index = binning.bin_of(item);
        *bin_id = index as u8;
        bins[index] = bins[index].with(item);
    }
    // Suffix sweep: what lies right of each boundary.
    let mut right_of = [RangeSummary::EMPTY; BIN_COUNT];
    let mut right = RangeSummary::EMPTY;
    for boundary in (1..BIN_COUNT).rev() {
        right = right.union(bins[boundary]);
        right_of[boundary] = right;
    }
    let mut left = RangeSummary::EMPTY;
    let mut best: Option<(f32, usize, Split)> = None;
    for boundary in 1..BIN_COUNT {
        left = left.union(bins[boundary - 1]);
        let right = right_of[boundary];
        if left.count == 0 || right.count == 0 {
            continue;
        }
        let cost = left.sah_weight() + right.sah_weight();
        if best.is_none_or(|(best_cost, _, _)| cost < best_cost) {
            best = Some((cost, boundary, Split { left, right }));
        }
    }
    best.map(|(_, boundary, split)| (boundary, split))
}

/// Splits at position `middle` of the range as it stands.
pub(super) fn split_at(items: &[BuildItem], middle: usize) -> Split {
    let (left, right) = items.split_at(middle);
    Split {
        left: RangeSummary::of(left),
        right: RangeSummary::of(right),
    }
}

/// Splits at the median centroid along `axis`; always gives two non-empty
/// halves.
pub(super) fn object_median_split(items: &mut [BuildItem], axis: usize) -> Split {
    let middle = items.len() / 2;
    items.select_nth_unstable_by(middle, |a, b| {
        a.centroid()[axis].total_cmp(&b.centroid()[axis])
    });
    split_at(items, middle)
}

/// Copies `items` into `target` (same length), those whose bin is below
/// `first_right_bin` to the front and the rest to the back; returns how
/// many went to the front.
///
/// Branch-free, since near the root which side an item goes to is close to
/// a coin flip: each item is written at both open ends and only the
/// matching end advances. The other write lands in the unfilled middle,
/// which later writes fill; when the ends meet every slot has received its
/// final item.
pub(super) fn partition_into(
    items: &[BuildItem],
    bin_ids: &[u8],
    target: &mut [BuildItem],
    first_right_bin: usize,
) -> usize {
    let (mut front, mut back) = (0, target.len());
    for (item, &bin_id) in items.iter().zip(bin_ids) {
        let goes_left = usize::from(bin_id) < first_right_bin;
        target[front] = *item;
        target[back - 1] = *item;
        front += usize::from(goes_left);
        back -= usize::from(!goes_left);
    }
    front
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_into_separates_and_keeps_every_item() {
        let items: Vec<BuildItem> = (0..50u32)
            .map(|k| BuildItem {
                bounds: Aabb::EMPTY,
                prepared: k,
            })
            .collect();
        for modulus in [1u32, 2, 3, 7, 51] {
            // Bin 0 goes left, bin 1 right.
            let bin_ids: Vec<u8> = items
                .iter()
                .map(|item| u8::from(!item.prepared.is_multiple_of(modulus)))
                .collect();
            let mut target = items.clone();
            let front = partition_into(&items, &bin_ids, &mut target, 1);
            let goes_left = |item: &BuildItem| item.prepared.is_multiple_of(modulus);
            assert!(target[..front].iter().all(goes_left));
            assert!(!target[front..].iter().any(goes_left));
            let mut seen: Vec<u32> = target.iter().map(|item| item.prepared).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..50).collect::<Vec<_>>());
        }
    }
}
