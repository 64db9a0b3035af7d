//! The Rust↔WGSL contract: every struct both sides read, compared field by field
//! between the Rust type and the composed WGSL (through naga's IR, as wgpu sees it).
//!
//! Constants the two sides share are not checked here because they are not copied:
//! the WGSL gets them as shader defs made from the Rust (`passes::shader_library`). Structs cannot travel that
//! way, so each is written twice and this test fails when the two drift apart.

use std::mem::{offset_of, size_of};

use naga_oil::compose::Composer;

use super::indirect::{COUNTERS_SIZE, DEPTH_KEY_RANGE_OFFSET, DepthKeyRange, ViewCounters};
use super::library::{ShaderDef, WgslFile, wgsl_file};
use super::pick::PICK_HIT_BYTES;
use super::preprocess::{ChunkParams, CloudInstance, CropGpu, PROJECTED_SPLAT_BYTES};
use super::radix_sort::kernels::{
    CLASSIC_WGSL, ONESWEEP_WGSL, SETUP_WGSL, kernel_defs, preparing_defs, setup_defs,
};
use super::radix_sort::state::{DispatchArgs, PassParams, SortState, SortStatus};
use super::radix_sort::{LookBack, SortAlgorithm, SortKey, SortRanking};
use super::scan::{self, ScanConfig, ScanLevel};
use super::shader_library;
use crate::asset::SplatGeometry;
use crate::render::view::uniform::{LayerCellUniform, SplatViewUniform};

/// A struct's size and its fields' (name, byte offset), in declaration order.
#[derive(Debug, PartialEq)]
struct Layout {
    size: u32,
    fields: Vec<(String, u32)>,
}

impl Layout {
    /// The byte offset of the field `name`.
    fn offset(&self, name: &str) -> Option<u64> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, offset)| u64::from(*offset))
    }
}

/// The layout of a Rust `#[repr(C)]` struct from the fields named.
macro_rules! rust_layout {
    ($ty:ty { $($field:ident),* $(,)? }) => {
        Layout {
            size: size_of::<$ty>() as u32,
            fields: vec![$((stringify!($field).to_string(), offset_of!($ty, $field) as u32)),*],
        }
    };
}

fn compose(file: WgslFile, defs: &[ShaderDef]) -> naga::Module {
    let mut library = shader_library();
    match library.compose(file, defs) {
        Ok(module) => module,
        Err(message) => panic!("{} does not compose: {message}", file.path),
    }
}

/// The layout of WGSL struct `name`, declared in the module at `import_path` (`None`:
/// the shader itself), as naga lays it out.
fn wgsl_layout(module: &naga::Module, import_path: Option<&str>, name: &str) -> Layout {
    let wanted = Composer::decorated_name(import_path, name);
    let found = module.types.iter().find_map(|(_, ty)| {
        let naga::TypeInner::Struct { members, span } = &ty.inner else {
            return None;
        };
        (ty.name.as_deref() == Some(wanted.as_str())).then(|| Layout {
            size: *span,
            fields: members
                .iter()
                .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
                .collect(),
        })
    });
    found.unwrap_or_else(|| panic!("no WGSL struct {name} in the composed module"))
}

/// Every WGSL field is in the Rust struct at the same offset; the Rust struct may add
/// only padding (fields named `_…`) and be at most rounded up to 16 bytes (a uniform's
/// or a storage array's stride).
fn assert_same(what: &str, rust: &Layout, wgsl: &Layout) {
    let normal = |name: &str| name.trim_start_matches('_').to_string();
    for (name, offset) in &wgsl.fields {
        let twin = rust.fields.iter().find(|(n, _)| normal(n) == normal(name));
        assert_eq!(
            twin.map(|(_, o)| *o),
            Some(*offset),
            "{what}: WGSL field {name} is at {offset}, the Rust twin at {twin:?}"
        );
    }
    for (name, _) in &rust.fields {
        let in_wgsl = wgsl.fields.iter().any(|(n, _)| normal(n) == normal(name));
        assert!(
            in_wgsl || name.starts_with('_'),
            "{what}: Rust field {name} has no WGSL twin"
        );
    }
    assert!(
        rust.size >= wgsl.size && rust.size <= wgsl.size.next_multiple_of(16),
        "{what}: {} bytes in Rust, {} in WGSL",
        rust.size,
        wgsl.size
    );
}

#[test]
fn the_view_uniform_matches_splat_view() {
    let module = compose(wgsl_file!("tile_order.wgsl"), &[]);
    let rust = rust_layout!(SplatViewUniform {
        cam_from_world,
        world_position,
        focal,
        principal,
        tan_limits,
        viewport_size,
        tile_count,
        depth_from_distance,
        viewport_origin,
        near,
        pair_capacity,
        splat_capacity,
        band_first_row,
        band_end_row,
        orthographic,
        cell_count,
        cell_columns,
        cell_stride,
        cell_size,
        _pad_cells,
        cells,
    });
    let wgsl = wgsl_layout(&module, Some("bevy_splat::common"), "SplatView");
    assert_same("SplatView", &rust, &wgsl);
    let cell = rust_layout!(LayerCellUniform {
        cam_from_world,
        rect,
        depth_from_distance,
    });
    let wgsl_cell = wgsl_layout(&module, Some("bevy_splat::common"), "LayerCell");
    assert_same("LayerCell", &cell, &wgsl_cell);
}

#[test]
fn the_preprocess_inputs_match_their_wgsl() {
    let module = compose(wgsl_file!("preprocess.wgsl"), &[]);
    let types = Some("bevy_splat::preprocess::types");
    let instance = rust_layout!(CloudInstance {
        cam_from_cloud,
        camera_in_cloud,
        antialiased,
        shader_time,
        lighting,
        lighting_strength,
        tint,
        crop_count,
        crop_keeps,
        cell,
        _pad_crop,
        crops,
        world_from_cloud,
        shader_params,
    });
    let crop = rust_layout!(CropGpu {
        unit_from_cloud,
        shape,
        cut,
        _pad
    });
    let chunk = rust_layout!(ChunkParams {
        splat_count,
        sh_degree,
        sh_stride,
        grid_width,
        first_instance,
        instance_count,
        sh_words,
        sh_half,
        first_splat,
        lod_records,
        lod_feedback,
        lod_threshold,
        lod_half_octaves,
        run_first,
        run_count,
        _pad,
    });
    let geometry = rust_layout!(SplatGeometry {
        position,
        opacity_logit,
        rotation,
        log_scale,
        _pad
    });
    assert_same(
        "CloudInstance",
        &instance,
        &wgsl_layout(&module, types, "CloudInstance"),
    );
    assert_same(
        "CropVolume",
        &crop,
        &wgsl_layout(&module, types, "CropVolume"),
    );
    assert_same(
        "ChunkParams",
        &chunk,
        &wgsl_layout(&module, types, "ChunkParams"),
    );
    // The LOD variant's feedback is the words the CPU reads back.
    let lod = compose(wgsl_file!("preprocess.wgsl"), &[super::preprocess::LOD]);
    let feedback = wgsl_layout(&lod, Some("bevy_splat::preprocess::lod"), "LodFeedback");
    assert_eq!(
        u64::from(feedback.size),
        super::preprocess::LOD_FEEDBACK_BYTES
    );
    let full = compose(wgsl_file!("preprocess_full.wgsl"), &[]);
    assert_same(
        "SplatGeometry",
        &geometry,
        &wgsl_layout(&full, types, "SplatGeometry"),
    );
}

#[test]
fn the_preprocess_counters_sit_where_view_counters_says() {
    let module = compose(wgsl_file!("preprocess.wgsl"), &[]);
    let wgsl = wgsl_layout(&module, None, "PreprocessCounters");
    let at = |name: &str| wgsl.offset(name);
    assert_eq!(
        at("visible"),
        Some(offset_of!(ViewCounters, visible) as u64)
    );
    assert_eq!(at("depth_key_ranges"), Some(DEPTH_KEY_RANGE_OFFSET));
    assert_eq!(u64::from(wgsl.size), COUNTERS_SIZE);
    let rust = rust_layout!(DepthKeyRange {
        max,
        min_complement,
        _rest_of_line,
    });
    let wgsl = wgsl_layout(&module, None, "DepthKeyRange");
    assert_same("DepthKeyRange", &rust, &wgsl);
    assert_eq!(rust.size, wgsl.size);
}

#[test]
fn the_layer_uniform_is_laid_out_as_composite_uniform_says() {
    use super::composite::CompositeUniform;
    let module = compose(wgsl_file!("tile_quads.wgsl"), &[]);
    let wgsl = wgsl_layout(&module, Some("bevy_splat::common"), "LayerParams");
    assert_eq!(u64::from(wgsl.size), size_of::<CompositeUniform>() as u64);
    let at = |name: &str| wgsl.offset(name);
    assert_eq!(
        at("origin_and_modes"),
        Some(offset_of!(CompositeUniform, viewport_origin) as u64)
    );
    assert_eq!(
        at("tiles"),
        Some(offset_of!(CompositeUniform, tiles_across) as u64)
    );
    assert_eq!(
        at("cell_origin"),
        Some(offset_of!(CompositeUniform, cell_origin) as u64)
    );
}

#[test]
fn the_records_have_the_sizes_the_host_allocates() {
    let module = compose(wgsl_file!("tile_render.wgsl"), &[]);
    let projected = wgsl_layout(&module, Some("bevy_splat::common"), "ProjectedSplat");
    assert_eq!(u64::from(projected.size), PROJECTED_SPLAT_BYTES);
    let receive = compose(wgsl_file!("preprocess.wgsl"), &[super::preprocess::RECEIVE]);
    let lit_point = wgsl_layout(&receive, Some("bevy_splat::preprocess::types"), "LitPoint");
    assert_eq!(
        u64::from(lit_point.size),
        super::preprocess::LIT_POINT_BYTES
    );
    let pick = compose(wgsl_file!("pick.wgsl"), &[ShaderDef::UInt("LIST", 0)]);
    assert_eq!(
        u64::from(wgsl_layout(&pick, None, "PickHit").size),
        PICK_HIT_BYTES
    );
}

#[test]
fn the_sort_state_and_status_match_their_wgsl() {
    let setup = compose(SETUP_WGSL, &setup_defs(7));
    let state = Some("bevy_splat::radix_sort::state");
    let rust = rust_layout!(SortState {
        count_word,
        capacity,
        range_word,
        range_bits,
        input_index_values,
        n,
        blocks,
        key_base,
        key_shift,
        scatter_grid,
        histogram_grid,
        hist_len,
        hist_total,
    });
    assert_same("SortState", &rust, &wgsl_layout(&setup, state, "SortState"));
    let rust = rust_layout!(DispatchArgs { x, y, z });
    assert_same(
        "DispatchArgs",
        &rust,
        &wgsl_layout(&setup, state, "DispatchArgs"),
    );
    // The status ends in the look-back words, a runtime-sized array: the Rust struct
    // is the head before it, and ends where the array starts.
    let rust = rust_layout!(SortStatus {
        block_counters,
        digit_totals,
        look_back_fallbacks,
        look_back,
    });
    let mut wgsl = wgsl_layout(&setup, state, "SortStatus");
    let look_back = wgsl.fields.last().map(|(_, offset)| *offset);
    assert_eq!(
        look_back,
        Some(rust.size),
        "SortStatus: the look-back words"
    );
    wgsl.size = rust.size;
    assert_same("SortStatus", &rust, &wgsl);
    for key in [SortKey::U32, SortKey::U64] {
        let defs = kernel_defs(
            key,
            SortAlgorithm::OneSweep,
            LookBack::DEFAULT,
            SortRanking::WorkgroupMasks,
        );
        let module = compose(ONESWEEP_WGSL, &defs);
        let rust = rust_layout!(PassParams {
            word,
            shift,
            mask,
            _pad
        });
        assert_same(
            "PassParams",
            &rust,
            &wgsl_layout(&module, state, "PassParams"),
        );
    }
}

#[test]
fn the_scan_records_match_their_wgsl() {
    let setup = compose(scan::SETUP_WGSL, &[ShaderDef::UInt("SCAN_MAX_GROUPS_X", 7)]);
    let records = Some("bevy_splat::scan::state");
    let rust = rust_layout!(ScanConfig {
        count_word,
        capacity,
        levels
    });
    assert_same(
        "ScanConfig",
        &rust,
        &wgsl_layout(&setup, records, "ScanConfig"),
    );
    let rust = rust_layout!(ScanLevel {
        count,
        grid_x,
        grid_y,
        grid_z,
        groups,
        total_word,
    });
    assert_same(
        "ScanLevel",
        &rust,
        &wgsl_layout(&setup, records, "ScanLevel"),
    );
    // Records of 256 bytes, as the host writes and binds them.
    let state = wgsl_layout(&setup, None, "ScanState");
    assert_eq!(
        state.fields,
        vec![("head".to_string(), 0), ("levels".to_string(), 256)]
    );
    assert_eq!(wgsl_layout(&setup, None, "LevelRecord").size, 256);
    let kernels = compose(scan::SCAN_WGSL, &[]);
    assert_same(
        "ScanLevel",
        &rust,
        &wgsl_layout(&kernels, records, "ScanLevel"),
    );
}

/// Every file of the library composes in every variant the passes build, so a
/// broken `#import` or def fails here rather than at an app's start.
#[test]
fn every_variant_composes() {
    let mut library = shader_library();
    let variants: Vec<(WgslFile, Vec<ShaderDef>)> = vec![
        (wgsl_file!("preprocess.wgsl"), vec![]),
        (
            wgsl_file!("preprocess.wgsl"),
            vec![ShaderDef::Flag("COMPACT_LAYOUT")],
        ),
        (wgsl_file!("indirect.wgsl"), vec![]),
        (wgsl_file!("indirect.wgsl"), preparing_defs(65_535, 2, 3)),
        (wgsl_file!("pair_slots.wgsl"), vec![]),
        (
            wgsl_file!("pair_slots.wgsl"),
            vec![ShaderDef::Flag("WRITES_PAIRS_NEEDED")],
        ),
        (
            wgsl_file!("pair_slots.wgsl"),
            [ShaderDef::Flag("WRITES_PAIRS_NEEDED")]
                .into_iter()
                .chain(preparing_defs(65_535, 6, 7))
                .collect(),
        ),
        (wgsl_file!("duplicate.wgsl"), vec![]),
        (
            wgsl_file!("duplicate.wgsl"),
            vec![ShaderDef::Flag("ONE_CELL")],
        ),
        (wgsl_file!("tile_range.wgsl"), vec![]),
        (wgsl_file!("tile_split.wgsl"), vec![]),
        (wgsl_file!("tile_order.wgsl"), vec![]),
        (wgsl_file!("tile_render.wgsl"), vec![]),
        (
            wgsl_file!("tile_render.wgsl"),
            vec![ShaderDef::Flag("MULTISAMPLED_DEPTH")],
        ),
        (wgsl_file!("pick.wgsl"), vec![ShaderDef::UInt("LIST", 3)]),
        (wgsl_file!("composite.wgsl"), vec![]),
        (wgsl_file!("depth_write.wgsl"), vec![]),
        (wgsl_file!("preprocess_hook.wgsl"), vec![]),
        (SETUP_WGSL, setup_defs(65_535).to_vec()),
        (scan::SCAN_WGSL, vec![]),
        (
            scan::SETUP_WGSL,
            vec![ShaderDef::UInt("SCAN_MAX_GROUPS_X", 65_535)],
        ),
    ];
    // Both rankings; the subgroup ranking for lavapipe's, NVIDIA's and the widest
    // subgroups wgpu allows.
    let rankings = [
        SortRanking::WorkgroupMasks,
        SortRanking::SubgroupBallots {
            min_lanes: 8,
            max_lanes: 8,
        },
        SortRanking::SubgroupBallots {
            min_lanes: 32,
            max_lanes: 32,
        },
        SortRanking::SubgroupBallots {
            min_lanes: 8,
            max_lanes: 128,
        },
    ];
    let keys_and_rankings = [SortKey::U32, SortKey::U64]
        .into_iter()
        .flat_map(|key| rankings.map(|ranking| (key, ranking)));
    let sorts = keys_and_rankings.flat_map(|(key, ranking)| {
        [
            (CLASSIC_WGSL, SortAlgorithm::Classic, LookBack::DEFAULT),
            (ONESWEEP_WGSL, SortAlgorithm::OneSweep, LookBack::DEFAULT),
            (
                ONESWEEP_WGSL,
                SortAlgorithm::OneSweep,
                LookBack::CountEveryBlock,
            ),
        ]
        .map(|(file, algorithm, look_back)| (file, kernel_defs(key, algorithm, look_back, ranking)))
    });
    let variants = variants.into_iter().chain(sorts);
    for (file, defs) in variants {
        let module = match library.compose(file, &defs) {
            Ok(module) => module,
            Err(message) => panic!("{} ({defs:?}) does not compose: {message}", file.path),
        };
        let mut validator = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        );
        if let Err(error) = validator.validate(&module) {
            panic!("{} ({defs:?}) is not valid: {error:?}", file.path);
        }
    }
}

fn validate(module: &naga::Module) -> Result<(), String> {
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(module)
    .map(|_| ())
    .map_err(|error| format!("{error:?}"))
}

/// An app's splat shader composes into the preprocess's `SPLAT_SHADER` variant; one
/// that does not parse, or has the wrong signature, is an error to report, not a panic.
#[test]
fn splat_shaders_compose_and_broken_ones_are_errors() {
    let preprocess = wgsl_file!("preprocess.wgsl");
    let defs = [ShaderDef::Flag("SPLAT_SHADER")];
    let half = "#import bevy_splat::preprocess::hook::{Splat, SplatContext}
fn modify_splat(splat: Splat, context: SplatContext) -> Splat {
    var out = splat;
    out.opacity *= 0.5 + 0.5 * sin(context.time + context.params[0].x);
    return out;
}";
    let composed = shader_library()
        .with_user_shader("half", half)
        .and_then(|mut library| library.compose(preprocess, &defs));
    match composed {
        Ok(module) => validate(&module).expect("the shader's variant validates"),
        Err(message) => panic!("a valid splat shader does not compose: {message}"),
    }
    // In an app the variant reaches Bevy's `PipelineCache` written back as one WGSL
    // text, for each layout: that text parses and validates again.
    for layout_defs in [&defs[..], &[defs[0], ShaderDef::Flag("COMPACT_LAYOUT")]] {
        let wgsl = shader_library()
            .with_user_shader("half", half)
            .and_then(|mut library| library.compose_wgsl(preprocess, layout_defs));
        let reparsed = match wgsl {
            Ok(text) => naga::front::wgsl::parse_str(&text).map_err(|error| error.to_string()),
            Err(message) => panic!("a valid splat shader does not write as WGSL: {message}"),
        };
        match reparsed {
            Ok(module) => validate(&module).expect("its WGSL validates again"),
            Err(message) => panic!("its WGSL does not parse again: {message}"),
        }
    }
    for (name, wgsl) in [
        ("broken", "fn modify_splat("),
        ("wrong", "fn modify_splat(x: f32) -> f32 { return x; }"),
    ] {
        let result = shader_library()
            .with_user_shader(name, wgsl)
            .and_then(|mut library| library.compose(preprocess, &defs))
            .and_then(|module| validate(&module));
        assert!(result.is_err(), "the {name} shader is refused");
    }
}
