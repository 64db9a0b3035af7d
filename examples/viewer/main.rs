//! Opens a window (or, built for the web, a page) on a splat scene with a pan-orbit
//! camera:
//!
//! ```text
//! cargo run --release --example viewer [path/to/scene] [--opencv] [--eye x,y,z]
//!     [--target x,y,z] [--fov DEGREES] [--width PX] [--height PX]
//!     [--background rrggbb] [--hud 0] [--max-binding-mib N] [--budget SPLATS]
//!     [--gpu-memory MIB] [--light shadowed|lit]
//! ```
//!
//! Any format the plugin loads (`.ply`, compressed `.ply`, `.splat`, `.spz`, `.sog`, a
//! SOG `meta.json` or streamed `lod-meta.json`, `.rad`, `.ksplat`, a `.gltf`/`.glb`
//! scene); a file dropped onto the window replaces
//! the scene. Without a path it shows the shipped angel scan. `--opencv` turns a scene
//! trained in COLMAP/OpenCV axes (+Y down) upright. Drag to orbit, right-drag to pan,
//! scroll to zoom. `--gpu-memory` streams a `.rad` (its coarse levels at once, the rest
//! as the camera needs it, within that much GPU memory; the HUD says how far it has
//! come). `--light` adds a sun with shadow maps and gives every cloud that
//! `SplatLighting`. On the web the same settings come from the page's query
//! (`?url=…&eye=…`, see `web.rs` and `web/index.html`).

mod options;
#[cfg(target_arch = "wasm32")]
mod web;

use bevy::asset::{AssetMetaCheck, AssetPath, LoadState};
use bevy::camera::{PerspectiveProjection, Projection};
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::ecs::system::SystemParam;
use bevy::platform::time::Instant;
use bevy::prelude::*;
use bevy_panorbit_camera::{PanOrbitCamera, PanOrbitCameraPlugin};
use bevy_splat::streaming::{SplatStreaming, SplatStreamingStats};
use bevy_splat::{
    GaussianCloud, GaussianScene, GaussianSceneRoot, GaussianSplatPlugin, GaussianSplats,
    SplatGpuLimits, SplatLoaderSettings, SplatLod, SplatStats,
};

use options::ViewerOptions;

/// The shipped scene, in `assets/`.
const SAMPLE: &str = "angel.ply";

#[derive(Resource)]
struct Scene {
    /// The file being shown: a cloud, or a glTF scene of clouds.
    handle: UntypedHandle,
    started: Instant,
    /// Loaded (or failed) and, unless the camera was placed by hand, framed.
    settled: bool,
    /// Aim the camera at the scene once it has loaded (no `eye` was given).
    aim: bool,
    /// The file named at start-up ends a native app when it fails to load; a
    /// dropped one shows its error instead.
    exit_on_error: bool,
    error: Option<String>,
}

/// How far the viewer has got with the current file: what the web page's title
/// reports to its tests.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
enum ViewerStatus {
    #[default]
    Loading,
    /// The scene has loaded and a complete frame of it has been drawn.
    Ready,
    Failed(String),
}

/// The entity the shown file hangs from (the cloud itself, or the scene's root).
#[derive(Component)]
struct Viewed;

#[derive(Component)]
struct Hud;

/// Whether `.rad` files load as streams (`--gpu-memory`).
#[derive(Resource, Clone, Copy, Default)]
struct LoadStreamed(bool);

/// Spawns `path` (a cloud file, or a `.gltf`/`.glb` scene) and returns its handle.
fn spawn_file(
    commands: &mut Commands,
    assets: &AssetServer,
    path: AssetPath<'static>,
    transform: Transform,
    streamed: LoadStreamed,
) -> UntypedHandle {
    let is_gltf = path
        .get_full_extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gltf") || e.eq_ignore_ascii_case("glb"));
    if is_gltf {
        let scene: Handle<GaussianScene> = assets.load(path);
        commands.spawn((GaussianSceneRoot(scene.clone()), transform, Viewed));
        scene.untyped()
    } else {
        let streamed = streamed.0;
        let cloud: Handle<GaussianSplats> = assets
            .load_builder()
            .with_settings(move |s: &mut SplatLoaderSettings| s.streaming = streamed)
            .load(path);
        commands.spawn((GaussianCloud(cloud.clone()), transform, Viewed));
        cloud.untyped()
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> AppExit {
    use bevy::asset::io::AssetSourceBuilder;
    use bevy::asset::io::file::FileAssetReader;
    use std::path::{Path, PathBuf};

    let options = match native_options(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("viewer: {message}");
            return AppExit::error();
        }
    };
    // A file outside `assets/` is served from its own folder.
    let (asset_root, file) = match &options.scene {
        Some(path) => {
            let path = PathBuf::from(path);
            let absolute = std::path::absolute(&path).unwrap_or(path);
            let folder = absolute.parent().map(Path::to_path_buf).unwrap_or_default();
            let name = absolute
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (folder.to_string_lossy().into_owned(), name)
        }
        None => ("assets".to_owned(), SAMPLE.to_owned()),
    };
    let mut app = App::new();
    // Files dropped onto the window are read through this source, rooted at `/`.
    app.register_asset_source(
        DROPPED_SOURCE,
        AssetSourceBuilder::new(|| Box::new(FileAssetReader::new("/"))),
    );
    viewer_app(&mut app, &options, asset_root, AssetPath::from(file));
    app.add_systems(Update, open_dropped_files);
    app.run()
}

#[cfg(target_arch = "wasm32")]
fn main() {
    web::start();
}

/// The asset source that dropped files are read from: the file system natively, a
/// memory folder on the web.
const DROPPED_SOURCE: &str = "dropped";

#[cfg(not(target_arch = "wasm32"))]
fn native_options(args: impl Iterator<Item = String>) -> Result<ViewerOptions, String> {
    let mut options = ViewerOptions::default();
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        match arg.strip_prefix("--") {
            Some("opencv") => options.opencv = true,
            Some(key) => {
                let value = args.next().ok_or(format!("--{key} needs a value"))?;
                options.set(&key.replace('-', "_"), &value)?;
            }
            None => options.scene = Some(arg),
        }
    }
    Ok(options)
}

/// Everything both front ends share: plugins, the camera, the scene, the HUD.
fn viewer_app(
    app: &mut App,
    options: &ViewerOptions,
    asset_root: String,
    scene: AssetPath<'static>,
) {
    let mut window = Window {
        title: "bevy_splat viewer".into(),
        ..default()
    };
    if let Some(size) = options.size() {
        window.resolution = bevy::window::WindowResolution::new(size.x, size.y);
    }
    #[cfg(target_arch = "wasm32")]
    {
        window.canvas = Some(web::CANVAS.into());
        window.fit_canvas_to_parent = options.size().is_none();
    }
    let plugins = DefaultPlugins
        .set(AssetPlugin {
            file_path: asset_root,
            // No `.meta` files ship; asking for them costs a request (a 404 on
            // the web) per file.
            meta_check: AssetMetaCheck::Never,
            ..default()
        })
        .set(WindowPlugin {
            primary_window: Some(window),
            ..default()
        });
    // Files by URL are read with Range requests (`register_http_range_sources`), so a
    // streamed `.rad` downloads only the chunks the camera needs.
    #[cfg(target_arch = "wasm32")]
    let plugins = {
        bevy_splat::asset::register_http_range_sources(app);
        plugins.disable::<bevy::asset::io::web::WebAssetPlugin>()
    };
    app.add_plugins((
        plugins,
        GaussianSplatPlugin,
        PanOrbitCameraPlugin,
        FrameTimeDiagnosticsPlugin::default(),
    ))
    .insert_resource(ClearColor(options.background))
    .insert_resource(SplatGpuLimits {
        max_storage_binding_bytes: options.max_binding_mib.map(|mib| u64::from(mib) << 20),
        ..default()
    })
    .init_resource::<ViewerStatus>()
    .insert_resource(LoadStreamed(options.gpu_memory_mib.is_some()));
    if let Some(mib) = options.gpu_memory_mib {
        app.insert_resource(SplatStreaming {
            gpu_bytes: u64::from(mib) << 20,
            ..default()
        });
    }
    let light = options.light;
    let options = options.clone();
    app.add_systems(
        Startup,
        move |mut commands: Commands, assets: Res<AssetServer>| {
            setup(&mut commands, &assets, &options, scene.clone())
        },
    )
    .add_systems(Update, (settle_scene, update_status, update_hud).chain());
    if let Some(lighting) = light {
        app.insert_resource(options::SUN_SHADOW_MAP);
        app.add_systems(
            Update,
            move |mut commands: Commands, clouds: Query<Entity, Added<GaussianCloud>>| {
                for cloud in &clouds {
                    commands.entity(cloud).insert(lighting);
                }
            },
        );
    }
}

fn setup(
    commands: &mut Commands,
    assets: &AssetServer,
    options: &ViewerOptions,
    scene: AssetPath<'static>,
) {
    let rotation = if options.opencv {
        Quat::from_rotation_x(std::f32::consts::PI)
    } else {
        Quat::IDENTITY
    };
    let streamed = LoadStreamed(options.gpu_memory_mib.is_some());
    let handle = spawn_file(
        commands,
        assets,
        scene,
        Transform::from_rotation(rotation),
        streamed,
    );
    commands.insert_resource(Scene {
        handle,
        started: Instant::now(),
        settled: false,
        aim: options.eye.is_none(),
        exit_on_error: true,
        error: None,
    });
    let (transform, orbit) = match options.eye {
        Some(eye) => {
            let target = options.target.unwrap_or(Vec3::ZERO);
            let orbit = PanOrbitCamera {
                focus: target,
                target_focus: target,
                ..default()
            };
            (
                Transform::from_translation(eye).looking_at(target, Vec3::Y),
                orbit,
            )
        }
        None => (
            Transform::from_xyz(0.0, 1.0, 4.0),
            PanOrbitCamera::default(),
        ),
    };
    let mut projection = PerspectiveProjection::default();
    if let Some(fov) = options.fov_degrees {
        projection.fov = fov.to_radians();
    }
    let mut camera = commands.spawn((
        Camera3d::default(),
        Projection::Perspective(projection),
        Tonemapping::None,
        Msaa::Off,
        transform,
        orbit,
    ));
    if let Some(budget) = options.budget {
        camera.insert(SplatLod::with_budget(budget));
    }
    if options.light.is_some() {
        commands.spawn(options::sun());
    }
    if options.hud {
        commands.spawn((
            Hud,
            Text::new("loading…"),
            Node {
                position_type: PositionType::Absolute,
                top: px(8),
                left: px(8),
                ..default()
            },
        ));
    }
}

/// What opening another file touches: the shown entity, the scene's state, the status.
#[derive(SystemParam)]
struct SceneSwitch<'w, 's> {
    commands: Commands<'w, 's>,
    scene: ResMut<'w, Scene>,
    status: ResMut<'w, ViewerStatus>,
    assets: Res<'w, AssetServer>,
    streamed: Res<'w, LoadStreamed>,
    viewed: Query<'w, 's, (Entity, &'static Transform), With<Viewed>>,
}

impl SceneSwitch<'_, '_> {
    /// Replaces the shown file with `path`, keeping the old one's placement.
    fn open(&mut self, path: AssetPath<'static>) {
        info!("opening {path}");
        let mut transform = Transform::default();
        for (entity, old) in &self.viewed {
            transform = *old;
            self.commands.entity(entity).despawn();
        }
        let scene = &mut *self.scene;
        scene.handle = spawn_file(
            &mut self.commands,
            &self.assets,
            path,
            transform,
            *self.streamed,
        );
        scene.started = Instant::now();
        scene.settled = false;
        scene.aim = true;
        scene.exit_on_error = false;
        scene.error = None;
        *self.status = ViewerStatus::Loading;
    }
}

/// A file dropped onto the window replaces the scene.
#[cfg(not(target_arch = "wasm32"))]
fn open_dropped_files(mut drops: MessageReader<FileDragAndDrop>, mut switch: SceneSwitch) {
    for drop in drops.read() {
        let FileDragAndDrop::DroppedFile { path_buf, .. } = drop else {
            continue;
        };
        let absolute = std::path::absolute(path_buf).unwrap_or_else(|_| path_buf.clone());
        let relative = absolute.strip_prefix("/").unwrap_or(&absolute).to_owned();
        switch.open(AssetPath::from_path_buf(relative).with_source(DROPPED_SOURCE));
    }
}

/// Once every cloud of the file has loaded: log it and, unless the camera was placed
/// by hand, aim it at their bounds.
fn settle_scene(
    mut scene: ResMut<Scene>,
    assets: Res<AssetServer>,
    splats: Res<Assets<GaussianSplats>>,
    clouds: Query<(&GaussianCloud, &GlobalTransform)>,
    mut cameras: Query<&mut PanOrbitCamera>,
    mut exit: MessageWriter<AppExit>,
) {
    if scene.settled {
        return;
    }
    if let LoadState::Failed(error) = assets.load_state(scene.handle.id()) {
        error!("{error}");
        if scene.exit_on_error && cfg!(not(target_arch = "wasm32")) {
            exit.write(AppExit::error());
        }
        scene.error = Some(one_line(&error.to_string()));
        scene.settled = true;
        return;
    }
    if !assets.is_loaded_with_dependencies(scene.handle.id()) {
        return;
    }
    let loaded: Vec<_> = clouds
        .iter()
        .filter_map(|(cloud, transform)| Some((splats.get(&cloud.0)?, transform)))
        .collect();
    // A scene's clouds are spawned a frame after it loads.
    if loaded.is_empty() || loaded.len() < clouds.iter().len() {
        return;
    }
    scene.settled = true;
    let count: usize = loaded.iter().map(|(s, _)| s.len()).sum();
    info!(
        "loaded {count} splats in {} clouds, in {:.2?}",
        loaded.len(),
        scene.started.elapsed()
    );
    if !scene.aim {
        return;
    }
    // The clouds' boxes in world space, joined.
    let (mut low, mut high) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
    for (cloud, transform) in &loaded {
        let Some(bounds) = cloud.bounds() else {
            continue;
        };
        let centre = transform.transform_point(Vec3::from(bounds.center));
        // Trained scenes carry far-off background splats: frame the bulk, not the
        // outliers.
        let reach = (Vec3::from(bounds.half_extents) * transform.scale())
            .length()
            .min(20.0);
        low = low.min(centre - reach);
        high = high.max(centre + reach);
    }
    if !low.is_finite() || !high.is_finite() {
        return;
    }
    let centre = (low + high) * 0.5;
    let radius = ((high - low) * 0.5).length() / 3f32.sqrt();
    for mut camera in &mut cameras {
        // Jump there rather than glide: at a few frames per second a glide takes long.
        camera.focus = centre;
        camera.target_focus = centre;
        camera.radius = Some(radius * 1.6);
        camera.target_radius = radius * 1.6;
        camera.force_update = true;
    }
}

/// The first line of an error, for titles and the HUD.
fn one_line(message: &str) -> String {
    message.lines().next().unwrap_or_default().trim().to_owned()
}

/// Ready once the GPU has reported a complete frame that was recorded after the
/// scene settled (and the camera moved to it); failed when the file did.
fn update_status(
    scene: Res<Scene>,
    stats: Res<SplatStats>,
    cameras: Query<Entity, With<Camera3d>>,
    mut status: ResMut<ViewerStatus>,
    mut reports_when_settled: Local<Option<u64>>,
) {
    if let Some(error) = &scene.error {
        *reports_when_settled = None;
        if !matches!(*status, ViewerStatus::Failed(_)) {
            *status = ViewerStatus::Failed(error.clone());
        }
        return;
    }
    if !scene.settled {
        *reports_when_settled = None;
        return;
    }
    if *status != ViewerStatus::Loading {
        return;
    }
    let Some(camera) = cameras.iter().next() else {
        return;
    };
    let view = stats.get(camera).unwrap_or_default();
    let settled_at = *reports_when_settled.get_or_insert(view.gpu_reports);
    // The counters are copied only while the staging buffer is free, so the second
    // report after settling comes from a frame recorded after it.
    if view.gpu_reports >= settled_at + 2 && view.complete() {
        info!(
            "first complete frame of the scene after {:.2?}",
            scene.started.elapsed()
        );
        *status = ViewerStatus::Ready;
    }
}

fn update_hud(
    scene: Res<Scene>,
    splats: Res<Assets<GaussianSplats>>,
    clouds: Query<&GaussianCloud>,
    cameras: Query<Entity, With<SplatLod>>,
    all_cameras: Query<Entity, With<Camera3d>>,
    stats: Res<SplatStats>,
    (streaming, settings): (Res<SplatStreamingStats>, Res<SplatStreaming>),
    diagnostics: Res<DiagnosticsStore>,
    mut hud: Query<&mut Text, With<Hud>>,
) {
    if let Some(error) = &scene.error {
        for mut text in &mut hud {
            text.0 = format!("could not open the file: {error}");
        }
        return;
    }
    let loaded: Vec<_> = clouds.iter().filter_map(|c| splats.get(&c.0)).collect();
    if loaded.is_empty() {
        return;
    }
    // A streamed cloud's asset is its first chunk: count its whole tree.
    let any_streamed = loaded.iter().any(|s| s.stream().is_some());
    let count: u64 = loaded
        .iter()
        .map(|s| match s.stream() {
            Some(stream) => u64::from(stream.index.nodes()),
            None => s.len() as u64,
        })
        .sum();
    let degree = loaded.iter().map(|s| s.sh_degree()).max().unwrap_or(0);
    let fps = diagnostics
        .get(&FrameTimeDiagnosticsPlugin::FPS)
        .and_then(|fps| fps.smoothed())
        .unwrap_or(0.0);
    // Software renderers draw a frame a second or slower: keep a digit there.
    let digits = if fps < 10.0 { 1 } else { 0 };
    // With a budget: what the cut drew of the splats in view.
    let lod = cameras
        .iter()
        .find_map(|camera| stats.get(camera))
        .filter(|s| s.lod.is_some())
        .map(|s| {
            let in_view = s.lod.map_or(0, |lod| lod.leaves_in_view);
            format!("\n{} drawn of {in_view} in view (LOD)", s.visible_splats)
        })
        .unwrap_or_default();
    // Streaming: what is on the GPU of the streamed trees, and what is on its way.
    let streaming = if streaming.streams > 0 {
        let drawn = all_cameras
            .iter()
            .find_map(|camera| stats.get(camera))
            .map_or(0, |s| s.visible_splats);
        format!(
            "\n{drawn} drawn | {} of {} nodes resident ({} of {} chunks, {:.0} of {} MiB) | \
                 {} in flight",
            streaming.resident_nodes,
            streaming.total_nodes,
            streaming.resident_chunks,
            streaming.total_chunks,
            streaming.gpu_bytes as f64 / f64::from(1 << 20),
            settings.gpu_bytes >> 20,
            streaming.in_flight
        )
    } else {
        String::new()
    };
    for mut text in &mut hud {
        let what = if any_streamed { "nodes" } else { "splats" };
        text.0 = format!("{count} {what} | SH {degree} | {fps:.digits$} fps{lod}{streaming}");
    }
}
