//! The stages of a camera's splat frame, in the order they run.

/// One stage of a camera's splat frame: each records one GPU pass, timed on its own
/// for a camera with `SplatPassTimes` (its index in `SplatViewStats::gpu_pass_ns`) and
/// named in Bevy's render diagnostics as `render/gaussian_splats/<name>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SplatStage {
    /// Projection, colour, culling and the depth keys.
    Preprocess,
    /// The visible splats sorted by depth.
    DepthSort,
    /// Pair counts gathered in depth order and scanned into first pair slots.
    Scan,
    /// One pair per bin each splat touches.
    Duplicate,
    /// The pairs sorted by bin.
    TileSort,
    /// Each bin's run of pairs, split into its tiles' lists, busiest tiles first.
    TileRange,
    /// Each tile blended front to back (and the picks).
    TileRender,
    /// The splat layer into the camera's image.
    Composite,
    /// The median depth into the depth buffer (`SplatDepth` only).
    DepthWrite,
}

impl SplatStage {
    /// Every stage, in frame order.
    pub const ALL: [Self; 9] = [
        Self::Preprocess,
        Self::DepthSort,
        Self::Scan,
        Self::Duplicate,
        Self::TileSort,
        Self::TileRange,
        Self::TileRender,
        Self::Composite,
        Self::DepthWrite,
    ];

    /// How many stages there are.
    pub const COUNT: usize = Self::ALL.len();

    /// Its place in frame order (and in per-stage arrays).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Its name in the diagnostics and in `SplatViewStats`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Preprocess => "preprocess",
            Self::DepthSort => "depth_sort",
            Self::Scan => "scan",
            Self::Duplicate => "duplicate",
            Self::TileSort => "tile_sort",
            Self::TileRange => "tile_range",
            Self::TileRender => "tile_render",
            Self::Composite => "composite",
            Self::DepthWrite => "depth_write",
        }
    }
}

/// Every stage's name, in frame order.
pub const PASS_NAMES: [&str; SplatStage::COUNT] = {
    let mut names = [""; SplatStage::COUNT];
    let mut i = 0;
    while i < SplatStage::COUNT {
        names[i] = SplatStage::ALL[i].name();
        i += 1;
    }
    names
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_in_frame_order_and_named_once() {
        for (i, stage) in SplatStage::ALL.iter().enumerate() {
            assert_eq!(stage.index(), i);
            assert_eq!(PASS_NAMES[i], stage.name());
        }
        let mut names = PASS_NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SplatStage::COUNT);
    }
}
