//! Helpers shared by the integration tests (each `tests/*.rs` includes `mod common;`,
//! a test folder's `main.rs` includes it by path).
#![allow(dead_code)]

pub mod gpu;
pub mod random;

use bevy::app::{PluginGroup, PluginGroupBuilder};
use bevy::prelude::DefaultPlugins;
use bevy::winit::WinitPlugin;
use bevy_splat::headless::{Headless, quiet_log};
use bevy_splat::lod::SplatLodTrees;

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
