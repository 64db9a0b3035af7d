//! Opens a window on a splat scene with a pan-orbit camera:
//!
//! ```text
//! cargo run --release --example viewer [path/to/scene] [--opencv]
//! ```
//!
//! Any format the plugin loads (`.ply`, compressed `.ply`, `.splat`, `.spz`, `.sog`, a
//! SOG `meta.json`, a `.gltf`/`.glb` scene); a file dropped onto the window replaces the scene. Without a path
//! it shows the shipped angel scan. `--opencv` turns a scene trained in
//! COLMAP/OpenCV axes (+Y down) upright. Drag to orbit, right-drag to pan, scroll to zoom.

use std::path::{Path, PathBuf};
use std::time::Instant;

use bevy::asset::AssetPath;
use bevy::asset::LoadState;
use bevy::asset::io::AssetSourceBuilder;
use bevy::asset::io::file::FileAssetReader;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::prelude::*;
use bevy_panorbit_camera::{PanOrbitCamera, PanOrbitCameraPlugin};
use bevy_splat::{
    GaussianCloud, GaussianScene, GaussianSceneRoot, GaussianSplatPlugin, GaussianSplats,
};

const SAMPLE: &str = "angel.ply";

#[derive(Resource)]
struct Scene {
    /// The file being shown: a cloud, or a glTF scene of clouds.
    handle: UntypedHandle,
    started: Instant,
    framed: bool,
    /// The file named on the command line ends the app when it fails to load; a
    /// dropped one shows its error instead.
    exit_on_error: bool,
    error: Option<String>,
}

/// The entity the shown file hangs from (the cloud itself, or the scene's root).
#[derive(Component)]
struct Viewed;

/// Files dropped onto the window are read through this asset source, rooted at `/`.
const LOCAL_SOURCE: &str = "local";

/// Spawns `path` (a cloud file, or a `.gltf`/`.glb` scene) and returns its handle.
fn spawn_file(
    commands: &mut Commands,
    assets: &AssetServer,
    path: AssetPath<'static>,
    transform: Transform,
) -> UntypedHandle {
    let is_gltf = path
        .get_full_extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gltf") || e.eq_ignore_ascii_case("glb"));
    if is_gltf {
        let scene: Handle<GaussianScene> = assets.load(path);
        commands.spawn((GaussianSceneRoot(scene.clone()), transform, Viewed));
        scene.untyped()
    } else {
        let cloud: Handle<GaussianSplats> = assets.load(path);
        commands.spawn((GaussianCloud(cloud.clone()), transform, Viewed));
        cloud.untyped()
    }
}

#[derive(Component)]
struct Hud;

fn main() -> AppExit {
    let mut path = None;
    let mut opencv = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--opencv" => opencv = true,
            _ => path = Some(PathBuf::from(arg)),
        }
    }
    // A file outside `assets/` is served from its own folder.
    let (asset_root, file) = match &path {
        Some(path) => {
            let absolute = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            let folder = absolute.parent().map(Path::to_path_buf).unwrap_or_default();
            let name = absolute
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (folder.to_string_lossy().into_owned(), name)
        }
        None => ("assets".to_owned(), SAMPLE.to_owned()),
    };

    App::new()
        .register_asset_source(
            LOCAL_SOURCE,
            AssetSourceBuilder::new(|| Box::new(FileAssetReader::new("/"))),
        )
        .add_plugins((
            DefaultPlugins
                .set(AssetPlugin {
                    file_path: asset_root,
                    ..default()
                })
                .set(WindowPlugin {
                    primary_window: Some(Window {
                        title: "bevy_splat viewer".into(),
                        ..default()
                    }),
                    ..default()
                }),
            GaussianSplatPlugin,
            PanOrbitCameraPlugin,
            FrameTimeDiagnosticsPlugin::default(),
        ))
        .insert_resource(ClearColor(Color::srgb(0.08, 0.08, 0.1)))
        .add_systems(
            Startup,
            move |mut commands: Commands, assets: Res<AssetServer>| {
                setup(&mut commands, &assets, &file, opencv)
            },
        )
        .add_systems(Update, (open_dropped_files, frame_cloud, update_hud))
        .run()
}

fn setup(commands: &mut Commands, assets: &AssetServer, file: &str, opencv: bool) {
    let rotation = if opencv {
        Quat::from_rotation_x(std::f32::consts::PI)
    } else {
        Quat::IDENTITY
    };
    let handle = spawn_file(
        commands,
        assets,
        AssetPath::from(file.to_owned()),
        Transform::from_rotation(rotation),
    );
    commands.insert_resource(Scene {
        handle,
        started: Instant::now(),
        framed: false,
        exit_on_error: true,
        error: None,
    });
    commands.spawn((
        Camera3d::default(),
        Tonemapping::None,
        Msaa::Off,
        Transform::from_xyz(0.0, 1.0, 4.0),
        PanOrbitCamera::default(),
    ));
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

/// A file dropped onto the window replaces the scene.
fn open_dropped_files(
    mut drops: MessageReader<FileDragAndDrop>,
    mut commands: Commands,
    mut scene: ResMut<Scene>,
    assets: Res<AssetServer>,
    viewed: Query<(Entity, &Transform), With<Viewed>>,
) {
    for drop in drops.read() {
        let FileDragAndDrop::DroppedFile { path_buf, .. } = drop else {
            continue;
        };
        let absolute = std::path::absolute(path_buf).unwrap_or_else(|_| path_buf.clone());
        let relative = absolute.strip_prefix("/").unwrap_or(&absolute).to_owned();
        info!("opening {}", absolute.display());
        let mut transform = Transform::default();
        for (entity, old) in &viewed {
            transform = *old;
            commands.entity(entity).despawn();
        }
        let path = AssetPath::from_path_buf(relative).with_source(LOCAL_SOURCE);
        scene.handle = spawn_file(&mut commands, &assets, path, transform);
        scene.started = Instant::now();
        scene.framed = false;
        scene.exit_on_error = false;
        scene.error = None;
    }
}

/// Once every cloud of the file has loaded: log it and aim the camera at their bounds.
fn frame_cloud(
    mut scene: ResMut<Scene>,
    assets: Res<AssetServer>,
    splats: Res<Assets<GaussianSplats>>,
    clouds: Query<(&GaussianCloud, &GlobalTransform)>,
    mut cameras: Query<&mut PanOrbitCamera>,
    mut exit: MessageWriter<AppExit>,
) {
    if scene.framed {
        return;
    }
    if let LoadState::Failed(error) = assets.load_state(scene.handle.id()) {
        error!("{error}");
        if scene.exit_on_error {
            exit.write(AppExit::error());
        }
        scene.error = Some(error.to_string());
        scene.framed = true;
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
    scene.framed = true;
    let count: usize = loaded.iter().map(|(s, _)| s.len()).sum();
    info!(
        "loaded {count} splats in {} clouds, in {:.2?}",
        loaded.len(),
        scene.started.elapsed()
    );
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

fn update_hud(
    scene: Res<Scene>,
    splats: Res<Assets<GaussianSplats>>,
    clouds: Query<&GaussianCloud>,
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
    let count: usize = loaded.iter().map(|s| s.len()).sum();
    let degree = loaded.iter().map(|s| s.sh_degree()).max().unwrap_or(0);
    let fps = diagnostics
        .get(&FrameTimeDiagnosticsPlugin::FPS)
        .and_then(|fps| fps.smoothed())
        .unwrap_or(0.0);
    for mut text in &mut hud {
        text.0 = format!("{count} splats | SH {degree} | {fps:.0} fps");
    }
}
