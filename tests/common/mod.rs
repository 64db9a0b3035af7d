//! Helpers shared by the integration tests (each `tests/*.rs` includes `mod common;`,
//! a test folder's `main.rs` includes it by path).
#![allow(dead_code)]

pub mod gpu;
pub mod random;

use bevy::app::{PluginGroup, PluginGroupBuilder};
use bevy::prelude::DefaultPlugins;
use bevy::winit::WinitPlugin;
use bevy_splat::headless::quiet_log;

/// The plugins of the tests' `bevy_splat::headless::Headless` apps: Bevy's default
/// plugins without the window backend (the tests run off the main thread, often
/// with no display), logging warnings only.
pub fn headless_plugins() -> PluginGroupBuilder {
    DefaultPlugins.set(quiet_log()).disable::<WinitPlugin>()
}
