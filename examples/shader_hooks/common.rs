//! What the `dissolve` and `wind` examples share: the angel with a splat shader whose
//! parameters follow the time, in a window, or rendered once into a PNG
//! (`--screenshot PATH [--time SECONDS]`) without one.

use std::path::{Path, PathBuf};

use bevy::prelude::*;
use bevy::winit::WinitPlugin;
use bevy_panorbit_camera::{PanOrbitCamera, PanOrbitCameraPlugin};
use bevy_splat::headless::{Headless, quiet_log, scene};
use bevy_splat::{GaussianCloud, GaussianSplatPlugin, SplatShader, SplatShaderAppExt};

/// One splat shader example.
pub struct ShaderExample {
    pub name: &'static str,
    pub wgsl: &'static str,
    /// The shader's parameters at a time, in seconds.
    pub params: fn(f32) -> [Vec4; 2],
    /// Where the camera looks from (at the angel's middle).
    pub eye: Vec3,
}

/// The angel's middle, where the camera looks.
const TARGET: Vec3 = Vec3::new(0.0, 0.6, 0.0);
const BACKGROUND: Color = Color::srgb(0.07, 0.08, 0.1);
const SCREENSHOT_SIZE: UVec2 = UVec2::new(640, 480);

#[derive(Resource, Clone, Copy)]
struct Params(fn(f32) -> [Vec4; 2]);

/// Runs the example: the window, or with `--screenshot PATH [--time SECONDS]` one
/// frame at that time written to PATH.
pub fn run(example: ShaderExample) -> AppExit {
    let mut screenshot = None;
    let mut time = 1.0;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--screenshot", Some(path)) => screenshot = Some(PathBuf::from(path)),
            ("--time", Some(seconds)) => match seconds.parse() {
                Ok(seconds) => time = seconds,
                Err(_) => return usage(example.name),
            },
            _ => return usage(example.name),
        }
    }
    match screenshot {
        Some(path) => match render_once(&example, time, &path) {
            Ok(()) => AppExit::Success,
            Err(message) => {
                eprintln!("error: {message}");
                AppExit::error()
            }
        },
        None => run_window(example),
    }
}

fn usage(name: &str) -> AppExit {
    eprintln!("usage: {name} [--screenshot PATH [--time SECONDS]]");
    AppExit::error()
}

fn run_window(example: ShaderExample) -> AppExit {
    let mut app = App::new();
    app.add_plugins((DefaultPlugins, GaussianSplatPlugin, PanOrbitCameraPlugin))
        .insert_resource(ClearColor(BACKGROUND))
        .insert_resource(Params(example.params));
    let shader = app.add_splat_shader(example.name, example.wgsl);
    let eye = example.eye;
    app.add_systems(
        Startup,
        move |mut commands: Commands, assets: Res<AssetServer>| {
            commands.spawn((
                GaussianCloud(assets.load("angel.ply")),
                SplatShader::new(shader),
            ));
            commands.spawn((
                Camera3d::default(),
                Transform::from_translation(eye).looking_at(TARGET, Vec3::Y),
                PanOrbitCamera {
                    focus: TARGET,
                    ..default()
                },
            ));
        },
    )
    .add_systems(Update, animate)
    .run()
}

/// The shader's parameters follow the time.
fn animate(time: Res<Time>, params: Res<Params>, mut shaders: Query<&mut SplatShader>) {
    for mut shader in &mut shaders {
        shader.params = (params.0)(time.elapsed_secs());
    }
}

/// One frame at `time` (the parameters' time; the shader's own `context.time` is the
/// app's), as a window would show it, written to `path`.
fn render_once(example: &ShaderExample, time: f32, path: &Path) -> Result<(), String> {
    let angel = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/angel.ply");
    let clouds = scene::load(&angel).map_err(|e| e.to_string())?;
    let mut shader = None;
    let plugins = DefaultPlugins.set(quiet_log()).disable::<WinitPlugin>();
    let mut headless = Headless::with(plugins, |app| {
        shader = Some(app.add_splat_shader(example.name, example.wgsl));
    });
    let shader = shader.ok_or("the shader was not registered")?;
    for (splats, transform) in clouds {
        let handle = headless.add_splats(splats);
        let cloud = headless.spawn_cloud(handle, transform);
        let params = (example.params)(time);
        headless
            .app
            .world_mut()
            .entity_mut(cloud)
            .insert(SplatShader::new(shader).with_params(params[0], params[1]));
    }
    let camera = headless.spawn_display_camera(
        Transform::from_translation(example.eye).looking_at(TARGET, Vec3::Y),
        PerspectiveProjection::default(),
        SCREENSHOT_SIZE,
        BACKGROUND,
    );
    let image = headless
        .render(&[camera])
        .map_err(|e| e.to_string())?
        .remove(0);
    image.save_png(path).map_err(|e| e.to_string())
}
