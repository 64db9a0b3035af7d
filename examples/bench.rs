//! Headless benchmark: renders a scene from a fixed camera and reports, per pass, the
//! median and spread of GPU time (timestamp queries through Bevy's render
//! diagnostics), the visible splat and tile-pair counts and the GPU memory the plugin
//! holds. The passes are timed with `SplatPassTimes` on the camera (`total_timed` is
//! their whole span then); `total` is the whole span of as many frames again without
//! it, as a user's camera draws.
//!
//! ```text
//! cargo run --release --example bench -- --angel-grid 9 [--frames 200] [--warmup 30]
//!     [--json out.json] [--png out.png] [--max-binding-mib N]
//! cargo run --release --example bench -- --sh3-grid 9 [--write-ply scene.ply] ...
//! cargo run --release --example bench -- --cloud-grid 1000 [--cloud-splats 5000] ...
//! ... [--whole-frame] [--pick N] [--full | --half-sh | --compact] [--display | --hdr]
//!     [--compute-composite]
//!     [--shadow-light directional|point [--shadow-stages] [--shadow-lod TEXELS]
//!      [--whole-tiles] [--redraw-shadows] [--shadow-scale N]]
//!     [--lighting shadowed|lit]
//!     [--budget SPLATS] [--psnr-against IMAGE.png] [--camera-path FRAMES]
//!
//! `--camera-path N` (with `--angel-grid K`) then flies the camera in N frames from
//! its place down into the grid, reading back every frame, and reports how much each
//! frame's image differs from the one before (mean absolute difference over RGB, in
//! 1/255): the measure of popping a level-of-detail cut adds to the motion itself.
//! cargo run --release --example bench -- --ply FILE --cameras CAMERAS.json [--camera 0]
//! cargo run --release --example bench -- --ply FILE --eye X,Y,Z --target X,Y,Z [--fov 50]
//! ```
//!
//! The angel grid is K×K copies of `assets/angel.ply`, copy (i, j) at
//! ((i − (K−1)/2)·1.8, 0, (j − (K−1)/2)·1.8), seen from (0, 0.5·G, −1.2·G) with
//! G = 1.8·K, looking at the origin, 50° vertical field of view, 1920×1080.
//!
//! The SH3 grid is the same layout as ONE cloud of distinct splats at SH degree 3:
//! each copy keeps the angel's geometry and base colour, and every splat gets its own
//! 45 `f_rest` coefficients drawn from a normal distribution (σ = 0.08, a fixed
//! seed), so each carries 248 bytes and the full SH evaluation. `--write-ply` saves
//! it (Inria PLY) for the gsplat race to read the very same data.
//!
//! `--cloud-grid N` spawns N clouds of the scan's first `--cloud-splats` splats on a
//! square grid 1.8 apart (the many-clouds case), seen like the angel grid.
//!
//! `--whole-frame` then times the frame as an app feels it: the wall time of each
//! `App::update` followed by waiting for the GPU to finish what it was given (CPU and
//! GPU together, pipelined rendering as Bevy does it, no surface to present to), and
//! the CPU time of the plugin's own prepare and pass recording per frame; then the
//! same with every cloud hidden, Bevy's own frame for that camera.
//!
//! The splats are stored as the library's default (`SplatStorage::HalfSh`, f16 SH);
//! `--full` keeps everything f32, `--compact` uses the compact layout.
//!
//! `--shadow-light directional|point` adds a light whose shadow maps the clouds cast
//! into: a directional light from above (Bevy's default 4 cascades, 2048² maps), or a
//! point light above the scene (6 faces of 1024²). Each shadow view's GPU time is
//! reported (Bevy's render diagnostics, one span per view) beside the camera's;
//! `--shadow-stages` times each view's stages too (`SplatShadowPassTimes`);
//! `--shadow-lod TEXELS` puts `SplatLod` on the light (no budget, nodes down to that
//! many shadow-map texels), after its cut has had time to settle; `--whole-tiles`
//! draws every shadow-map tile with one workgroup however long its list
//! (`SplatGpuLimits::max_tile_chunks` 0, the drawing before chunks). The scene stands
//! still, so without `--redraw-shadows` (`RedrawSplatShadows` on the light) each
//! shadow view soon draws from the surface it kept: only its depth write is timed;
//! with it, every view is drawn anew every frame, as when the light or the camera
//! moves; `--shadow-scale N` draws the splats into the maps at 1/N of their
//! resolution a side (`SplatShadowScale`). `--lighting
//! shadowed|lit` gives every cloud that `SplatLighting`: the preprocess stage then
//! includes the light pass (with `--shadow-light`, its lookups of the light's maps).
//!
//! `--pick N` makes the camera pick N pointer pixels every frame, as
//! `SplatPickingPlugin` does for N pointers: the pick passes are timed with the tile
//! render, and the preprocess records each splat's source.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use bevy::diagnostic::{DiagnosticPath, DiagnosticsStore};
use bevy::prelude::*;
use bevy::render::diagnostic::RenderDiagnosticsPlugin;
use bevy::render::settings::WgpuSettings;
use bevy::winit::WinitPlugin;
use bevy_splat::asset::DecodedSplats;
use bevy_splat::cameras::InriaCamera;
use bevy_splat::headless::{Headless, HeadlessCamera, quiet_log, storage_binding_limit};
use bevy_splat::render::{
    DIAGNOSTIC_SPAN, PASS_NAMES as STAGES, SHADOW_DIAGNOSTIC_SPAN, TILE_SIZE,
};
use bevy_splat::{GaussianSplats, SplatMemory, SplatStats, SplatStorage};

struct Args {
    ply: PathBuf,
    angel_grid: Option<u32>,
    sh3_grid: Option<u32>,
    write_ply: Option<PathBuf>,
    cloud_grid: Option<u32>,
    cloud_splats: usize,
    whole_frame: bool,
    cameras: Option<PathBuf>,
    camera_index: usize,
    eye: Option<Vec3>,
    target: Vec3,
    fov_degrees: f32,
    size: UVec2,
    frames: usize,
    warmup: usize,
    json: Option<PathBuf>,
    png: Option<PathBuf>,
    /// Storage bindings of at most this many MiB: a smaller device's limits.
    max_binding_mib: Option<u32>,
    /// Pointer pixels the camera picks every frame (the GPU pick's cost).
    pick: usize,
    /// How the GPU stores the splats (`--full`, `--half-sh`, `--compact`).
    storage: SplatStorage,
    /// Draw as a window shows it (`--display`): an sRGB target and the default
    /// composite over the scene, instead of `Passthrough` into `Rgba8Unorm`.
    display: bool,
    /// An HDR main texture (`--hdr`), composited by the fragment pass; with
    /// `--compute-composite` it takes storage writes and a compute pass composites.
    hdr: bool,
    compute_composite: bool,
    /// Draw through the clouds' level-of-detail trees within this many splats
    /// (`SplatLod`), once the cut has settled.
    budget: Option<u32>,
    /// An image of the same view to report the PSNR of this run's image against
    /// (`--psnr-against exact.png`, as `--png` wrote it).
    psnr_against: Option<PathBuf>,
    /// Frames of the camera path through the angel grid (`--camera-path N`) over
    /// which each frame's change from the one before is measured.
    camera_path: Option<usize>,
    /// A light the clouds cast shadows from (`--shadow-light directional|point`).
    shadow_light: Option<ShadowLight>,
    /// Time each stage of each shadow view too (`--shadow-stages`).
    shadow_stages: bool,
    /// The light draws its shadow views anew every frame (`--redraw-shadows`).
    redraw_shadows: bool,
    /// The light's `SplatShadowScale` (`--shadow-scale N`).
    shadow_scale: Option<u32>,
    /// The light draws its shadow views as cuts with nodes down to this many texels
    /// (`--shadow-lod TEXELS`: `SplatLod` on the light, no budget).
    shadow_lod: Option<f32>,
    /// Shadow views draw every tile with one workgroup (`--whole-tiles`).
    whole_tiles: bool,
    /// How every cloud takes the light (`--lighting shadowed|lit`, `SplatLighting`):
    /// the preprocess stage then includes the light pass.
    lighting: Option<bevy_splat::SplatLighting>,
}

#[derive(Clone, Copy, Debug)]
enum ShadowLight {
    Directional,
    Point,
}

fn parse_vec3(text: &str) -> Result<Vec3, String> {
    let parts: Vec<f32> = text
        .split(',')
        .map(|p| p.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("not three numbers: {text:?}"))?;
    match parts.as_slice() {
        [x, y, z] => Ok(Vec3::new(*x, *y, *z)),
        _ => Err(format!("not three numbers: {text:?}")),
    }
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        ply: PathBuf::from("assets/angel.ply"),
        angel_grid: None,
        sh3_grid: None,
        write_ply: None,
        cloud_grid: None,
        cloud_splats: 5000,
        whole_frame: false,
        cameras: None,
        camera_index: 0,
        eye: None,
        target: Vec3::ZERO,
        fov_degrees: 50.0,
        size: UVec2::new(1920, 1080),
        frames: 200,
        warmup: 30,
        json: None,
        png: None,
        max_binding_mib: None,
        pick: 0,
        display: false,
        hdr: false,
        compute_composite: false,
        storage: SplatStorage::default(),
        budget: None,
        psnr_against: None,
        camera_path: None,
        shadow_light: None,
        lighting: None,
        shadow_stages: false,
        redraw_shadows: false,
        shadow_scale: None,
        shadow_lod: None,
        whole_tiles: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| {
            v.parse::<u32>()
                .map_err(|_| format!("{flag}: not a number: {v}"))
        };
        match flag.as_str() {
            "--ply" => args.ply = value()?.into(),
            "--angel-grid" => args.angel_grid = Some(number(value()?)?),
            "--sh3-grid" => args.sh3_grid = Some(number(value()?)?.clamp(1, 64)),
            "--write-ply" => args.write_ply = Some(value()?.into()),
            "--cloud-grid" => args.cloud_grid = Some(number(value()?)?.clamp(1, 100_000)),
            "--cloud-splats" => args.cloud_splats = number(value()?)?.max(1) as usize,
            "--whole-frame" => {
                args.whole_frame = true;
                continue;
            }
            "--cameras" => args.cameras = Some(value()?.into()),
            "--camera" => args.camera_index = number(value()?)? as usize,
            "--eye" => args.eye = Some(parse_vec3(&value()?)?),
            "--target" => args.target = parse_vec3(&value()?)?,
            "--fov" => {
                args.fov_degrees = value()?
                    .parse()
                    .map_err(|_| "--fov: not a number".to_string())?
            }
            "--width" => args.size.x = number(value()?)?,
            "--height" => args.size.y = number(value()?)?,
            "--frames" => args.frames = number(value()?)? as usize,
            "--warmup" => args.warmup = number(value()?)? as usize,
            "--json" => args.json = Some(value()?.into()),
            "--png" => args.png = Some(value()?.into()),
            "--max-binding-mib" => args.max_binding_mib = Some(number(value()?)?),
            "--full" => args.storage = SplatStorage::Full,
            "--half-sh" => args.storage = SplatStorage::HalfSh,
            "--compact" => args.storage = SplatStorage::Compact,
            "--display" => args.display = true,
            "--hdr" => args.hdr = true,
            "--compute-composite" => args.compute_composite = true,
            "--budget" => args.budget = Some(number(value()?)?.max(1)),
            "--psnr-against" => args.psnr_against = Some(value()?.into()),
            "--camera-path" => args.camera_path = Some(number(value()?)?.max(2) as usize),
            "--shadow-light" => {
                args.shadow_light = Some(match value()?.as_str() {
                    "directional" => ShadowLight::Directional,
                    "point" => ShadowLight::Point,
                    other => {
                        return Err(format!(
                            "--shadow-light: {other:?} is not directional or point"
                        ));
                    }
                })
            }
            "--shadow-stages" => args.shadow_stages = true,
            "--redraw-shadows" => args.redraw_shadows = true,
            "--shadow-scale" => args.shadow_scale = Some(number(value()?)?),
            "--whole-tiles" => args.whole_tiles = true,
            "--lighting" => {
                args.lighting = Some(match value()?.as_str() {
                    "shadowed" => bevy_splat::SplatLighting::SHADOWED,
                    "lit" => bevy_splat::SplatLighting::Lit,
                    other => return Err(format!("--lighting: {other:?} is not shadowed or lit")),
                })
            }
            "--shadow-lod" => {
                args.shadow_lod = Some(
                    value()?
                        .parse()
                        .map_err(|_| "--shadow-lod: not a number".to_string())?,
                )
            }
            "--pick" => args.pick = (number(value()?)? as usize).min(bevy_splat::render::MAX_PICKS),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.frames == 0 {
        return Err("--frames must be at least 1".into());
    }
    Ok(args)
}

/// Median, p10 and p90 of the whole frame and of the plugin's CPU systems, in ms.
struct WholeFrame {
    wall: (f64, f64, f64),
    prepare: (f64, f64, f64),
    record: (f64, f64, f64),
    /// The same app's frame with every cloud hidden: Bevy's own frame for this camera,
    /// what no splat pass can take away.
    without_splats: (f64, f64, f64),
}

fn time_whole_frames(
    headless: &mut Headless,
    camera: &HeadlessCamera,
    frames: usize,
) -> Result<WholeFrame, String> {
    let device = headless
        .app
        .world()
        .get_resource::<bevy::render::renderer::RenderDevice>()
        .ok_or("no render device in the app")?
        .clone();
    // One `App::update` and the wait for the GPU, in ms.
    let timed_frame = |headless: &mut Headless| {
        let start = std::time::Instant::now();
        headless.app.update();
        let _ = device
            .wgpu_device()
            .poll(wgpu::PollType::wait_indefinitely());
        start.elapsed().as_secs_f64() * 1e3
    };
    let (mut wall, mut prepare, mut record) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..frames {
        wall.push(timed_frame(headless));
        if let Some(s) = headless
            .app
            .world()
            .resource::<SplatStats>()
            .get(camera.entity)
        {
            prepare.push(s.cpu_prepare_ns as f64 * 1e-6);
            record.push(s.cpu_record_ns as f64 * 1e-6);
        }
    }
    if prepare.is_empty() {
        return Err("the camera drew no splats while timing whole frames".into());
    }
    let clouds: Vec<Entity> = headless
        .app
        .world_mut()
        .query_filtered::<Entity, With<bevy_splat::GaussianCloud>>()
        .iter(headless.app.world())
        .collect();
    let show = |headless: &mut Headless, visibility: Visibility| {
        for &cloud in &clouds {
            headless
                .app
                .world_mut()
                .entity_mut(cloud)
                .insert(visibility);
        }
    };
    show(headless, Visibility::Hidden);
    for _ in 0..30 {
        timed_frame(headless);
    }
    let without_splats: Vec<f64> = (0..frames).map(|_| timed_frame(headless)).collect();
    show(headless, Visibility::Inherited);
    for _ in 0..30 {
        timed_frame(headless);
    }
    Ok(WholeFrame {
        wall: summary(&wall),
        prepare: summary(&prepare),
        record: summary(&record),
        without_splats: summary(&without_splats),
    })
}

/// The first `count` splats of `base`, as an asset of their own.
fn first_splats(base: &GaussianSplats, count: usize) -> GaussianSplats {
    let count = count.min(base.len());
    let stride = base.sh_stride();
    GaussianSplats::new(
        base.geometry()[..count].to_vec(),
        base.sh()[..count * stride].to_vec(),
        base.sh_degree(),
    )
    .expect("a prefix of whole splats")
}

/// The camera of the K×K grids: above and behind, looking at the centre.
fn grid_camera(k: u32) -> Transform {
    let g = 1.8 * k as f32;
    Transform::from_xyz(0.0, 0.5 * g, -1.2 * g).looking_at(Vec3::ZERO, Vec3::Y)
}

/// The SH3 grid (see the module docs) built from `base`'s geometry and DC colours.
fn sh3_grid(base: &GaussianSplats, k: u32) -> GaussianSplats {
    const STRIDE: usize = 48;
    let offset = |n: u32| (n as f32 - (k as f32 - 1.0) / 2.0) * 1.8;
    let copies = (k * k) as usize;
    let mut geometry = Vec::with_capacity(base.len() * copies);
    let mut sh = Vec::with_capacity(base.len() * copies * STRIDE);
    let mut normal = Normal::new(0x5eed_0008);
    let base_stride = base.sh_stride();
    for i in 0..k {
        for j in 0..k {
            let shift = [offset(i), 0.0, offset(j)];
            for (n, g) in base.geometry().iter().enumerate() {
                let mut g = *g;
                for (p, d) in g.position.iter_mut().zip(shift) {
                    *p += d;
                }
                geometry.push(g);
                sh.extend_from_slice(&base.sh()[n * base_stride..n * base_stride + 3]);
                sh.extend((3..STRIDE).map(|_| 0.08 * normal.sample()));
            }
        }
    }
    GaussianSplats::new(geometry, sh, 3).expect("whole splats of degree 3")
}

/// Standard normal numbers from a fixed seed (xorshift64*, Box–Muller), so every run
/// and every machine builds the same scene.
struct Normal {
    state: u64,
    spare: Option<f32>,
}

impl Normal {
    fn new(seed: u64) -> Self {
        Self {
            state: seed.max(1),
            spare: None,
        }
    }

    fn uniform(&mut self) -> f64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let bits = self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        (bits as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn sample(&mut self) -> f32 {
        if let Some(spare) = self.spare.take() {
            return spare;
        }
        let radius = (-2.0 * self.uniform().ln()).sqrt();
        let angle = std::f64::consts::TAU * self.uniform();
        self.spare = Some((radius * angle.sin()) as f32);
        (radius * angle.cos()) as f32
    }
}

/// The whole splat span's time, from a camera without `SplatPassTimes`.
const TOTAL: &str = "total";
/// The same span while every pass is timed.
const TOTAL_TIMED: &str = "total_timed";

/// The GPU time of every shadow view the clouds are drawn into, by Bevy's pass name
/// of the view, over `frames` frames.
fn sample_shadow_times(
    headless: &mut Headless,
    frames: usize,
) -> Result<BTreeMap<String, Vec<f64>>, String> {
    let span = format!("{SHADOW_DIAGNOSTIC_SPAN}/");
    let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut last_seen: BTreeMap<String, std::time::Instant> = BTreeMap::new();
    let mut updates = 0;
    while samples.values().map(Vec::len).min().unwrap_or(0) < frames {
        headless.app.update();
        updates += 1;
        if updates > frames * 4 + 100 {
            return Err("no shadow view timings arrived: does the light cast?".into());
        }
        let store = headless.app.world().resource::<DiagnosticsStore>();
        for diagnostic in store.iter() {
            let path = diagnostic.path().as_str();
            let Some(view) = path
                .split_once(&span)
                .and_then(|(_, rest)| rest.strip_suffix("/elapsed_gpu"))
            else {
                continue;
            };
            let Some(m) = diagnostic.measurement() else {
                continue;
            };
            if last_seen.get(view) != Some(&m.time) {
                last_seen.insert(view.to_owned(), m.time);
                samples.entry(view.to_owned()).or_default().push(m.value);
            }
        }
    }
    Ok(samples)
}

/// The light of `--shadow-light`, over a scene centred on `centre` about `extent`
/// across.
fn spawn_shadow_light(
    headless: &mut Headless,
    light: ShadowLight,
    centre: Vec3,
    extent: f32,
) -> Entity {
    let world = headless.app.world_mut();
    match light {
        ShadowLight::Directional => world.spawn((
            DirectionalLight {
                shadow_maps_enabled: true,
                ..default()
            },
            Transform::default().looking_to(Vec3::new(0.4, -1.0, 0.3), Vec3::Y),
        )),
        ShadowLight::Point => world.spawn((
            PointLight {
                shadow_maps_enabled: true,
                range: 4.0 * extent,
                ..default()
            },
            Transform::from_translation(centre + Vec3::Y * 0.5 * extent),
        )),
    }
    .id()
}

/// `frames` GPU times of the whole splat span (as `TOTAL`) and, with `passes`, of each
/// stage, from Bevy's render diagnostics.
fn sample_gpu_times(
    headless: &mut Headless,
    frames: usize,
    passes: bool,
) -> Result<BTreeMap<&'static str, Vec<f64>>, String> {
    let stages = STAGES.iter().filter(|_| passes).map(|s| {
        (
            *s,
            DiagnosticPath::new(format!("render/{DIAGNOSTIC_SPAN}/{s}/elapsed_gpu")),
        )
    });
    let paths: Vec<(&str, DiagnosticPath)> = stages
        .chain([(
            TOTAL,
            DiagnosticPath::new(format!("render/{DIAGNOSTIC_SPAN}/elapsed_gpu")),
        )])
        .collect();
    let mut samples: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut last_seen: BTreeMap<&str, std::time::Instant> = BTreeMap::new();
    let mut updates = 0;
    while samples.get(TOTAL).map_or(0, Vec::len) < frames {
        headless.app.update();
        updates += 1;
        if updates > frames * 4 + 100 {
            return Err(
                "GPU timings did not arrive: does the adapter support timestamp queries?".into(),
            );
        }
        let store = headless.app.world().resource::<DiagnosticsStore>();
        for (name, path) in &paths {
            let Some(m) = store.get(path).and_then(|d| d.measurement()) else {
                continue;
            };
            if last_seen.get(name) != Some(&m.time) {
                last_seen.insert(name, m.time);
                samples.entry(name).or_default().push(m.value);
            }
        }
    }
    Ok(samples)
}

/// Median and the 10th/90th percentiles of a sample, in the sample's unit.
/// Updates until every cloud's tree is built and the camera's cut has held its
/// threshold for 30 frames; the frames it took.
fn settle_lod(headless: &mut Headless, camera: &HeadlessCamera) -> Result<usize, String> {
    let mut last = None;
    let mut steady = 0;
    for frame in 0..20_000 {
        headless.app.update();
        let world = headless.app.world();
        let trees = world.resource::<bevy_splat::lod::SplatLodTrees>();
        let built = world
            .resource::<Assets<GaussianSplats>>()
            .ids()
            .all(|id| !trees.is_building(id));
        let threshold = world
            .resource::<SplatStats>()
            .get(camera.entity)
            .and_then(|s| s.lod)
            .map(|lod| lod.threshold);
        steady = if built && threshold.is_some() && threshold == last {
            steady + 1
        } else {
            0
        };
        last = threshold;
        if steady >= 30 {
            return Ok(frame + 1);
        }
    }
    Err("the level-of-detail cut never settled".into())
}

fn summary(values: &[f64]) -> (f64, f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.1), at(0.9))
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    // A glTF scene is all its clouds at their node transforms; the angel grid repeats
    // the first.
    let mut scene = bevy_splat::headless::scene::load(&args.ply).map_err(|e| e.to_string())?;
    let (mut splats, _) = scene.remove(0);
    if let Some(k) = args.sh3_grid {
        splats = sh3_grid(&splats, k);
        scene.clear();
        if let Some(path) = &args.write_ply {
            let bytes = bevy_splat::asset::formats::ply::write(&DecodedSplats::from(&splats));
            std::fs::write(path, bytes)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    if args.cloud_grid.is_some() {
        splats = first_splats(&splats, args.cloud_splats);
        scene.clear();
    }
    splats = splats.with_storage(args.storage);
    let splat_count = splats.len() + scene.iter().map(|(s, _)| s.len()).sum::<usize>();

    let settings = match args.max_binding_mib {
        Some(mib) => storage_binding_limit(u64::from(mib) << 20)
            .ok_or("no GPU adapter to take the limits from")?,
        None => WgpuSettings::default(),
    };
    let plugins = DefaultPlugins.set(quiet_log()).disable::<WinitPlugin>();
    let whole_tiles = args.whole_tiles;
    let mut headless = Headless::with_settings(plugins, settings, |app| {
        app.add_plugins(RenderDiagnosticsPlugin);
        if whole_tiles {
            app.insert_resource(bevy_splat::SplatGpuLimits {
                max_tile_chunks: Some(0),
                ..default()
            });
        }
    });
    let handle = headless.add_splats(splats);
    let others: Vec<_> = scene
        .into_iter()
        .map(|(s, t)| (headless.add_splats(s), t))
        .collect();
    let spawn_scene = |headless: &mut Headless| {
        headless.spawn_cloud(handle.clone(), Transform::IDENTITY);
        for (h, t) in &others {
            headless.spawn_cloud(h.clone(), *t);
        }
    };

    let (clouds, camera_transform, projection, size) = if let Some(n) = args.cloud_grid {
        let side = (n as f32).sqrt().ceil() as u32;
        let offset = |i: u32| (i as f32 - (side as f32 - 1.0) / 2.0) * 1.8;
        for c in 0..n {
            headless.spawn_cloud(
                handle.clone(),
                Transform::from_xyz(offset(c % side), 0.0, offset(c / side)),
            );
        }
        (
            n,
            grid_camera(side),
            perspective(args.fov_degrees, args.size),
            args.size,
        )
    } else if let Some(k) = args.sh3_grid {
        spawn_scene(&mut headless);
        (
            1,
            grid_camera(k),
            perspective(args.fov_degrees, args.size),
            args.size,
        )
    } else if let Some(k) = args.angel_grid {
        for i in 0..k {
            for j in 0..k {
                let offset = |n: u32| (n as f32 - (k as f32 - 1.0) / 2.0) * 1.8;
                headless.spawn_cloud(
                    handle.clone(),
                    Transform::from_xyz(offset(i), 0.0, offset(j)),
                );
            }
        }
        (
            k * k,
            grid_camera(k),
            perspective(args.fov_degrees, args.size),
            args.size,
        )
    } else if let Some(path) = &args.cameras {
        let json = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let cameras =
            InriaCamera::parse_all(&json).map_err(|e| format!("{}: {e}", path.display()))?;
        let camera = cameras.get(args.camera_index).ok_or(format!(
            "{} has no camera {}",
            path.display(),
            args.camera_index
        ))?;
        spawn_scene(&mut headless);
        (
            1,
            camera.transform(),
            camera.projection(0.01),
            UVec2::new(camera.width, camera.height),
        )
    } else {
        let eye = args
            .eye
            .ok_or("give --angel-grid K, --cameras FILE or --eye X,Y,Z")?;
        spawn_scene(&mut headless);
        let transform = Transform::from_translation(eye).looking_at(args.target, Vec3::Y);
        (
            1,
            transform,
            perspective(args.fov_degrees, args.size),
            args.size,
        )
    };
    let camera = if args.display {
        headless.spawn_display_camera(camera_transform, projection, size, Color::BLACK)
    } else {
        headless.spawn_camera(camera_transform, projection, size, None)
    };
    if args.compute_composite {
        headless.composite_by_compute(&camera);
    } else if args.hdr {
        let mut entity = headless.app.world_mut().entity_mut(camera.entity);
        entity.insert(bevy::camera::Hdr);
    }
    if let Some(lighting) = args.lighting {
        let world = headless.app.world_mut();
        let clouds: Vec<Entity> = world
            .query_filtered::<Entity, With<bevy_splat::GaussianCloud>>()
            .iter(world)
            .collect();
        for cloud in clouds {
            world.entity_mut(cloud).insert(lighting);
        }
    }
    let mut shadow_light = None;
    if let Some(light) = args.shadow_light {
        let extent = args
            .angel_grid
            .or(args.sh3_grid)
            .map_or(10.0, |k| 1.8 * k as f32);
        let light = spawn_shadow_light(&mut headless, light, Vec3::ZERO, extent);
        shadow_light = Some(light);
        let mut light_entity = headless.app.world_mut().entity_mut(light);
        if args.redraw_shadows {
            light_entity.insert(bevy_splat::RedrawSplatShadows);
        }
        if let Some(scale) = args.shadow_scale {
            light_entity.insert(bevy_splat::SplatShadowScale(scale));
        }
        if let Some(texels) = args.shadow_lod {
            headless
                .app
                .world_mut()
                .entity_mut(light)
                .insert(bevy_splat::SplatLod {
                    budget: u32::MAX,
                    pixel_scale: texels,
                    ..default()
                });
        }
        if args.shadow_stages {
            headless
                .app
                .insert_resource(bevy_splat::SplatShadowPassTimes);
        }
        headless
            .app
            .world_mut()
            .entity_mut(camera.entity)
            .insert(bevy::camera::ShadowLodOrigin);
    }
    if args.pick > 0 {
        // What `SplatPickingPlugin` asks for a pointer over each pixel: a diagonal
        // through the image, every frame.
        let pixels = (0..args.pick)
            .map(|i| {
                let t = (i as f32 + 0.5) / args.pick as f32;
                (size.as_vec2() * Vec2::new(t, 0.25 + 0.5 * t)).as_uvec2()
            })
            .collect();
        headless.app.world_mut().entity_mut(camera.entity).insert(
            bevy_splat::render::SplatPickRequest {
                id: 0,
                pixels,
                ignored: Vec::new(),
            },
        );
    }

    if let Some(budget) = args.budget {
        let started = std::time::Instant::now();
        headless
            .app
            .world_mut()
            .entity_mut(camera.entity)
            .insert(bevy_splat::SplatLod::with_budget(budget));
        let frames = settle_lod(&mut headless, &camera)?;
        println!(
            "level of detail settled after {frames} frames, {:.2?} (tree build included)",
            started.elapsed()
        );
    }
    if args.shadow_lod.is_some() {
        // The light's cut needs the trees: wait for them (the cut itself settles in the
        // warm-up below).
        let started = std::time::Instant::now();
        let built = |headless: &Headless| {
            let trees = headless
                .app
                .world()
                .resource::<bevy_splat::lod::SplatLodTrees>();
            trees.iter().count() > 0
        };
        while !built(&headless) {
            if started.elapsed().as_secs() > 600 {
                return Err("the level-of-detail trees were not built in 10 minutes".into());
            }
            headless.app.update();
        }
        println!("shadow LOD trees built in {:.2?}", started.elapsed());
    }
    // Warm up until the view's buffers have settled (no frame missing pairs).
    headless
        .render(std::slice::from_ref(&camera))
        .map_err(|e| e.to_string())?;
    for _ in 0..args.warmup {
        headless.app.update();
    }

    // Each pass's time from a camera that times its passes; the headline total from
    // one that does not, as a user's camera draws (the timestamps at every pass's
    // ends cost GPU time, see `SplatPassTimes`), and as gsplat is timed: around the
    // whole call.
    headless
        .app
        .world_mut()
        .entity_mut(camera.entity)
        .insert(bevy_splat::SplatPassTimes);
    for _ in 0..args.warmup.min(10) {
        headless.app.update();
    }
    let mut samples = sample_gpu_times(&mut headless, args.frames, true)?;
    if let Some(total) = samples.remove(TOTAL) {
        samples.insert(TOTAL_TIMED, total);
    }
    headless
        .app
        .world_mut()
        .entity_mut(camera.entity)
        .remove::<bevy_splat::SplatPassTimes>();
    for _ in 0..args.warmup.min(10) {
        headless.app.update();
    }
    samples.extend(sample_gpu_times(&mut headless, args.frames, false)?);
    let shadow_views = match args.shadow_light {
        Some(_) => sample_shadow_times(&mut headless, args.frames)?,
        None => BTreeMap::new(),
    };

    let stats = headless
        .app
        .world()
        .resource::<SplatStats>()
        .get(camera.entity)
        .unwrap_or_default();
    let memory = headless.app.world().resource::<SplatMemory>().bytes();
    let total_splats = splat_count as u64 * u64::from(clouds);

    println!(
        "scene: {} splats ({clouds} cloud(s)), {}×{}",
        total_splats, size.x, size.y
    );
    println!(
        "visible splats: {}, tile pairs: {}, tiles drawn: {} of {} (in {} runs), bands: {}{}",
        stats.visible_splats,
        stats.tile_pairs,
        stats.tiles_drawn,
        size.x.div_ceil(TILE_SIZE) * size.y.div_ceil(TILE_SIZE),
        stats.tile_runs,
        stats.bands,
        if stats.complete() {
            ""
        } else {
            " (INCOMPLETE frame)"
        }
    );
    if let Some(lod) = stats.lod {
        println!(
            "level of detail: budget {}, threshold {:.3e}, {} splats in view without it, {} nodes weighed",
            args.budget.unwrap_or(0),
            lod.threshold,
            lod.leaves_in_view,
            lod.nodes_weighed
        );
    }
    println!(
        "GPU memory held by the plugin: {:.1} MiB ({:.1} B per splat)",
        memory as f64 / 1048576.0,
        memory as f64 / total_splats as f64
    );
    println!(
        "{:<12} {:>10} {:>10} {:>10}   (ms, {} frames)",
        "pass", "median", "p10", "p90", args.frames
    );
    let mut json_passes = serde_json::Map::new();
    for name in STAGES.iter().copied().chain([TOTAL_TIMED, TOTAL]) {
        let Some(values) = samples.get(name).filter(|v| !v.is_empty()) else {
            continue;
        };
        let (median, p10, p90) = summary(values);
        println!("{name:<12} {median:>10.3} {p10:>10.3} {p90:>10.3}");
        json_passes.insert(
            name.to_string(),
            serde_json::json!({ "median_ms": median, "p10_ms": p10, "p90_ms": p90, "samples": values.len() }),
        );
    }

    let mut shadow_total = 0.0;
    let mut json_shadows = serde_json::Map::new();
    // What the GPU counted in each view, beside its time, and the views that drew
    // from the surface they kept, standing still.
    let shadow_stats = headless
        .app
        .world()
        .get_resource::<bevy_splat::SplatShadowStats>();
    let (shadow_counts, from_kept) = match (shadow_stats, shadow_light) {
        (Some(stats), Some(light)) => (stats.get(light), stats.drawn_from_kept(light)),
        _ => Default::default(),
    };
    for (view, values) in &shadow_views {
        let (median, p10, p90) = summary(values);
        shadow_total += median;
        // A view's whole span has its counts; its stages' spans (`--shadow-stages`) not.
        let counts = shadow_counts
            .iter()
            .find(|(name, _)| name == view)
            .map(|(_, s)| *s);
        let drew = counts.map_or(String::new(), |c| {
            format!(
                "; {} visible splats, {} pairs, {} tiles drawn in {} runs, {} chunks",
                c.visible_splats, c.tile_pairs, c.tiles_drawn, c.tile_runs, c.tile_chunks
            )
        });
        let kept = from_kept.contains(view);
        let how = if kept { " (from its kept surface)" } else { "" };
        println!("shadow view {view}: {median:.3} ms ({p10:.3}–{p90:.3}){how}{drew}");
        let mut json = serde_json::json!({
            "median_ms": median, "p10_ms": p10, "p90_ms": p90, "samples": values.len(),
            "from_kept": kept,
        });
        if let Some(c) = counts {
            json["visible_splats"] = c.visible_splats.into();
            json["tile_pairs"] = c.tile_pairs.into();
            json["tiles_drawn"] = c.tiles_drawn.into();
            json["tile_runs"] = c.tile_runs.into();
            json["tile_chunks"] = c.tile_chunks.into();
        }
        json_shadows.insert(view.clone(), json);
    }
    if !shadow_views.is_empty() {
        println!(
            "shadow views: {} of them, {shadow_total:.3} ms in all (sum of medians)",
            shadow_views.len()
        );
    }

    let whole_frame = if args.whole_frame {
        Some(time_whole_frames(&mut headless, &camera, args.frames)?)
    } else {
        None
    };
    if let Some(whole) = &whole_frame {
        println!(
            "whole frame: {:.3} ms median ({:.3}–{:.3}); plugin CPU per frame: prepare {:.3} ms, \
             record {:.3} ms (medians, {} frames)",
            whole.wall.0, whole.wall.1, whole.wall.2, whole.prepare.0, whole.record.0, args.frames
        );
        let bare = whole.without_splats;
        println!(
            "whole frame with every cloud hidden: {:.3} ms median ({:.3}–{:.3})",
            bare.0, bare.1, bare.2
        );
    }

    if let Some(path) = &args.json {
        let report = serde_json::json!({
            "scene": { "splats": total_splats, "clouds": clouds, "width": size.x, "height": size.y,
                       "angel_grid": args.angel_grid, "sh3_grid": args.sh3_grid,
                       "cloud_grid": args.cloud_grid, "ply": args.ply },
            "visible_splats": stats.visible_splats,
            "lod": stats.lod.map(|lod| serde_json::json!({
                "budget": args.budget, "threshold": lod.threshold,
                "leaves_in_view": lod.leaves_in_view, "nodes_weighed": lod.nodes_weighed,
            })),
            "tile_pairs": stats.tile_pairs,
            "tiles_drawn": stats.tiles_drawn,
            "tile_runs": stats.tile_runs,
            "bands": stats.bands,
            "complete": stats.complete(),
            "gpu_bytes": memory,
            "compute_composite": stats.compute_composite,
            "bytes_per_splat": memory as f64 / total_splats as f64,
            "passes": json_passes,
            "shadow_light": args.shadow_light.map(|l| format!("{l:?}")),
            "shadow_views": json_shadows,
            "shadow_views_total_ms": shadow_total,
            "shadow_lod_texels": args.shadow_lod,
            "whole_tiles": args.whole_tiles,
            "lighting": args.lighting.map(|l| format!("{l:?}")),
            "whole_frame": whole_frame.as_ref().map(|w| serde_json::json!({
                "wall_ms": { "median": w.wall.0, "p10": w.wall.1, "p90": w.wall.2 },
                "cpu_prepare_ms": { "median": w.prepare.0, "p10": w.prepare.1, "p90": w.prepare.2 },
                "cpu_record_ms": { "median": w.record.0, "p10": w.record.1, "p90": w.record.2 },
                "without_splats_ms": { "median": w.without_splats.0, "p10": w.without_splats.1,
                                       "p90": w.without_splats.2 },
            })),
        });
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if args.png.is_some() || args.psnr_against.is_some() {
        let image = headless.read_back(&camera).map_err(|e| e.to_string())?;
        if let Some(path) = &args.png {
            image.save_png(path).map_err(|e| e.to_string())?;
        }
        if let Some(path) = &args.psnr_against {
            let psnr = psnr_against(&image.rgb(), path)?;
            println!("PSNR against {}: {psnr:.2} dB", path.display());
        }
    }
    if let (Some(frames), Some(k)) = (args.camera_path, args.angel_grid) {
        let changes = frame_changes(&mut headless, &camera, k, frames)?;
        let (mean, p99) = mean_and_p99(&changes);
        println!(
            "camera path: {} frame-to-frame changes over {frames} frames, mean {mean:.3}, \
             p99 {p99:.3} (mean |ΔRGB|, 1/255)",
            changes.len()
        );
    }
    Ok(())
}

/// Flies `camera` from the grid camera of `k` down into the grid in `frames` frames,
/// one `App::update` each, reading every frame back; each frame's mean absolute RGB
/// difference from the frame before.
fn frame_changes(
    headless: &mut Headless,
    camera: &HeadlessCamera,
    k: u32,
    frames: usize,
) -> Result<Vec<f64>, String> {
    use std::sync::{Arc, Mutex, PoisonError};

    use bevy::render::gpu_readback::{Readback, ReadbackComplete};
    let device = headless
        .app
        .world()
        .get_resource::<bevy::render::renderer::RenderDevice>()
        .ok_or("no render device in the app")?
        .clone();
    let received: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let sink = received.clone();
    let reader = headless
        .app
        .world_mut()
        .spawn(Readback::texture(camera.image.clone()))
        .observe(move |event: On<ReadbackComplete>| {
            let mut frames = sink.lock().unwrap_or_else(PoisonError::into_inner);
            frames.push(event.data.clone());
        })
        .id();
    let g = 1.8 * k as f32;
    let from = Vec3::new(0.0, 0.5 * g, -1.2 * g);
    let to = Vec3::new(0.0, 0.08 * g, -0.3 * g);
    let mut previous: Option<Vec<u8>> = None;
    let mut changes = Vec::with_capacity(frames);
    // A few frames more: read-backs arrive a frame or two late.
    for frame in 0..frames + 4 {
        let t = frame.min(frames - 1) as f32 / (frames - 1) as f32;
        let eye = from.lerp(to, t);
        let transform = Transform::from_translation(eye)
            .looking_at(Vec3::new(0.0, 0.0, eye.z + 0.9 * g), Vec3::Y);
        if let Some(mut placed) = headless.app.world_mut().get_mut::<Transform>(camera.entity) {
            *placed = transform;
        }
        headless.app.update();
        let _ = device
            .wgpu_device()
            .poll(wgpu::PollType::wait_indefinitely());
        let arrived: Vec<Vec<u8>> =
            std::mem::take(&mut *received.lock().unwrap_or_else(PoisonError::into_inner));
        for data in arrived {
            let image = bevy_splat::headless::Rgba8::from_padded_rows(&data, camera.size).rgb();
            if let Some(before) = &previous
                && changes.len() < frames - 1
                && before.len() == image.len()
            {
                let sum: u64 = before
                    .iter()
                    .zip(&image)
                    .map(|(&a, &b)| u64::from(a.abs_diff(b)))
                    .sum();
                changes.push(sum as f64 / image.len().max(1) as f64);
            }
            previous = Some(image);
        }
    }
    headless.app.world_mut().despawn(reader);
    if changes.is_empty() {
        return Err("no frame of the camera path came back".into());
    }
    Ok(changes)
}

fn mean_and_p99(values: &[f64]) -> (f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mean = sorted.iter().sum::<f64>() / sorted.len().max(1) as f64;
    let p99 = sorted[((sorted.len() as f64 * 0.99) as usize).min(sorted.len() - 1)];
    (mean, p99)
}

/// The PSNR of `rgb` against the PNG at `path` (same size), over 8-bit RGB.
fn psnr_against(rgb: &[u8], path: &std::path::Path) -> Result<f64, String> {
    let other = image::open(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .to_rgb8();
    if other.as_raw().len() != rgb.len() {
        return Err(format!("{} is not the size of this image", path.display()));
    }
    let squared: f64 = rgb
        .iter()
        .zip(other.as_raw())
        .map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2))
        .sum();
    let mse = squared / rgb.len() as f64;
    Ok(if mse == 0.0 {
        f64::INFINITY
    } else {
        10.0 * (255.0f64 * 255.0 / mse).log10()
    })
}

fn perspective(fov_degrees: f32, size: UVec2) -> PerspectiveProjection {
    PerspectiveProjection {
        fov: fov_degrees.to_radians(),
        aspect_ratio: size.x as f32 / size.y as f32,
        near: 0.01,
        ..default()
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
