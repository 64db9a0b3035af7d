//! What the render world needs of each cloud and each splat camera.

use bevy::asset::AssetId;
use bevy::camera::primitives::Aabb;
use bevy::camera::visibility::{InheritedVisibility, RenderLayers};
use bevy::ecs::prelude::*;
use bevy::ecs::query::QueryItem;
use bevy::light::{NotShadowCaster, NotShadowReceiver};
use bevy::math::Affine3A;
use bevy::render::Extract;
use bevy::render::extract_component::ExtractComponent;
use bevy::render::sync_component::SyncComponent;
use bevy::time::Time;
use bevy::transform::components::GlobalTransform;

use crate::asset::GaussianSplats;
use crate::cloud::{GaussianCloud, SplatRasterMode};
use crate::crop::SplatCrop;
use crate::lighting::{RedrawSplatShadows, SplatLighting, SplatShadowScale};
use crate::lod::SplatLod;
use crate::render::passes::composite::SplatComposite;
use crate::render::passes::depth_write::SplatDepth;
use crate::render::view::picks::SplatPickRequest;
use crate::render::view::timestamps::SplatPassTimes;
use crate::shader::SplatShader;
use crate::tint::SplatTint;

/// A cloud as the render world sees it this frame: every cloud shown in the
/// hierarchy, seen by a camera or not (a light may see what no camera does; cameras
/// draw those in their `RenderVisibleEntities`).
#[derive(Component, Clone, Debug)]
pub struct ExtractedCloud {
    pub asset: AssetId<GaussianSplats>,
    pub world_from_cloud: Affine3A,
    /// The box its splats fill, in cloud space (`None`: never culled).
    pub bounds: Option<Aabb>,
    /// It is drawn into the shadow maps of the lights whose layers it shares.
    pub casts_shadows: bool,
    pub layers: RenderLayers,
    /// How it takes the scene's light, and whether it samples the shadow maps (it has
    /// no `NotShadowReceiver`).
    pub lighting: SplatLighting,
    pub receives_shadows: bool,
    /// `None`: as the asset says.
    pub raster_mode: Option<SplatRasterMode>,
    pub tint: SplatTint,
    pub crop: Option<SplatCrop>,
    pub shader: Option<SplatShader>,
}

/// The time a `SplatShader` is given this frame: Bevy's `Time`, in seconds, wrapped.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct SplatShaderTime(pub f32);

pub fn extract_shader_time(mut time: ResMut<SplatShaderTime>, main: Extract<Res<Time>>) {
    time.0 = main.elapsed_secs_wrapped();
}

impl SyncComponent for GaussianCloud {
    type Target = ExtractedCloud;
}

impl ExtractComponent for GaussianCloud {
    type QueryData = (
        &'static GaussianCloud,
        &'static GlobalTransform,
        &'static InheritedVisibility,
        (
            Option<&'static Aabb>,
            Option<&'static RenderLayers>,
            Has<NotShadowCaster>,
            Has<NotShadowReceiver>,
            Option<&'static SplatLighting>,
        ),
        Option<&'static SplatRasterMode>,
        Option<&'static SplatTint>,
        Option<&'static SplatCrop>,
        Option<&'static SplatShader>,
    );
    type QueryFilter = ();
    type Out = ExtractedCloud;

    fn extract_component(
        (
            cloud,
            transform,
            shown,
            (bounds, layers, not_caster, not_receiver, lighting),
            raster_mode,
            tint,
            crop,
            shader,
        ): QueryItem<'_, '_, Self::QueryData>,
    ) -> Option<Self::Out> {
        if !shown.get() {
            return None;
        }
        Some(ExtractedCloud {
            asset: cloud.0.id(),
            world_from_cloud: transform.affine(),
            bounds: bounds.copied(),
            casts_shadows: !not_caster,
            layers: layers.cloned().unwrap_or_default(),
            lighting: lighting.copied().unwrap_or_default(),
            receives_shadows: !not_receiver,
            raster_mode: raster_mode.copied(),
            tint: tint.copied().unwrap_or_default(),
            crop: crop.filter(|c| !c.volumes.is_empty()).cloned(),
            shader: shader.copied(),
        })
    }
}

/// Camera and light components that reach the render world as they are (settings, and the
/// pointer pixels a camera picks).
macro_rules! extract_as_is {
    ($($setting:ty),*) => {$(
        impl SyncComponent for $setting {
            type Target = $setting;
        }

        impl ExtractComponent for $setting {
            type QueryData = &'static $setting;
            type QueryFilter = ();
            type Out = $setting;

            fn extract_component(setting: QueryItem<'_, '_, Self::QueryData>) -> Option<Self::Out> {
                Some(Clone::clone(setting))
            }
        }
    )*};
}

extract_as_is!(
    SplatComposite,
    SplatDepth,
    SplatPickRequest,
    SplatPassTimes,
    SplatLod,
    RedrawSplatShadows,
    SplatShadowScale
);
