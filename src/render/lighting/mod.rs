//! Clouds that take the scene's light (`SplatLighting`): after each band's
//! preprocess, the light pass darkens the projected splats of `Shadowed` clouds where
//! Bevy's shadow maps say a caster blocks the lights, and lights the trained colours
//! of `Lit` clouds as albedo, with Bevy's own shadow lookups (`bevy_pbr::shadows`).
//! A camera draws after Bevy's shadow passes and the splat shadows of
//! `render::shadows`, so the maps it samples hold every caster, meshes and splats.
//!
//! Each splat is lit at its centre (the preprocess's `RECEIVE` variant records where
//! that is, with the splat's normal and extent, as a `LitPoint`): one lookup per splat
//! per light, where a lookup per pixel would need every splat's share of each pixel.
//!
//! - [`frame`]: [`ViewLightPass`], what a camera records this frame;
//! - `light_pass`: the pass's layouts and pipelines (and `light_pass.wgsl`);
//! - `pipelines`: queued the first frame some cloud receives light;
//! - `prepare`: each camera's bind groups (`RenderSystems::PrepareBindGroups`).

pub(crate) mod frame;
#[cfg(feature = "shadows")]
mod light_pass;
#[cfg(feature = "shadows")]
mod pipelines;
#[cfg(feature = "shadows")]
mod prepare;

pub(crate) use frame::ViewLightPass;

/// Adds the light pass's systems to the render app: its pipelines queued in
/// `PrepareResources` before the views are planned, its bind groups made after the
/// views' own.
#[cfg(feature = "shadows")]
pub(crate) fn add_systems(render_app: &mut bevy::app::SubApp) {
    use bevy::ecs::schedule::IntoScheduleConfigs;
    use bevy::render::{Render, RenderSystems};

    use crate::render::pipelines::queue_splat_pipelines;
    use crate::render::prepare::bind_groups::prepare_splat_bind_groups;
    use crate::render::prepare::view_buffers::prepare_splat_view_buffers;

    render_app.add_systems(
        Render,
        (
            pipelines::queue_light_pipelines
                .after(queue_splat_pipelines)
                .before(prepare_splat_view_buffers)
                .in_set(RenderSystems::PrepareResources),
            prepare::prepare_light_passes
                .after(prepare_splat_bind_groups)
                .in_set(RenderSystems::PrepareBindGroups),
        ),
    );
}

/// Adds the pass's shader asset (at `Plugin::finish`, with the others).
#[cfg(feature = "shadows")]
pub(crate) fn add_shader_asset(app: &mut bevy::app::App) {
    let mut shaders = app
        .world_mut()
        .resource_mut::<bevy::asset::Assets<bevy::shader::Shader>>();
    let shader = pipelines::LightShader::add(&mut shaders);
    if let Some(render_app) = app.get_sub_app_mut(bevy::render::RenderApp) {
        render_app.insert_resource(shader);
    }
}
