//! Per-cloud colour and opacity multipliers, applied as the splats are projected.

use bevy::ecs::prelude::*;
use bevy::math::Vec3;
use bevy::reflect::prelude::*;

/// Multiplies a cloud's colours and opacities without touching its asset: a fade-in,
/// a highlight, a ghosted copy. Applied in the preprocess, so changing it every frame
/// costs nothing; an opacity of 0 draws nothing and is not hit by ray casts.
#[derive(Component, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
pub struct SplatTint {
    /// Multiplies each splat's colour (the trained sRGB values, after SH evaluation).
    pub rgb: Vec3,
    /// Multiplies each splat's opacity; 0 to 1 (values outside are clamped).
    pub opacity: f32,
}

impl Default for SplatTint {
    fn default() -> Self {
        Self {
            rgb: Vec3::ONE,
            opacity: 1.0,
        }
    }
}

impl SplatTint {
    /// Only the opacity scaled: a fade.
    pub fn fade(opacity: f32) -> Self {
        Self {
            opacity,
            ..Self::default()
        }
    }

    /// The multipliers the GPU applies: colour at least 0, opacity within 0..=1, and
    /// NaN as "draw nothing" rather than a NaN image.
    pub fn sanitized(&self) -> [f32; 4] {
        let rgb = if self.rgb.is_finite() {
            self.rgb.max(Vec3::ZERO)
        } else {
            Vec3::ZERO
        };
        let opacity = if self.opacity.is_nan() {
            0.0
        } else {
            self.opacity.clamp(0.0, 1.0)
        };
        [rgb.x, rgb.y, rgb.z, opacity]
    }
}
