//! Splats and meshes share the light: the angel scan stands on a mesh floor under a
//! sun that circles the sky, and casts its shadow on the floor and on a mesh pillar,
//! beside a mesh sphere casting its own. `L` switches a point light beside the angel
//! on and off; its shadows come from all six faces of its cube map.
//!
//! ```text
//! cargo run --release --example shadows
//! cargo run --release --example shadows -- --screenshot shadows.png --frames 10
//! ```
//!
//! With `--screenshot PATH` it renders without a window, `--frames N` frames into the
//! sun's circle (one degree a frame; 10 if not given), and writes the last to PATH.

use std::path::{Path, PathBuf};

use bevy::camera::ShadowLodOrigin;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::light::CascadeShadowConfigBuilder;
use bevy::prelude::*;
use bevy::winit::WinitPlugin;
use bevy_panorbit_camera::{PanOrbitCamera, PanOrbitCameraPlugin};
use bevy_splat::GaussianSplatPlugin;
use bevy_splat::headless::{Headless, quiet_log, scene};

/// Where the angel's feet stand (its lowest splats hang a little below).
const FLOOR_Y: f32 = -1.05;
const TARGET: Vec3 = Vec3::new(0.3, 0.2, 0.0);
const EYE: Vec3 = Vec3::new(2.6, 2.2, 6.4);
const BACKGROUND: Color = Color::srgb(0.55, 0.62, 0.72);
const SCREENSHOT_SIZE: UVec2 = UVec2::new(960, 600);

/// The sun's place on its circle, advanced a degree every frame (not by the clock, so
/// a screenshot after N frames is the same on any machine).
#[derive(Component)]
struct Sun {
    frame: u32,
}

#[derive(Component)]
struct Lamp;

fn main() -> AppExit {
    let mut screenshot = None;
    let mut frames = 10;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--screenshot", Some(path)) => screenshot = Some(PathBuf::from(path)),
            ("--frames", Some(n)) => match n.parse() {
                Ok(n) => frames = n,
                Err(_) => return usage(),
            },
            _ => return usage(),
        }
    }
    match screenshot {
        Some(path) => match render_once(frames, &path) {
            Ok(()) => AppExit::Success,
            Err(message) => {
                eprintln!("error: {message}");
                AppExit::error()
            }
        },
        None => run_window(),
    }
}

fn usage() -> AppExit {
    eprintln!("usage: shadows [--screenshot PATH [--frames N]]");
    AppExit::error()
}

fn run_window() -> AppExit {
    App::new()
        .add_plugins((DefaultPlugins, GaussianSplatPlugin, PanOrbitCameraPlugin))
        .insert_resource(ClearColor(BACKGROUND))
        .add_systems(
            Startup,
            (spawn_meshes_and_lights, spawn_angel, spawn_camera),
        )
        .add_systems(Update, (circle_sun, toggle_lamp))
        .run()
}

fn spawn_angel(mut commands: Commands, assets: Res<AssetServer>) {
    commands.spawn(bevy_splat::GaussianCloud(assets.load("angel.ply")));
}

fn spawn_camera(mut commands: Commands) {
    commands.spawn((
        Camera3d::default(),
        // Trained colours are display values: no tonemapping (see the README).
        Tonemapping::None,
        Transform::from_translation(EYE).looking_at(TARGET, Vec3::Y),
        PanOrbitCamera {
            focus: TARGET,
            ..default()
        },
    ));
}

/// The floor, a pillar and a sphere the angel's shadow falls on, the sun and the lamp.
fn spawn_meshes_and_lights(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let stone = materials.add(StandardMaterial {
        base_color: Color::srgb(0.55, 0.54, 0.5),
        perceptual_roughness: 0.9,
        ..default()
    });
    commands.spawn((
        Mesh3d(meshes.add(Plane3d::default().mesh().size(14.0, 14.0))),
        MeshMaterial3d(stone.clone()),
        Transform::from_xyz(0.0, FLOOR_Y, 0.0),
    ));
    commands.spawn((
        Mesh3d(meshes.add(Cuboid::new(0.5, 2.4, 0.5))),
        MeshMaterial3d(stone),
        Transform::from_xyz(-1.9, FLOOR_Y + 1.2, -1.2),
    ));
    commands.spawn((
        Mesh3d(meshes.add(Sphere::new(0.45))),
        MeshMaterial3d(materials.add(Color::srgb(0.25, 0.45, 0.8))),
        Transform::from_xyz(1.9, FLOOR_Y + 0.45, 1.1),
    ));
    commands.spawn((
        Sun { frame: 0 },
        DirectionalLight {
            illuminance: 2_500.0,
            shadow_maps_enabled: true,
            ..default()
        },
        CascadeShadowConfigBuilder {
            first_cascade_far_bound: 6.0,
            maximum_distance: 30.0,
            ..default()
        }
        .build(),
        sun_transform(0),
    ));
    commands.spawn((
        Lamp,
        PointLight {
            intensity: 300_000.0,
            range: 12.0,
            shadow_maps_enabled: true,
            color: Color::srgb(1.0, 0.8, 0.55),
            ..default()
        },
        Transform::from_xyz(1.4, 2.6, 1.6),
        Visibility::Hidden,
    ));
}

/// The sun `frame` degrees along a circle, always above the horizon; it starts
/// behind the angel (seen from the camera), so the shadow falls towards the viewer.
fn sun_transform(frame: u32) -> Transform {
    let angle = (frame as f32 + 200.0).to_radians();
    let position = Vec3::new(5.0 * angle.cos(), 4.0, 5.0 * angle.sin());
    Transform::from_translation(position).looking_at(Vec3::ZERO, Vec3::Y)
}

fn circle_sun(mut suns: Query<(&mut Sun, &mut Transform)>) {
    for (mut sun, mut transform) in &mut suns {
        sun.frame = sun.frame.wrapping_add(1);
        *transform = sun_transform(sun.frame);
    }
}

fn toggle_lamp(keys: Res<ButtonInput<KeyCode>>, mut lamps: Query<&mut Visibility, With<Lamp>>) {
    if keys.just_pressed(KeyCode::KeyL) {
        for mut visibility in &mut lamps {
            visibility.toggle_visible_hidden();
        }
    }
}

/// `frames` frames of the sun's circle without a window, the last written to `path`.
fn render_once(frames: u32, path: &Path) -> Result<(), String> {
    let angel = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/angel.ply");
    let clouds = scene::load(&angel).map_err(|e| e.to_string())?;
    let plugins = DefaultPlugins.set(quiet_log()).disable::<WinitPlugin>();
    let mut headless = Headless::new(plugins);
    headless
        .app
        .add_systems(Startup, spawn_meshes_and_lights)
        .add_systems(Update, circle_sun);
    for (splats, transform) in clouds {
        let handle = headless.add_splats(splats);
        headless.spawn_cloud(handle, transform);
    }
    let camera = headless.spawn_display_camera(
        Transform::from_translation(EYE).looking_at(TARGET, Vec3::Y),
        PerspectiveProjection {
            aspect_ratio: SCREENSHOT_SIZE.x as f32 / SCREENSHOT_SIZE.y as f32,
            ..default()
        },
        SCREENSHOT_SIZE,
        BACKGROUND,
    );
    // The lamp measures its shadows' detail from the camera (a window's camera is
    // found without this).
    headless
        .app
        .world_mut()
        .entity_mut(camera.entity)
        .insert(ShadowLodOrigin);
    headless
        .render(std::slice::from_ref(&camera))
        .map_err(|e| e.to_string())?;
    let world = headless.app.world_mut();
    let done = world
        .query::<&Sun>()
        .iter(world)
        .map(|sun| sun.frame)
        .next()
        .unwrap_or(0);
    for _ in done..frames {
        headless.app.update();
    }
    let image = headless.read_back(&camera).map_err(|e| e.to_string())?;
    image.save_png(path).map_err(|e| e.to_string())?;
    println!("wrote {}", path.display());
    Ok(())
}
