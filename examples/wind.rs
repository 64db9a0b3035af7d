//! A splat shader: wind sways the angel as it would a plant, more the higher a splat
//! sits, in gusts that cross the scene (`shader_hooks/wind.wgsl`).
//!
//! ```text
//! cargo run --release --example wind [-- --screenshot PATH [--time SECONDS]]
//! ```

#[path = "shader_hooks/common.rs"]
mod shader_example;

use bevy::prelude::*;
use shader_example::ShaderExample;

/// A steady wind along +x, its strength breathing slowly.
fn params(time: f32) -> [Vec4; 2] {
    let strength = 0.06 * (1.0 + 0.5 * (0.4 * time).sin());
    [
        Vec4::new(1.0, 0.0, 0.3, strength),
        Vec4::new(-1.0, 0.5, 2.0, 0.0),
    ]
}

fn main() -> AppExit {
    shader_example::run(ShaderExample {
        name: "wind",
        wgsl: include_str!("shader_hooks/wind.wgsl"),
        params,
        eye: Vec3::new(0.0, 1.2, 4.2),
    })
}
