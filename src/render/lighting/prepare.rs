//! `RenderSystems::PrepareBindGroups`: each camera view whose clouds receive light
//! gets its [`ViewLightPass`], bound to this frame's lights and shadow maps (remade
//! every frame: Bevy hands out its shadow textures and light uniforms anew).

use bevy::ecs::prelude::*;
use bevy::light::ShadowFilteringMethod;
use bevy::pbr::{
    GlobalClusterableObjectMeta, LightMeta, ShadowSamplers, ViewLightsUniformOffset,
    ViewShadowBindings,
};
use bevy::render::globals::GlobalsBuffer;
use bevy::render::render_resource::BindingResource;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::view::{ViewUniformOffset, ViewUniforms};
use wgpu::util::DeviceExt;

use super::frame::ViewLightPass;
use super::light_pass::{LightParams, SHADOW_LIFT_SIGMAS, filter_index};
use super::pipelines::LightPipelines;
use crate::render::prepare::draw_plan::ViewDraw;
use crate::render::view::ViewBuffers;

/// The light pass's parameters, shared by every view (`LightParams`).
#[derive(Resource)]
pub(crate) struct LightParamsBuffer(wgpu::Buffer);

/// Bevy's view bindings that the pass reads, as they stand this frame.
#[derive(bevy::ecs::system::SystemParam)]
pub(crate) struct BevyLights<'w> {
    view_uniforms: Res<'w, ViewUniforms>,
    light_meta: Res<'w, LightMeta>,
    clustered: Res<'w, GlobalClusterableObjectMeta>,
    globals: Res<'w, GlobalsBuffer>,
    samplers: Res<'w, ShadowSamplers>,
}

type CameraItem<'a> = (
    Entity,
    Has<ViewLightPass>,
    &'a ViewDraw,
    &'a ViewBuffers,
    Option<&'a ShadowFilteringMethod>,
    Option<(
        &'a ViewUniformOffset,
        &'a ViewLightsUniformOffset,
        &'a ViewShadowBindings,
    )>,
);

/// Makes the light pass of every view whose clouds receive light, and takes it from
/// every other.
pub(crate) fn prepare_light_passes(
    mut commands: Commands,
    (device, queue): (Res<RenderDevice>, Res<RenderQueue>),
    light: Option<Res<LightPipelines>>,
    mut params: Option<ResMut<LightParamsBuffer>>,
    bevy: BevyLights,
    views: Query<CameraItem>,
    stale: Query<Entity, (With<ViewLightPass>, Without<ViewDraw>)>,
) {
    for entity in &stale {
        commands.entity(entity).remove::<ViewLightPass>();
    }
    let Some(light) = light else {
        return;
    };
    let device = device.wgpu_device();
    let values = LightParams {
        clustered_count: bevy.clustered.entity_to_index.len() as u32,
        bias_sigmas: SHADOW_LIFT_SIGMAS,
        _pad: [0; 2],
    };
    let params = match params.as_deref_mut() {
        Some(buffer) => {
            queue.write_buffer(&buffer.0, 0, bytemuck::bytes_of(&values));
            buffer.0.clone()
        }
        None => {
            let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("splat light params"),
                contents: bytemuck::bytes_of(&values),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            });
            commands.insert_resource(LightParamsBuffer(buffer.clone()));
            buffer
        }
    };
    for (entity, had_pass, draw, buffers, filter, bindings) in &views {
        let pass = bindings.filter(|_| draw.receive).and_then(|bindings| {
            light_pass(device, &light, &bevy, bindings, filter, buffers, &params)
        });
        match pass {
            Some(pass) => {
                commands.entity(entity).insert(pass);
            }
            None if had_pass => {
                commands.entity(entity).remove::<ViewLightPass>();
            }
            None => {}
        }
    }
}

/// The view's light pass; `None` while one of Bevy's buffers is not written yet.
fn light_pass(
    device: &wgpu::Device,
    light: &LightPipelines,
    bevy: &BevyLights,
    (view_offset, lights_offset, shadows): (
        &ViewUniformOffset,
        &ViewLightsUniformOffset,
        &ViewShadowBindings,
    ),
    filter: Option<&ShadowFilteringMethod>,
    buffers: &ViewBuffers,
    params: &wgpu::Buffer,
) -> Option<ViewLightPass> {
    let entries = [
        (0, bevy.view_uniforms.uniforms.binding()?),
        (1, bevy.light_meta.view_gpu_lights.binding()?),
        (
            2,
            BindingResource::TextureView(&shadows.point_light_depth_texture_view),
        ),
        (
            3,
            BindingResource::Sampler(&bevy.samplers.point_light_comparison_sampler),
        ),
        (
            5,
            BindingResource::TextureView(&shadows.directional_light_depth_texture_view),
        ),
        (
            6,
            BindingResource::Sampler(&bevy.samplers.directional_light_comparison_sampler),
        ),
        (8, bevy.clustered.gpu_clustered_lights.binding()?),
        (11, bevy.globals.buffer.binding()?),
    ]
    .map(|(binding, resource)| wgpu::BindGroupEntry { binding, resource });
    let view_bindings = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("splat light view"),
        layout: &light.view_layout,
        entries: &entries,
    });
    let bands = buffers
        .bands
        .iter()
        .map(|band| {
            let resources = [
                band.work.counters.as_entire_binding(),
                band.work.projected.as_entire_binding(),
                band.work.lit_points.as_entire_binding(),
                params.as_entire_binding(),
            ];
            let entries: Vec<_> = (0..)
                .zip(resources)
                .map(|(binding, resource)| wgpu::BindGroupEntry { binding, resource })
                .collect();
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("splat light band"),
                layout: &light.band_layout,
                entries: &entries,
            })
        })
        .collect();
    let method = filter.copied().unwrap_or_default();
    Some(ViewLightPass {
        pipeline: light.by_filter[filter_index(method)].clone(),
        view_bindings,
        view_offsets: [view_offset.offset, lights_offset.offset],
        bands,
    })
}
