//! How long an app takes from its start to its first frame, and to its first frame
//! with splats: the numbers in the README's "Start-up" section.
//!
//! ```sh
//! cargo run --release --example startup_time [-- --synchronous] [--ply FILE]
//! ```
//!
//! A windowless app renders the shipped angel into an image. By default the splat
//! pipelines compile on Bevy's `PipelineCache` tasks while frames run (what every app
//! gets); `--synchronous` sets `RenderPlugin::synchronous_pipeline_compilation`, with
//! which the cache compiles them (and Bevy's own) within the frame that queues them.

use std::time::{Duration, Instant};

use bevy::camera::RenderTarget;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::render_resource::TextureFormat;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use bevy_splat::{GaussianCloud, GaussianSplatPlugin, SplatStats};

/// Give up after this long.
const LIMIT: Duration = Duration::from_secs(300);

fn main() {
    let started = Instant::now();
    let mut synchronous = false;
    let mut ply = "angel.ply".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--synchronous" => synchronous = true,
            "--ply" => ply = args.next().unwrap_or(ply),
            other => {
                eprintln!(
                    "unknown argument {other}; usage: startup_time [--synchronous] [--ply FILE]"
                );
                std::process::exit(2);
            }
        }
    }

    let mut app = App::new();
    app.add_plugins((
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                ..default()
            })
            .set(RenderPlugin {
                synchronous_pipeline_compilation: synchronous,
                ..default()
            })
            .disable::<WinitPlugin>(),
        GaussianSplatPlugin,
    ));
    app.finish();
    app.cleanup();
    let image = Image::new_target_texture(640, 480, TextureFormat::Rgba8UnormSrgb, None);
    let world = app.world_mut();
    let image = world.resource_mut::<Assets<Image>>().add(image);
    let splats = world.resource::<AssetServer>().load(ply);
    world.spawn((GaussianCloud(splats.clone()), Transform::default()));
    let camera = world
        .spawn((
            Camera3d::default(),
            RenderTarget::Image(image.into()),
            Tonemapping::None,
            Transform::from_xyz(0.0, 0.5, 3.0).looking_at(Vec3::ZERO, Vec3::Y),
        ))
        .id();

    let built = started.elapsed();
    let mut first_frame = None;
    let mut frames = 0u32;
    loop {
        app.update();
        frames += 1;
        let now = started.elapsed();
        first_frame.get_or_insert(now);
        let drawn = app
            .world()
            .resource::<SplatStats>()
            .get(camera)
            .is_some_and(|stats| stats.frames > 0);
        if drawn {
            println!(
                "app built after {:.2} s; first frame after {:.2} s; first frame with \
                 splats after {:.2} s (frame {frames}); pipelines {}",
                built.as_secs_f64(),
                first_frame.unwrap_or(now).as_secs_f64(),
                now.as_secs_f64(),
                if synchronous {
                    "compiled within the frame that queued them"
                } else {
                    "compiled while frames ran"
                },
            );
            return;
        }
        let server = app.world().resource::<AssetServer>();
        if server.load_state(&splats).is_failed() {
            eprintln!("the scene did not load (see the log)");
            std::process::exit(1);
        }
        if now > LIMIT {
            eprintln!("no frame with splats after {:.0} s", now.as_secs_f64());
            std::process::exit(1);
        }
    }
}
