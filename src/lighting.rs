//! How a cloud takes the scene's light (`SplatLighting`), and how a light draws the
//! clouds' shadows (`RedrawSplatShadows`, `SplatShadowScale`).

use bevy::ecs::prelude::*;
use bevy::reflect::prelude::*;

/// How a cloud's splats take the light of Bevy's directional, point and spot lights.
///
/// Each splat is lit at its centre, once per frame, after it is projected (the light
/// pass of `render::lighting`): a splat darker or brighter by a shadow edge crossing
/// it is darkened or brightened whole, so a shadow's edge on a scan is as sharp as the
/// scan's splats are small. `NotShadowReceiver` on the cloud keeps every mode from
/// sampling the shadow maps. Needs the `shadows` feature (on by default) and a device
/// with 9 storage buffers per shader stage (11 for a camera with `SplatLod`); elsewhere
/// the cloud is drawn `Unlit`, with a warning.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
pub enum SplatLighting {
    /// The trained colours as they are: today's image, exactly, at no cost.
    #[default]
    Unlit,
    /// The trained colours (whose baked light stays), darkened where a caster blocks
    /// the lights: by `strength` (0 to 1) times the share of the lights' irradiance at
    /// the splat that is blocked (lights weighted by their luminance there).
    Shadowed {
        /// 1: a fully blocked splat goes black; 0: nothing changes.
        strength: f32,
    },
    /// The trained colour as albedo of a Lambertian surface: the scene's ambient light
    /// and each light's irradiance over π (shadowed where casters block it), times the
    /// camera's exposure, as Bevy's PBR lights a rough, non-metal mesh. The normal is
    /// each splat's shortest axis, turned toward the camera. An approximation that
    /// suits scans captured under flat, even light; a scan's baked shading stays in
    /// its albedo.
    Lit,
}

impl SplatLighting {
    /// Shadows at full strength on the trained colours.
    pub const SHADOWED: Self = Self::Shadowed { strength: 1.0 };

    /// Whether the cloud is drawn through the light pass.
    pub fn receives_light(&self) -> bool {
        !matches!(self, Self::Unlit)
    }

    /// The `Shadowed` strength the GPU applies: within 0..=1, NaN as 0.
    pub fn strength(&self) -> f32 {
        match *self {
            Self::Unlit => 0.0,
            Self::Shadowed { strength } if strength.is_nan() => 0.0,
            Self::Shadowed { strength } => strength.clamp(0.0, 1.0),
            Self::Lit => 1.0,
        }
    }
}

/// On a light: draw the clouds' shadows anew every frame. Without it, a shadow view
/// (a cascade, a cube face, a spot light's view) whose clouds, light and camera did not
/// move since the frame before keeps a copy of its splat surface and only writes that
/// copy into the light's shadow map until something moves: nearly free for a static
/// light over static clouds, at the cost of one median-depth texture per such view (4
/// bytes a texel: 16 MiB for a 2048² cascade) while it stands still. Views of clouds
/// with a `SplatShader` or a streamed asset are always drawn anew.
///
/// For measuring what a moving light costs, or to spend no memory on the copies.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
pub struct RedrawSplatShadows;

/// On a light: draw the clouds into its shadow maps at 1/N of the maps' resolution on
/// each axis (`N` = 1, 2, 4 or 8), each texel of the splats' surface covering N×N
/// texels of the map, while meshes keep the map's full resolution, for edges one map
/// texel coarser.
///
/// Meant with [`SplatLod`](crate::lod::SplatLod) on the light, whose `pixel_scale` counts
/// the splats' texels: at 2 its cuts are coarser and its views cheaper (measured on
/// an H100, BENCHMARKS.md: a directional light's four cascades with 24-texel cuts
/// 2.68 → 1.83 ms at one commit, 1.50 ms since, 1.11 with the cascades drawn in one
/// run). Without it the views cost more:
/// splats smaller than a tile make as many tile pairs at half the resolution, crowded
/// into a quarter of the tiles.
///
/// A scale that does not divide a map's size is halved until it does; 0 acts as 1,
/// and scales above 8 as 8.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
pub struct SplatShadowScale(pub u32);

impl Default for SplatShadowScale {
    fn default() -> Self {
        Self(1)
    }
}

impl SplatShadowScale {
    /// The largest scale allowed for it (8 map texels a side per splat texel).
    pub const MAX: u32 = 8;

    /// The scale used for a map of `width` × `height` texels: a power of two, at most
    /// this one and [`Self::MAX`], that divides both.
    pub fn for_map(self, width: u32, height: u32) -> u32 {
        let mut scale = self.0.clamp(1, Self::MAX);
        // Down to a power of two.
        scale = 1 << scale.ilog2();
        while scale > 1 && !(width.is_multiple_of(scale) && height.is_multiple_of(scale)) {
            scale /= 2;
        }
        scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strengths_are_clamped_and_nan_changes_nothing() {
        assert_eq!(SplatLighting::Shadowed { strength: 2.0 }.strength(), 1.0);
        assert_eq!(SplatLighting::Shadowed { strength: -1.0 }.strength(), 0.0);
        assert_eq!(
            SplatLighting::Shadowed { strength: f32::NAN }.strength(),
            0.0
        );
        assert_eq!(SplatLighting::SHADOWED.strength(), 1.0);
        assert!(!SplatLighting::default().receives_light());
        assert!(SplatLighting::Lit.receives_light());
    }

    #[test]
    fn the_scale_divides_the_map() {
        let scale = |n, w, h| SplatShadowScale(n).for_map(w, h);
        assert_eq!(scale(0, 2048, 2048), 1);
        assert_eq!(scale(1, 2048, 2048), 1);
        assert_eq!(scale(2, 2048, 2048), 2);
        assert_eq!(scale(3, 2048, 2048), 2);
        assert_eq!(scale(4, 1024, 1024), 4);
        assert_eq!(scale(64, 2048, 2048), 8);
        assert_eq!(scale(4, 1000, 1000), 4);
        assert_eq!(scale(4, 1002, 1000), 2);
        assert_eq!(scale(8, 999, 999), 1);
        assert_eq!(scale(u32::MAX, 0, 0), 8);
    }
}
