//! An app as every app starts (pipelines compiled by Bevy's `PipelineCache` on its
//! tasks, not before the first frame): its first frames come without splats, never
//! waiting for the pipelines, `SplatPipelinesStatus` turns ready, and the splats are
//! drawn from then on.

use bevy::camera::RenderTarget;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy::render::render_resource::TextureFormat;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::headless::quiet_log;
use bevy_splat::{
    GaussianCloud, GaussianSplatPlugin, GaussianSplats, SplatPipelinesStatus, SplatStats,
};

/// Give up after this many frames (lavapipe compiles the pipelines in well under a
/// hundred).
const LIMIT: u32 = 3_000;

#[test]
fn frames_come_before_the_pipelines_and_splats_once_they_are_ready() {
    let mut app = App::new();
    app.add_plugins((
        DefaultPlugins
            .set(quiet_log())
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                ..default()
            })
            .disable::<WinitPlugin>(),
        GaussianSplatPlugin,
    ));
    app.finish();
    app.cleanup();
    let world = app.world_mut();
    let target = Image::new_target_texture(64, 48, TextureFormat::Rgba8UnormSrgb, None);
    let target = world.resource_mut::<Assets<Image>>().add(target);
    // One splat in front of the camera.
    let splat = SplatGeometry {
        position: [0.0, 0.0, -2.0],
        opacity_logit: 2.0,
        rotation: [1.0, 0.0, 0.0, 0.0],
        log_scale: [0.2_f32.ln(); 3],
        _pad: 0.0,
    };
    let cloud = GaussianSplats::new(vec![splat], vec![1.0, 0.5, 0.0], 0).expect("one splat");
    let cloud = world.resource_mut::<Assets<GaussianSplats>>().add(cloud);
    world.spawn((GaussianCloud(cloud), Transform::default()));
    let camera = world
        .spawn((
            Camera3d::default(),
            RenderTarget::Image(target.into()),
            Tonemapping::None,
        ))
        .id();

    let mut ready_at = None;
    for frame in 0..LIMIT {
        app.update();
        let world = app.world();
        let ready = world.resource::<SplatPipelinesStatus>().ready();
        let drawn = world
            .resource::<SplatStats>()
            .get(camera)
            .is_some_and(|stats| stats.frames > 0);
        if !ready {
            assert!(
                !drawn,
                "frame {frame}: splats drawn before the pipelines were ready"
            );
            continue;
        }
        let ready_at = *ready_at.get_or_insert(frame);
        if drawn {
            // Frames ran while the pipelines compiled: the first did not wait. (The
            // cache finishes a pipeline at the earliest in the frame after it was
            // queued, so this holds however fast the machine.)
            assert!(ready_at > 0, "the pipelines were ready at the first frame");
            println!("pipelines ready at frame {ready_at}, splats drawn at frame {frame}");
            return;
        }
    }
    panic!("no splats after {LIMIT} frames (pipelines ready: {ready_at:?})");
}
