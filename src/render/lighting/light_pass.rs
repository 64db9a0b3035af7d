//! light: the pass that lights or shadows the projected splats of the clouds that
//! receive light (`SplatLighting`), with Bevy's shadow maps. Its group 0 is Bevy's
//! mesh view bindings as `bevy_pbr::shadows` reads them (the view, the lights, the
//! shadow maps and their comparison samplers, the clustered lights, the globals),
//! laid out again for the compute stage (Bevy's own layout is for the fragment
//! stage); group 1 is the band's.

use bevy::asset::Handle;
use bevy::light::ShadowFilteringMethod;
use bevy::pbr::{
    CLUSTERED_FORWARD_STORAGE_BUFFER_COUNT, GpuClusteredLights, GpuLights, MAX_CASCADES_PER_LIGHT,
    MAX_DIRECTIONAL_LIGHTS, MAX_RECT_LIGHTS,
};
use bevy::render::globals::GlobalsUniform;
use bevy::render::render_resource::binding_types::{
    sampler, storage_buffer_read_only_sized, texture_2d_array, texture_cube_array, uniform_buffer,
};
use bevy::render::render_resource::{
    BindGroupLayoutDescriptor, BindGroupLayoutEntries, CachedComputePipelineId,
    ComputePipelineDescriptor, PipelineCache, SamplerBindingType, ShaderStages, TextureSampleType,
};
use bevy::render::renderer::RenderDevice;
use bevy::render::view::ViewUniform;
use bevy::shader::{Shader, ShaderDefVal};
use bytemuck::{Pod, Zeroable};
use wgpu::BufferBindingType;

use crate::render::passes::common::{storage, uniform};
use crate::render::passes::library::ShaderDef;
use crate::render::pipelines::bevy_defs;

/// The pass's WGSL, a shader asset of its own: it imports Bevy's PBR modules, which
/// only the app's `PipelineCache` composes (not the crate's `ShaderLibrary`).
pub(crate) const WGSL: &str = include_str!("light_pass.wgsl");
/// Its asset path.
pub(crate) const WGSL_PATH: &str = "bevy_splat/render/lighting/light_pass.wgsl";

/// How far each splat's shadow lookup moves toward the light, in standard deviations
/// of the splat along the light's direction (`lift` in the WGSL): enough to leave the
/// splat's own share of the surface behind, as measured on the tests' splat wall and
/// angel.
pub const SHADOW_LIFT_SIGMAS: f32 = 2.0;

/// The pass's parameters (`LightParams` in WGSL).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct LightParams {
    /// Entries of Bevy's clustered lights in use this frame.
    pub clustered_count: u32,
    pub bias_sigmas: f32,
    pub _pad: [u32; 2],
}

/// The filtering methods, in the order [`LightPipelines`] keeps them.
pub(crate) const FILTERS: [ShadowFilteringMethod; 3] = [
    ShadowFilteringMethod::Hardware2x2,
    ShadowFilteringMethod::Gaussian,
    ShadowFilteringMethod::Temporal,
];

/// The shader def `bevy_pbr::shadow_sampling` filters with for `method` (without one
/// it reads every splat as shadowed).
fn filter_def(method: ShadowFilteringMethod) -> &'static str {
    match method {
        ShadowFilteringMethod::Hardware2x2 => "SHADOW_FILTER_METHOD_HARDWARE_2X2",
        ShadowFilteringMethod::Gaussian => "SHADOW_FILTER_METHOD_GAUSSIAN",
        ShadowFilteringMethod::Temporal => "SHADOW_FILTER_METHOD_TEMPORAL",
    }
}

/// Where `method` is in [`FILTERS`].
pub(crate) fn filter_index(method: ShadowFilteringMethod) -> usize {
    FILTERS.iter().position(|m| *m == method).unwrap_or(1)
}

/// Group 0: Bevy's view bindings that `bevy_pbr::shadows` reads, at their binding
/// numbers, for the compute stage. `None` where the clustered lights are not in a
/// storage buffer (WebGL 2, which has no compute anyway).
pub(crate) fn view_layout(device: &RenderDevice) -> Option<BindGroupLayoutDescriptor> {
    let clustered =
        device.get_supported_read_only_binding_type(CLUSTERED_FORWARD_STORAGE_BUFFER_COUNT);
    if !matches!(clustered, BufferBindingType::Storage { .. }) {
        return None;
    }
    let entries = BindGroupLayoutEntries::with_indices(
        ShaderStages::COMPUTE,
        (
            (0, uniform_buffer::<ViewUniform>(true)),
            (1, uniform_buffer::<GpuLights>(true)),
            (2, texture_cube_array(TextureSampleType::Depth)),
            (3, sampler(SamplerBindingType::Comparison)),
            (5, texture_2d_array(TextureSampleType::Depth)),
            (6, sampler(SamplerBindingType::Comparison)),
            (
                8,
                storage_buffer_read_only_sized(
                    false,
                    Some(GpuClusteredLights::min_size(clustered)),
                ),
            ),
            (11, uniform_buffer::<GlobalsUniform>(false)),
        ),
    );
    Some(BindGroupLayoutDescriptor::new("splat light view", &entries))
}

/// Group 1: the band's counters, projected splats and `LitPoint`s, and the parameters.
pub(crate) fn band_layout() -> BindGroupLayoutDescriptor {
    BindGroupLayoutDescriptor::new(
        "splat light band",
        &[
            storage(0, true),
            storage(1, false),
            storage(2, true),
            uniform(3, false),
        ],
    )
}

/// Queues the pass for each of [`FILTERS`], with the crate's shader defs.
pub(crate) fn queue_pipelines(
    cache: &PipelineCache,
    shader: &Handle<Shader>,
    view_layout: &BindGroupLayoutDescriptor,
    crate_defs: &[ShaderDef],
) -> [CachedComputePipelineId; 3] {
    FILTERS.map(|method| {
        let mut shader_defs = bevy_defs(crate_defs, &[]);
        shader_defs.extend([
            ShaderDefVal::Bool(filter_def(method).into(), true),
            ShaderDefVal::UInt(
                "MAX_DIRECTIONAL_LIGHTS".into(),
                MAX_DIRECTIONAL_LIGHTS as u32,
            ),
            ShaderDefVal::UInt(
                "MAX_CASCADES_PER_LIGHT".into(),
                MAX_CASCADES_PER_LIGHT as u32,
            ),
            ShaderDefVal::UInt("MAX_RECT_LIGHTS".into(), MAX_RECT_LIGHTS as u32),
        ]);
        cache.queue_compute_pipeline(ComputePipelineDescriptor {
            label: Some(format!("splat light ({method:?})").into()),
            layout: vec![view_layout.clone(), band_layout()],
            shader: shader.clone(),
            shader_defs,
            entry_point: Some("light".into()),
            zero_initialize_workgroup_memory: false,
            ..Default::default()
        })
    })
}
