//! What an app sets to time the shadow views.

use bevy::ecs::prelude::*;
use bevy::ecs::reflect::ReflectResource;
use bevy::reflect::prelude::*;
use bevy::render::extract_resource::ExtractResource;

/// Insert to time every stage of every shadow view the clouds are drawn into, as
/// `SplatPassTimes` does for a camera: with Bevy's `RenderDiagnosticsPlugin` each view
/// reports `render/gaussian_splat_shadows/<view>/<stage>/elapsed_gpu` beside its whole
/// span `render/gaussian_splat_shadows/<view>/elapsed_gpu` (which is always there).
/// A directional light's cascades are drawn in one run, whose stages are timed under
/// its first cascade; the other cascades' spans hold their depth writes alone.
/// Off by default: the timestamps cost GPU time.
#[derive(Resource, Clone, Copy, Debug, Default, Reflect, ExtractResource)]
#[reflect(Resource, Default, Debug, Clone)]
pub struct SplatShadowPassTimes;
