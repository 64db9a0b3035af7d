//! Splats and meshes share the light: the angel scan stands on a mesh floor before a
//! wall of splats, under a sun that circles the sky. The angel casts its shadow on the
//! floor and on a mesh pillar; a mesh cube swinging in front of the wall shadows it; a
//! mesh sphere casts its own. `M` cycles how the clouds take the
//! light (`SplatLighting`): `Shadowed` (the trained colours, darkened where a caster
//! blocks a light), `Lit` (the trained colours as albedo under the scene's lights) and
//! `Unlit` (the trained colours untouched). `L` switches a point light beside the
//! angel on and off; its shadows come from all six faces of its cube map. `S` stops
//! and starts the sun: a shadow view whose light, clouds and camera stand still draws
//! from the copy of its surface it kept, nearly free (the lamp's faces always do, the
//! sun's cascades, drawn in one run, once it and the camera stop); the window's title
//! counts them.
//!
//! ```text
//! cargo run --release --example shadows
//! cargo run --release --example shadows -- --screenshot shadows.png --frames 10 --lighting lit
//! ```
//!
//! With `--screenshot PATH` it renders without a window, `--frames N` frames into the
//! sun's circle and the cube's swing (one degree a frame; 10 if not given), with the
//! clouds `--lighting unlit|shadowed|lit` (shadowed if not given), and writes the last
//! frame to PATH.

use std::path::{Path, PathBuf};

use bevy::camera::ShadowLodOrigin;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::light::CascadeShadowConfigBuilder;
use bevy::prelude::*;
use bevy::winit::WinitPlugin;
use bevy_panorbit_camera::{PanOrbitCamera, PanOrbitCameraPlugin};
use bevy_splat::asset::SplatGeometry;
use bevy_splat::headless::{Headless, quiet_log, scene};
use bevy_splat::{
    GaussianCloud, GaussianSplatPlugin, GaussianSplats, SplatLighting, SplatShadowStats,
};

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

/// The cube that swings in front of the splat wall, a degree of its swing a frame.
#[derive(Component)]
struct SwingingCube {
    frame: u32,
}

/// Whether the sun stands still; `S` toggles it.
#[derive(Resource, Default)]
struct SunStopped(bool);

/// How every cloud takes the light; `M` cycles it.
#[derive(Resource, Clone, Copy)]
struct Lighting(SplatLighting);

/// `Shadowed` keeps a quarter of the blocked light: a scan's trained colours already
/// hold the light it was captured under, and a black shadow on them looks cut out.
const SHADOWED: SplatLighting = SplatLighting::Shadowed { strength: 0.75 };

/// The splat wall behind the angel: its centre, its width and height, and the side of
/// one brick (with its mortar).
const WALL_CENTRE: Vec3 = Vec3::new(0.2, FLOOR_Y + 1.5, -2.4);
const WALL_SIZE: Vec2 = Vec2::new(6.0, 3.0);
const BRICK: Vec2 = Vec2::new(0.42, 0.21);

fn main() -> AppExit {
    let mut screenshot = None;
    let mut frames = 10;
    let mut lighting = SHADOWED;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--screenshot", Some(path)) => screenshot = Some(PathBuf::from(path)),
            ("--frames", Some(n)) => match n.parse() {
                Ok(n) => frames = n,
                Err(_) => return usage(),
            },
            ("--lighting", Some(mode)) => match mode.as_str() {
                "unlit" => lighting = SplatLighting::Unlit,
                "shadowed" => lighting = SHADOWED,
                "lit" => lighting = SplatLighting::Lit,
                _ => return usage(),
            },
            _ => return usage(),
        }
    }
    match screenshot {
        Some(path) => match render_once(frames, lighting, &path) {
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
    eprintln!("usage: shadows [--screenshot PATH [--frames N] [--lighting unlit|shadowed|lit]]");
    AppExit::error()
}

fn run_window() -> AppExit {
    App::new()
        .add_plugins((DefaultPlugins, GaussianSplatPlugin, PanOrbitCameraPlugin))
        .insert_resource(ClearColor(BACKGROUND))
        .insert_resource(Lighting(SHADOWED))
        .init_resource::<SunStopped>()
        .add_systems(
            Startup,
            (
                spawn_meshes_and_lights,
                spawn_angel,
                spawn_wall,
                spawn_camera,
            ),
        )
        .add_systems(
            Update,
            (
                circle_sun,
                swing_cube,
                toggle_lamp,
                stop_sun,
                cycle_lighting,
                apply_lighting,
                count_kept_views,
            ),
        )
        .run()
}

fn spawn_angel(mut commands: Commands, assets: Res<AssetServer>) {
    commands.spawn(GaussianCloud(assets.load("angel.ply")));
}

fn spawn_wall(mut commands: Commands, mut splats: ResMut<Assets<GaussianSplats>>) {
    commands.spawn((
        GaussianCloud(splats.add(brick_wall())),
        Transform::from_translation(WALL_CENTRE),
    ));
}

/// A wall of bricks made of flat splats facing +Z, centred on its own origin: each
/// brick a shade of red-brown, the mortar between them a pale grey.
fn brick_wall() -> GaussianSplats {
    const SPACING: f32 = 0.035;
    const SH_C0: f32 = 0.282_094_8;
    let across = (WALL_SIZE / SPACING).as_uvec2();
    let mut geometry = Vec::new();
    let mut sh = Vec::new();
    for row in 0..=across.y {
        for column in 0..=across.x {
            let local = Vec2::new(column as f32, row as f32) * SPACING;
            let course = (local.y / BRICK.y).floor();
            // Every other course is laid half a brick along.
            let shifted = local.x + (course % 2.0) * BRICK.x * 0.5;
            let within = Vec2::new(shifted % BRICK.x, local.y % BRICK.y);
            let mortar = within.x < 0.03 || within.y < 0.03;
            let brick = (shifted / BRICK.x).floor() * 7.0 + course * 13.0;
            let shade = 0.85 + 0.15 * (brick * 0.618).fract();
            let colour = if mortar {
                Vec3::new(0.72, 0.7, 0.66)
            } else {
                Vec3::new(0.62, 0.3, 0.22) * shade
            };
            let position = local - WALL_SIZE / 2.0;
            geometry.push(SplatGeometry {
                position: [position.x, position.y, 0.0],
                opacity_logit: 3.0,
                rotation: [1.0, 0.0, 0.0, 0.0],
                log_scale: [0.022f32.ln(), 0.022f32.ln(), 0.004f32.ln()],
                _pad: 0.0,
            });
            sh.extend(colour.to_array().map(|c| (c - 0.5) / SH_C0));
        }
    }
    GaussianSplats::new(geometry, sh, 0).expect("the wall's arrays agree")
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
        SwingingCube { frame: 0 },
        Mesh3d(meshes.add(Cuboid::from_length(0.5))),
        MeshMaterial3d(materials.add(Color::srgb(0.85, 0.7, 0.3))),
        cube_transform(0),
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

/// The sun `frame` degrees along a circle, always above the horizon; it starts to the
/// right of the camera, so the shadows fall to the left, where the camera sees them.
fn sun_transform(frame: u32) -> Transform {
    let angle = (frame as f32 + 30.0).to_radians();
    let position = Vec3::new(5.0 * angle.cos(), 4.0, 5.0 * angle.sin());
    Transform::from_translation(position).looking_at(Vec3::ZERO, Vec3::Y)
}

fn circle_sun(stopped: Option<Res<SunStopped>>, mut suns: Query<(&mut Sun, &mut Transform)>) {
    if stopped.is_some_and(|stopped| stopped.0) {
        return;
    }
    for (mut sun, mut transform) in &mut suns {
        sun.frame = sun.frame.wrapping_add(1);
        *transform = sun_transform(sun.frame);
    }
}

/// The cube `frame` degrees into its swing along the wall's right half, half a metre
/// before it.
fn cube_transform(frame: u32) -> Transform {
    let swing = (frame as f32 * 2.0).to_radians().sin();
    Transform::from_xyz(1.6 + 1.0 * swing, FLOOR_Y + 1.4, WALL_CENTRE.z + 0.55)
        .with_rotation(Quat::from_rotation_y(frame as f32 * 0.02))
}

fn swing_cube(mut cubes: Query<(&mut SwingingCube, &mut Transform)>) {
    for (mut cube, mut transform) in &mut cubes {
        cube.frame = cube.frame.wrapping_add(1);
        *transform = cube_transform(cube.frame);
    }
}

fn cycle_lighting(keys: Res<ButtonInput<KeyCode>>, mut lighting: ResMut<Lighting>) {
    if keys.just_pressed(KeyCode::KeyM) {
        lighting.0 = match lighting.0 {
            SplatLighting::Shadowed { .. } => SplatLighting::Lit,
            SplatLighting::Lit => SplatLighting::Unlit,
            SplatLighting::Unlit => SHADOWED,
        };
        info!("clouds: {:?}", lighting.0);
    }
}

/// Every cloud takes the light as [`Lighting`] says.
fn apply_lighting(
    mut commands: Commands,
    lighting: Res<Lighting>,
    clouds: Query<(Entity, Option<&SplatLighting>), With<GaussianCloud>>,
) {
    for (entity, current) in &clouds {
        if current != Some(&lighting.0) {
            commands.entity(entity).insert(lighting.0);
        }
    }
}

fn stop_sun(keys: Res<ButtonInput<KeyCode>>, mut stopped: ResMut<SunStopped>) {
    if keys.just_pressed(KeyCode::KeyS) {
        stopped.0 = !stopped.0;
    }
}

/// The window's title: how many of each light's shadow runs (a camera's cascades are
/// one run, each cube face its own) draw from the surface they kept
/// (`SplatShadowStats`), about twice a second.
fn count_kept_views(
    stats: Res<SplatShadowStats>,
    suns: Query<Entity, With<Sun>>,
    lamps: Query<Entity, With<Lamp>>,
    mut windows: Query<&mut Window>,
    (mut frames, mut said): (Local<u32>, Local<String>),
) {
    *frames += 1;
    if !(*frames).is_multiple_of(30) {
        return;
    }
    let count = |light: Entity| {
        let kept = stats.drawn_from_kept(light).len();
        format!("{kept} of {}", stats.get(light).len())
    };
    let sun = suns.iter().map(count).collect::<Vec<_>>().join(", ");
    let lamp = lamps.iter().map(count).collect::<Vec<_>>().join(", ");
    let title =
        format!("shadows: splat shadow runs drawn from their kept surface: sun {sun}, lamp {lamp}");
    if *said != title {
        info!("{title}");
        for mut window in &mut windows {
            window.title.clone_from(&title);
        }
        *said = title;
    }
}

fn toggle_lamp(keys: Res<ButtonInput<KeyCode>>, mut lamps: Query<&mut Visibility, With<Lamp>>) {
    if keys.just_pressed(KeyCode::KeyL) {
        for mut visibility in &mut lamps {
            visibility.toggle_visible_hidden();
        }
    }
}

/// `frames` frames of the sun's circle without a window, the clouds taking the light
/// as `lighting` says, the last frame written to `path`.
fn render_once(frames: u32, lighting: SplatLighting, path: &Path) -> Result<(), String> {
    let angel = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/angel.ply");
    let clouds = scene::load(&angel).map_err(|e| e.to_string())?;
    let plugins = DefaultPlugins.set(quiet_log()).disable::<WinitPlugin>();
    let mut headless = Headless::new(plugins);
    headless
        .app
        .insert_resource(Lighting(lighting))
        .add_systems(Startup, spawn_meshes_and_lights)
        .add_systems(Update, (circle_sun, swing_cube, apply_lighting));
    for (splats, transform) in clouds {
        let handle = headless.add_splats(splats);
        headless.spawn_cloud(handle, transform);
    }
    let wall = headless.add_splats(brick_wall());
    headless.spawn_cloud(wall, Transform::from_translation(WALL_CENTRE));
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
