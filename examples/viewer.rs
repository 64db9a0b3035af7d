//! Opens a window on a splat scene with a pan-orbit camera:
//!
//! ```text
//! cargo run --release --example viewer [path/to/scene] [--opencv]
//! ```
//!
//! Any format the plugin loads (`.ply`, compressed `.ply`, `.splat`, `.spz`, `.sog`, a
//! SOG `meta.json`); a file dropped onto the window replaces the scene. Without a path
//! it shows the shipped angel scan. `--opencv` turns a scene trained in
//! COLMAP/OpenCV axes (+Y down) upright. Drag to orbit, right-drag to pan, scroll to zoom.

use std::path::{Path, PathBuf};
use std::time::Instant;

use bevy::asset::LoadState;
use bevy::asset::io::AssetSourceBuilder;
use bevy::asset::io::file::FileAssetReader;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::prelude::*;
use bevy_panorbit_camera::{PanOrbitCamera, PanOrbitCameraPlugin};
use bevy_splat::{GaussianCloud, GaussianSplatPlugin, GaussianSplats};

const SAMPLE: &str = "angel.ply";

#[derive(Resource)]
struct Scene {
    cloud: Handle<GaussianSplats>,
    started: Instant,
    framed: bool,
    opencv: bool,
    /// The file named on the command line ends the app when it fails to load; a
    /// dropped one shows its error instead.
    exit_on_error: bool,
    error: Option<String>,
}

#[derive(Component)]
struct ViewedCloud;

/// Files dropped onto the window are read through this asset source, rooted at `/`.
const LOCAL_SOURCE: &str = "local";

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
    let cloud = assets.load(file.to_owned());
    let rotation = if opencv {
        Quat::from_rotation_x(std::f32::consts::PI)
    } else {
        Quat::IDENTITY
    };
    commands.spawn((
        GaussianCloud(cloud.clone()),
        Transform::from_rotation(rotation),
        ViewedCloud,
    ));
    commands.insert_resource(Scene {
        cloud,
        started: Instant::now(),
        framed: false,
        opencv,
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
    viewed: Query<(Entity, &Transform), With<ViewedCloud>>,
) {
    for drop in drops.read() {
        let FileDragAndDrop::DroppedFile { path_buf, .. } = drop else {
            continue;
        };
        let absolute = std::path::absolute(path_buf).unwrap_or_else(|_| path_buf.clone());
        let relative = absolute.strip_prefix("/").unwrap_or(&absolute).to_owned();
        info!("opening {}", absolute.display());
        let cloud: Handle<GaussianSplats> =
            assets.load(bevy::asset::AssetPath::from_path_buf(relative).with_source(LOCAL_SOURCE));
        let mut transform = Transform::default();
        for (entity, old) in &viewed {
            transform = *old;
            commands.entity(entity).despawn();
        }
        commands.spawn((GaussianCloud(cloud.clone()), transform, ViewedCloud));
        scene.cloud = cloud;
        scene.started = Instant::now();
        scene.framed = false;
        scene.exit_on_error = false;
        scene.error = None;
    }
}

/// Once the scene has loaded: log it and aim the camera at its bounds.
fn frame_cloud(
    mut scene: ResMut<Scene>,
    assets: Res<AssetServer>,
    clouds: Res<Assets<GaussianSplats>>,
    mut cameras: Query<&mut PanOrbitCamera>,
    mut exit: MessageWriter<AppExit>,
) {
    if scene.framed {
        return;
    }
    if let LoadState::Failed(error) = assets.load_state(&scene.cloud) {
        error!("{error}");
        if scene.exit_on_error {
            exit.write(AppExit::error());
        }
        scene.error = Some(error.to_string());
        scene.framed = true;
        return;
    }
    let Some(cloud) = clouds.get(&scene.cloud) else {
        return;
    };
    scene.framed = true;
    info!(
        "loaded {} splats, SH degree {}, in {:.2?}",
        cloud.len(),
        cloud.sh_degree(),
        scene.started.elapsed()
    );
    let Some(bounds) = cloud.bounds() else {
        return;
    };
    let mut centre = Vec3::from(bounds.center);
    if scene.opencv {
        centre = Quat::from_rotation_x(std::f32::consts::PI) * centre;
    }
    // Trained scenes carry far-off background splats: frame the bulk, not the outliers.
    let radius = Vec3::from(bounds.half_extents).length().min(20.0);
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
    clouds: Res<Assets<GaussianSplats>>,
    diagnostics: Res<DiagnosticsStore>,
    mut hud: Query<&mut Text, With<Hud>>,
) {
    if let Some(error) = &scene.error {
        for mut text in &mut hud {
            text.0 = format!("could not open the dropped file: {error}");
        }
        return;
    }
    let Some(cloud) = clouds.get(&scene.cloud) else {
        return;
    };
    let fps = diagnostics
        .get(&FrameTimeDiagnosticsPlugin::FPS)
        .and_then(|fps| fps.smoothed())
        .unwrap_or(0.0);
    for mut text in &mut hud {
        text.0 = format!(
            "{} splats | SH {} | {fps:.0} fps",
            cloud.len(),
            cloud.sh_degree()
        );
    }
}
