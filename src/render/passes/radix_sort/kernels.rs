//! The sort's pipelines: [`RadixSort`], which holds them, the bind group layouts its
//! kernels share, and each algorithm's kernels, composed through a `ShaderLibrary`
//! with the shader defs that pick a variant (the key width, the algorithm, the
//! look-back, the grid limit).

use std::num::NonZeroU64;

use super::options::{LookBack, ONESWEEP_LARGEST_SORT, SortAlgorithm, SortKey, SortRanking};
use super::state::{self, PASS_PARAMS_BYTES};
use bevy::render::render_resource::BindGroupLayoutDescriptor;

use crate::render::passes::builder::{DirectBuilder, EntryShader, Kernel, PipelineBuilder};
use crate::render::passes::common::{ShaderChecks, storage};
use crate::render::passes::library::{ShaderDef, ShaderLibrary, WgslFile};
use crate::render::passes::scan::{self, PrefixScan};

/// A WGSL entry file of the sort, beside this module.
macro_rules! sort_wgsl {
    ($name:literal) => {
        WgslFile {
            path: concat!("bevy_splat/render/passes/radix_sort/", $name),
            text: include_str!($name),
        }
    };
}

/// The setup kernels (`setup` and `setup_onesweep`).
pub(crate) const SETUP_WGSL: WgslFile = sort_wgsl!("setup.wgsl");
/// The classic count and scatter kernels.
pub(crate) const CLASSIC_WGSL: WgslFile = sort_wgsl!("classic.wgsl");
/// The one-sweep histogram and scatter kernels.
pub(crate) const ONESWEEP_WGSL: WgslFile = sort_wgsl!("onesweep.wgsl");

/// A shader library for the sort and its scan: every module of the crate's, composed
/// with the sizes of the sort and the scan (`passes::shader_library` has them too,
/// beside the other passes' own).
fn sort_library() -> ShaderLibrary {
    let defs = state::shared_defs().into_iter().chain(scan::shared_defs());
    ShaderLibrary::new(defs.collect())
}

pub(crate) const SETUP_SHADER: EntryShader = EntryShader {
    file: SETUP_WGSL,
    checks: ShaderChecks::All,
};
/// Every loop runs a constant count, up to n, or (the one-sweep look-back) up to its
/// block index times LOOK_BACK_SPINS + 1; every index is below n, the capacity or a
/// workgroup array's length (tests/gpu_sort.rs). No kernel waits without bound for
/// another, so none can hang a GPU.
pub(crate) const CLASSIC_SHADER: EntryShader = EntryShader {
    file: CLASSIC_WGSL,
    checks: ShaderChecks::None,
};
/// As [`CLASSIC_SHADER`].
pub(crate) const ONESWEEP_SHADER: EntryShader = EntryShader {
    file: ONESWEEP_WGSL,
    checks: ShaderChecks::None,
};

/// The bind group layouts of the count (or histogram) and scatter kernels, the same
/// for both algorithms.
pub(super) struct SortLayouts {
    pub count: BindGroupLayoutDescriptor,
    pub scatter: BindGroupLayoutDescriptor,
}

impl SortLayouts {
    pub fn new() -> Self {
        let params_entry = wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: NonZeroU64::new(PASS_PARAMS_BYTES),
            },
            count: None,
        };
        let count = BindGroupLayoutDescriptor::new(
            "radix sort count",
            &[
                params_entry,
                storage(1, true),
                storage(2, true),
                storage(3, false),
            ],
        );
        let scatter = BindGroupLayoutDescriptor::new(
            "radix sort scatter",
            &[
                params_entry,
                storage(1, true),
                storage(2, true),
                storage(3, false),
                storage(4, true),
                storage(5, false),
                storage(6, false),
            ],
        );
        Self { count, scatter }
    }
}

/// The shader defs of one algorithm's kernels for `key` keys: `SORT_KEY_64` for
/// 64-bit keys; for the subgroup ranking `SORT_SUBGROUP_RANKING`, with the words of a
/// ballot and of the subgroups' digit counts; for the one-sweep sort `SORT_ONESWEEP`,
/// the look-back's `SORT_LOOK_BACK_SPINS`, and `SORT_COUNT_EVERY_BLOCK` for a
/// look-back that reads nothing the earlier blocks publish.
pub(crate) fn kernel_defs(
    key: SortKey,
    algorithm: SortAlgorithm,
    look_back: LookBack,
    ranking: SortRanking,
) -> Vec<ShaderDef> {
    let mut defs = Vec::new();
    if key == SortKey::U64 {
        defs.push(ShaderDef::Flag("SORT_KEY_64"));
    }
    if let SortRanking::SubgroupBallots { max_lanes, .. } = ranking {
        defs.push(ShaderDef::Flag("SORT_SUBGROUP_RANKING"));
        defs.push(ShaderDef::UInt("SORT_BALLOT_WORDS", max_lanes.div_ceil(32)));
        defs.push(ShaderDef::UInt(
            "SORT_SUBGROUP_COUNT_WORDS",
            ranking.subgroup_count_words(),
        ));
    }
    if algorithm == SortAlgorithm::OneSweep {
        defs.push(ShaderDef::Flag("SORT_ONESWEEP"));
        let (spins, reads) = look_back.shader_constants();
        defs.push(ShaderDef::UInt("SORT_LOOK_BACK_SPINS", spins));
        if !reads {
            defs.push(ShaderDef::Flag("SORT_COUNT_EVERY_BLOCK"));
        }
    }
    defs
}

/// The defs of the sort's setup kernels (`setup.wgsl`): its state and status at
/// bindings 1 and 2 of the `prepare` module, beside the count at 0.
pub(crate) fn setup_defs(max_groups_x: u32) -> [ShaderDef; 3] {
    prepare_defs(max_groups_x, 1, 2)
}

/// The defs of a kernel that prepares a sort itself, under its flag `PREPARES_SORT`:
/// it imports `bevy_splat::radix_sort::prepare`, calls `prepare_state` and
/// `clear_onesweep_counts`, and binds the state and status of
/// [`SortBuffers::preparation`](super::SortBuffers::preparation) at `state` and
/// `status` of its group 0; `max_groups_x` is the sort's grid limit. The sort is then
/// recorded with [`RadixSort::encode_prepared`].
pub(crate) fn preparing_defs(max_groups_x: u32, state: u32, status: u32) -> Vec<ShaderDef> {
    let mut defs = vec![ShaderDef::Flag("PREPARES_SORT")];
    defs.extend(prepare_defs(max_groups_x, state, status));
    defs
}

/// What the `prepare` module is composed with: the sort's grid limit, and the
/// bindings in group 0 of the sort's state and status.
fn prepare_defs(max_groups_x: u32, state: u32, status: u32) -> [ShaderDef; 3] {
    [
        ShaderDef::UInt("SORT_MAX_GROUPS_X", max_groups_x),
        ShaderDef::UInt("SORT_PREPARE_STATE", state),
        ShaderDef::UInt("SORT_PREPARE_STATUS", status),
    ]
}

/// The kernels of one algorithm.
pub(super) struct SortKernels {
    pub setup_layout: wgpu::BindGroupLayout,
    pub setup: wgpu::ComputePipeline,
    /// The classic sort's per-pass `count`, or the one-sweep `histogram` of all passes.
    pub count: wgpu::ComputePipeline,
    pub scatter: wgpu::ComputePipeline,
}

/// What every algorithm's kernels are built with.
pub(crate) struct KernelOptions {
    pub key: SortKey,
    pub look_back: LookBack,
    pub ranking: SortRanking,
    /// The setup kernels' grid limit along x (`SORT_MAX_GROUPS_X`).
    pub max_groups_x: u32,
}

impl SortKernels {
    /// `algorithm`'s kernels, or `None` while any is being compiled.
    pub fn build(
        builder: &mut dyn PipelineBuilder,
        layouts: &SortLayouts,
        options: &KernelOptions,
        algorithm: SortAlgorithm,
    ) -> Option<Self> {
        let onesweep = algorithm == SortAlgorithm::OneSweep;
        let setup_entries = [storage(0, true), storage(1, false), storage(2, false)];
        let setup_layout = BindGroupLayoutDescriptor::new(
            "radix sort setup",
            &setup_entries[..if onesweep { 3 } else { 2 }],
        );
        let (shader, setup_kernel, first_kernel, first_label) = if onesweep {
            (
                ONESWEEP_SHADER,
                "setup_onesweep",
                "histogram",
                "radix sort histogram",
            )
        } else {
            (CLASSIC_SHADER, "setup", "count", "radix sort count")
        };
        let setup_defs = setup_defs(options.max_groups_x);
        let setup = builder.kernel(&Kernel {
            label: "radix sort setup",
            layout: &setup_layout,
            shader: SETUP_SHADER,
            entry_point: setup_kernel,
            defs: &setup_defs,
        });
        let defs = kernel_defs(options.key, algorithm, options.look_back, options.ranking);
        let count = builder.kernel(&Kernel {
            label: first_label,
            layout: &layouts.count,
            shader,
            entry_point: first_kernel,
            defs: &defs,
        });
        let scatter = builder.kernel(&Kernel {
            label: "radix sort scatter",
            layout: &layouts.scatter,
            shader,
            entry_point: "scatter",
            defs: &defs,
        });
        Some(Self {
            setup_layout: builder.layout(&setup_layout),
            setup: setup?,
            count: count?,
            scatter: scatter?,
        })
    }
}

/// The pipelines of the radix sort (and of the prefix scan the classic algorithm
/// uses); create once per device.
pub struct RadixSort {
    pub(super) key: SortKey,
    pub(super) ranking: SortRanking,
    pub(super) scan: PrefixScan,
    pub(super) count_layout: wgpu::BindGroupLayout,
    pub(super) scatter_layout: wgpu::BindGroupLayout,
    pub(super) classic: SortKernels,
    /// Built when the sort's algorithm is [`SortAlgorithm::OneSweep`].
    pub(super) onesweep: Option<SortKernels>,
}

impl RadixSort {
    /// A classic sort of 64-bit keys.
    pub fn new(device: &wgpu::Device) -> Self {
        Self::with_key(device, SortKey::U64, SortAlgorithm::Classic)
    }

    /// A sort of `key` keys by `algorithm`, ranked as suits the device
    /// ([`SortRanking::for_device`]).
    pub fn with_key(device: &wgpu::Device, key: SortKey, algorithm: SortAlgorithm) -> Self {
        Self::with_ranking(device, key, algorithm, SortRanking::for_device(device))
    }

    /// A sort of `key` keys by `algorithm` whose blocks rank their pairs by `ranking`
    /// (tests and benchmarks of both rankings). [`SortRanking::SubgroupBallots`] needs
    /// a device with `Features::SUBGROUP` whose workgroup memory holds its scatter
    /// ([`SortRanking::fits`]); wgpu rejects its pipelines elsewhere.
    pub fn with_ranking(
        device: &wgpu::Device,
        key: SortKey,
        algorithm: SortAlgorithm,
        ranking: SortRanking,
    ) -> Self {
        Self::build(
            device,
            device.limits().max_compute_workgroups_per_dimension,
            key,
            algorithm,
            (LookBack::DEFAULT, ranking),
        )
    }

    /// How this sort's blocks rank their pairs.
    pub fn ranking(&self) -> SortRanking {
        self.ranking
    }

    /// A one-sweep sort of `key` keys whose blocks learn the counts before them as
    /// `look_back` says (tests and benchmarks of the look-back's fallback).
    pub fn with_look_back(device: &wgpu::Device, key: SortKey, look_back: LookBack) -> Self {
        Self::build(
            device,
            device.limits().max_compute_workgroups_per_dimension,
            key,
            SortAlgorithm::OneSweep,
            (look_back, SortRanking::for_device(device)),
        )
    }

    /// A sort of 64-bit keys by `algorithm`, with the dispatches' grids limited to
    /// `max_groups_x` workgroups along x (more rows instead). Tests use a small limit to
    /// exercise the 2-D grid path without 65,536 workgroups' worth of data.
    pub fn with_max_workgroups_per_dimension(
        device: &wgpu::Device,
        algorithm: SortAlgorithm,
        max_groups_x: u32,
    ) -> Self {
        Self::build(
            device,
            max_groups_x,
            SortKey::U64,
            algorithm,
            (LookBack::DEFAULT, SortRanking::for_device(device)),
        )
    }

    /// The algorithm that sorts up to `capacity` pairs: [`SortAlgorithm::OneSweep`]
    /// only where this sort prefers it and `capacity` is at most
    /// [`ONESWEEP_LARGEST_SORT`].
    pub fn algorithm_for(&self, capacity: u32) -> SortAlgorithm {
        if self.onesweep.is_some() && capacity <= ONESWEEP_LARGEST_SORT {
            SortAlgorithm::OneSweep
        } else {
            SortAlgorithm::Classic
        }
    }

    fn build(
        device: &wgpu::Device,
        max_groups_x: u32,
        key: SortKey,
        algorithm: SortAlgorithm,
        (look_back, ranking): (LookBack, SortRanking),
    ) -> Self {
        // The sort and its scan compose their modules through one library.
        let mut library = sort_library();
        let options = KernelOptions {
            key,
            look_back,
            ranking,
            max_groups_x: max_groups_x.max(1),
        };
        let builder = &mut DirectBuilder::new(device, &mut library);
        Self::with_builder(builder, &options, algorithm)
            .expect("a direct builder compiles every kernel at once")
    }

    /// The sort's pipelines (and its scan's) from `builder`, or `None` while any is
    /// being compiled.
    pub(crate) fn with_builder(
        builder: &mut dyn PipelineBuilder,
        options: &KernelOptions,
        algorithm: SortAlgorithm,
    ) -> Option<Self> {
        let scan = PrefixScan::build(builder, options.max_groups_x);
        let layouts = SortLayouts::new();
        let classic = SortKernels::build(builder, &layouts, options, SortAlgorithm::Classic);
        let onesweep = match algorithm {
            SortAlgorithm::OneSweep => Some(SortKernels::build(
                builder,
                &layouts,
                options,
                SortAlgorithm::OneSweep,
            )?),
            SortAlgorithm::Classic => None,
        };
        Some(Self {
            key: options.key,
            ranking: options.ranking,
            scan: scan?,
            count_layout: builder.layout(&layouts.count),
            scatter_layout: builder.layout(&layouts.scatter),
            classic: classic?,
            onesweep,
        })
    }

    /// The kernels of `algorithm`: the one-sweep ones only where this sort built them.
    pub(super) fn kernels(&self, algorithm: SortAlgorithm) -> &SortKernels {
        match (algorithm, &self.onesweep) {
            (SortAlgorithm::OneSweep, Some(onesweep)) => onesweep,
            _ => &self.classic,
        }
    }
}
