//! A splat shader: the angel revealed by a growing sphere, its edge glowing
//! (`shader_hooks/dissolve.wgsl`).
//!
//! ```text
//! cargo run --release --example dissolve [-- --screenshot PATH [--time SECONDS]]
//! ```

#[path = "shader_hooks/common.rs"]
mod shader_example;

use bevy::prelude::*;
use shader_example::ShaderExample;

/// The sphere grows from the angel's feet for four seconds, then starts again.
fn params(time: f32) -> [Vec4; 2] {
    let radius = 2.4 * (time % 4.0) / 4.0;
    [
        Vec4::new(0.0, -1.0, 0.0, radius),
        Vec4::new(0.25, 1.0, 0.45, 0.1),
    ]
}

fn main() -> AppExit {
    shader_example::run(ShaderExample {
        name: "dissolve",
        wgsl: include_str!("shader_hooks/dissolve.wgsl"),
        params,
        eye: Vec3::new(0.0, 1.2, 4.2),
    })
}
