//! `SplatShader`: a WGSL function of the app's own, run on every splat of the clouds
//! that carry it, in the preprocess, before the splat is projected.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_splat::{GaussianCloud, GaussianSplatPlugin, SplatShader, SplatShaderAppExt};
//!
//! const SWAY: &str = "
//! #import bevy_splat::preprocess::hook::{Splat, SplatContext}
//!
//! fn modify_splat(splat: Splat, context: SplatContext) -> Splat {
//!     var out = splat;
//!     out.position.x += 0.05 * sin(context.time + splat.position.y);
//!     return out;
//! }
//! ";
//!
//! let mut app = App::new();
//! app.add_plugins((DefaultPlugins, GaussianSplatPlugin));
//! let sway = app.add_splat_shader("sway", SWAY);
//! app.add_systems(Startup, move |mut commands: Commands, assets: Res<AssetServer>| {
//!     commands.spawn((
//!         GaussianCloud(assets.load("angel.ply")),
//!         SplatShader::new(sway),
//!     ));
//! });
//! ```
//!
//! The function sees each splat's world position, opacity, scale and base colour,
//! its index, the time and the cloud's two `params` vectors (`preprocess_hook.wgsl`
//! documents them), and returns the splat to draw. Each shader is its own variant of
//! the preprocess, compiled with the other pipelines; clouds without one run the
//! preprocess they always did.

use std::sync::Arc;

use bevy::app::App;
use bevy::ecs::prelude::*;
use bevy::math::Vec4;
use bevy::reflect::Reflect;
use bevy::reflect::prelude::ReflectDefault;

/// Which registered splat shader a cloud runs: what
/// [`SplatShaderAppExt::add_splat_shader`] returned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Debug, PartialEq, Hash, Default)]
pub struct SplatShaderId(pub u32);

/// On a cloud: run the splat shader `id` on its splats, with `params` (two vectors the
/// shader reads as `context.params[0]` and `[1]`: a sphere's centre and radius, a wind
/// direction and strength, …). Change `params` every frame to animate.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Component, Debug, PartialEq, Default)]
pub struct SplatShader {
    /// The shader, as [`SplatShaderAppExt::add_splat_shader`] returned it.
    pub id: SplatShaderId,
    /// `context.params` in the shader.
    pub params: [Vec4; 2],
}

impl SplatShader {
    /// Shader `id` with zero parameters.
    pub fn new(id: SplatShaderId) -> Self {
        Self {
            id,
            params: [Vec4::ZERO; 2],
        }
    }

    /// The same shader with these parameters.
    pub fn with_params(mut self, first: Vec4, second: Vec4) -> Self {
        self.params = [first, second];
        self
    }
}

/// One registered splat shader: a name (for messages) and its WGSL, a module that
/// defines `fn modify_splat(splat: Splat, context: SplatContext) -> Splat` and may
/// `#import bevy_splat::preprocess::hook::{Splat, SplatContext}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplatShaderSource {
    /// Names the shader in compile errors and logs.
    pub name: String,
    /// The module's WGSL source.
    pub wgsl: String,
}

/// Every splat shader the app registered, in [`SplatShaderId`] order. Shaders are
/// compiled with the plugin's pipelines, so they are registered while the app is built
/// (before `App::run`); one added later is not compiled, and its clouds are drawn
/// without it.
#[derive(Resource, Clone, Debug, Default)]
pub struct SplatShaders(pub(crate) Arc<Vec<SplatShaderSource>>);

impl SplatShaders {
    /// The registered shaders, in id order.
    pub fn sources(&self) -> &[SplatShaderSource] {
        &self.0
    }
}

/// Registers splat shaders on an [`App`].
pub trait SplatShaderAppExt {
    /// Registers `wgsl` (see [`SplatShaderSource`]) as a splat shader named `name` and
    /// returns its id, for [`SplatShader`] components. Call it while building the
    /// app. WGSL that does not compile is reported in the log when the pipelines are
    /// built, and the clouds using it are drawn without it.
    fn add_splat_shader(&mut self, name: &str, wgsl: impl Into<String>) -> SplatShaderId;
}

impl SplatShaderAppExt for App {
    fn add_splat_shader(&mut self, name: &str, wgsl: impl Into<String>) -> SplatShaderId {
        let mut shaders = self.world_mut().get_resource_or_init::<SplatShaders>();
        let list = Arc::make_mut(&mut shaders.0);
        list.push(SplatShaderSource {
            name: name.to_string(),
            wgsl: wgsl.into(),
        });
        SplatShaderId(list.len() as u32 - 1)
    }
}
