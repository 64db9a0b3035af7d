//! Helpers shared by the integration tests (each `tests/*.rs` includes `mod common;`,
//! a test folder's `main.rs` includes it by path).
#![allow(dead_code)]

pub mod gpu;
pub mod random;

use bevy::app::{PluginGroup, PluginGroupBuilder};
use bevy::asset::LoadState;
use bevy::math::UVec2;
use bevy::prelude::*;
use bevy::winit::WinitPlugin;
use bevy_splat::headless::{Headless, HeadlessCamera, quiet_log};
use bevy_splat::lod::SplatLodTrees;
use bevy_splat::{GaussianSplatPlugin, GaussianSplats};

/// The plugins of the tests' `bevy_splat::headless::Headless` apps: Bevy's default
/// plugins without the window backend (the tests run off the main thread, often
/// with no display), logging warnings only.
pub fn headless_plugins() -> PluginGroupBuilder {
    DefaultPlugins.set(quiet_log()).disable::<WinitPlugin>()
}

/// Updates `headless` until a level-of-detail tree is on the GPU: trees are built on
/// a worker thread, and until then a cloud is drawn (or cast) whole.
pub fn update_until_lod_trees_are_built(headless: &mut Headless) {
    let built = |headless: &Headless| {
        let trees = headless.app.world().resource::<SplatLodTrees>();
        trees.iter().count() > 0
    };
    for _ in 0..2000 {
        if built(headless) {
            break;
        }
        headless.app.update();
    }
    assert!(built(headless), "the tree was never built");
}

/// The projection the angel's views use: 0.8 rad vertical, for an image of `size`.
pub fn angel_projection(size: UVec2) -> PerspectiveProjection {
    PerspectiveProjection {
        fov: 0.8,
        aspect_ratio: size.x as f32 / size.y as f32,
        near: 0.01,
        ..default()
    }
}

/// A camera on the angel from `(0.3, 0.9, 3.0) × distance`, looking at its middle,
/// rendering into an image of `size`.
pub fn spawn_angel_camera(headless: &mut Headless, size: UVec2, distance: f32) -> HeadlessCamera {
    headless.spawn_camera(
        Transform::from_xyz(0.3 * distance, 0.9, 3.0 * distance)
            .looking_at(Vec3::new(0.0, 0.75, 0.0), Vec3::Y),
        angel_projection(size),
        size,
        None,
    )
}

/// An app without a renderer whose asset server reads from `root`.
pub fn asset_app(root: &str) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: root.into(),
            ..default()
        },
        TransformPlugin,
        GaussianSplatPlugin,
    ));
    app
}

/// Loads `file` through `app`'s asset server and updates until it has loaded (its
/// asset) or failed (why).
pub fn load_splats(app: &mut App, file: &str) -> Result<GaussianSplats, String> {
    let handle: Handle<GaussianSplats> =
        app.world().resource::<AssetServer>().load(file.to_owned());
    for _ in 0..2000 {
        app.update();
        if let Some(splats) = app
            .world()
            .resource::<Assets<GaussianSplats>>()
            .get(&handle)
        {
            return Ok(splats.clone());
        }
        if let LoadState::Failed(e) = app.world().resource::<AssetServer>().load_state(&handle) {
            return Err(e.to_string());
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    panic!("{file} neither loaded nor failed");
}
