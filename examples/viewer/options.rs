//! What the viewer shows and how: the same keys from the command line
//! (`--eye 0,1,4`) and from the web page's query (`?eye=0,1,4`).

use bevy::color::Color;
use bevy::light::{CascadeShadowConfigBuilder, DirectionalLight, DirectionalLightShadowMap};
use bevy::math::{UVec2, Vec3};
use bevy::prelude::{Bundle, Transform, default};
use bevy_splat::SplatLighting;

/// The background of a scene that names none: a dark blue-grey, so black splats show.
pub const DEFAULT_BACKGROUND: Color = Color::srgb(0.08, 0.08, 0.1);

/// Everything the viewer can be told at start-up.
#[derive(Clone, Debug)]
pub struct ViewerOptions {
    /// The scene: a path (native) or a URL (web); `None` shows the shipped angel.
    pub scene: Option<String>,
    /// Turns a scene trained in COLMAP/OpenCV axes (+Y down) upright.
    pub opencv: bool,
    /// Where the camera starts; `None` frames the loaded scene.
    pub eye: Option<Vec3>,
    /// What the camera looks at (with `eye`; the origin when only `eye` is given).
    pub target: Option<Vec3>,
    /// Vertical field of view in degrees; `None` keeps Bevy's 45°.
    pub fov_degrees: Option<f32>,
    /// Canvas (web) or window (native) size in logical pixels; `None`: the page or
    /// the platform's default.
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub background: Color,
    /// The overlay with splat count and frame rate.
    pub hud: bool,
    /// Caps storage buffer bindings (MiB) so that a scene is drawn in several bands,
    /// as a small GPU would: what `bench --max-binding-mib` does.
    pub max_binding_mib: Option<u32>,
    /// Draws at most about this many splats a frame through each cloud's
    /// level-of-detail tree (`SplatLod`); `None` draws every splat.
    pub budget: Option<u32>,
    /// Loads a `.rad` with a level-of-detail tree as a stream, its resident chunks
    /// within this many MiB of GPU memory (`SplatStreaming`); `None` loads it whole.
    pub gpu_memory_mib: Option<u32>,
    /// Adds a sun ([`sun`], with shadow maps) and gives every cloud
    /// this `SplatLighting` (`light=shadowed|lit`); `None`: no light, trained colours.
    pub light: Option<SplatLighting>,
}

/// The sun of `light=`: 3,000 lux along (−0.5, −1, −0.4), one shadow cascade out to
/// 10 m (light enough for a software adapter in a browser).
pub fn sun() -> impl Bundle {
    (
        DirectionalLight {
            illuminance: 3_000.0,
            shadow_maps_enabled: true,
            ..default()
        },
        Transform::default().looking_to(Vec3::new(-0.5, -1.0, -0.4), Vec3::Y),
        CascadeShadowConfigBuilder {
            num_cascades: 1,
            first_cascade_far_bound: 10.0,
            maximum_distance: 10.0,
            ..default()
        }
        .build(),
    )
}

/// The sun's shadow map: 1024² (Bevy's default is 2048²).
pub const SUN_SHADOW_MAP: DirectionalLightShadowMap = DirectionalLightShadowMap { size: 1024 };

impl Default for ViewerOptions {
    fn default() -> Self {
        Self {
            scene: None,
            opencv: false,
            eye: None,
            target: None,
            fov_degrees: None,
            width: None,
            height: None,
            background: DEFAULT_BACKGROUND,
            hud: true,
            max_binding_mib: None,
            budget: None,
            gpu_memory_mib: None,
            light: None,
        }
    }
}

/// The keys both front ends accept, for usage messages.
pub const KEYS: &str = "url, eye=x,y,z, target=x,y,z, fov=DEGREES, width=PX, height=PX, \
                        background=rrggbb, hud=0|1, opencv=0|1, max_binding_mib=N, budget=SPLATS, \
                        gpu_memory=MIB, light=shadowed|lit";

impl ViewerOptions {
    /// Applies one `key = value` setting.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let bad = |what: &str| format!("{key}={value:?}: expected {what}");
        match key {
            "url" | "scene" => self.scene = (!value.is_empty()).then(|| value.to_owned()),
            "eye" => self.eye = Some(vector(value).ok_or_else(|| bad("x,y,z"))?),
            "target" => self.target = Some(vector(value).ok_or_else(|| bad("x,y,z"))?),
            "fov" => {
                let fov: f32 = value.parse().map_err(|_| bad("degrees"))?;
                if !(fov > 0.0 && fov < 180.0) {
                    return Err(bad("degrees between 0 and 180"));
                }
                self.fov_degrees = Some(fov);
            }
            "width" => self.width = Some(pixels(value).ok_or_else(|| bad("pixels"))?),
            "height" => self.height = Some(pixels(value).ok_or_else(|| bad("pixels"))?),
            "background" => self.background = colour(value).ok_or_else(|| bad("rrggbb"))?,
            "hud" => self.hud = flag(value).ok_or_else(|| bad("0 or 1"))?,
            "opencv" => self.opencv = flag(value).ok_or_else(|| bad("0 or 1"))?,
            "max_binding_mib" => {
                let mib: u32 = value.parse().map_err(|_| bad("a number of MiB"))?;
                if mib == 0 || mib > 4096 {
                    return Err(bad("1 to 4096 MiB"));
                }
                self.max_binding_mib = Some(mib);
            }
            "budget" => {
                let splats: u32 = value.parse().map_err(|_| bad("a number of splats"))?;
                if splats == 0 {
                    return Err(bad("at least one splat"));
                }
                self.budget = Some(splats);
            }
            "gpu_memory" | "gpu-memory" => {
                let mib: u32 = value.parse().map_err(|_| bad("a number of MiB"))?;
                if mib == 0 || mib > 1 << 20 {
                    return Err(bad("1 MiB to 1 TiB"));
                }
                self.gpu_memory_mib = Some(mib);
            }
            "light" => {
                self.light = Some(match value {
                    "shadowed" => SplatLighting::SHADOWED,
                    "lit" => SplatLighting::Lit,
                    _ => return Err(bad("shadowed or lit")),
                })
            }
            _ => return Err(format!("unknown setting {key:?}; the viewer takes {KEYS}")),
        }
        Ok(())
    }

    /// The window or canvas size, when both sides are given.
    pub fn size(&self) -> Option<UVec2> {
        Some(UVec2::new(self.width?, self.height?))
    }
}

fn vector(text: &str) -> Option<Vec3> {
    let mut parts = text.split(',').map(|p| p.trim().parse::<f32>().ok());
    let v = Vec3::new(parts.next()??, parts.next()??, parts.next()??);
    (parts.next().is_none() && v.is_finite()).then_some(v)
}

fn pixels(text: &str) -> Option<u32> {
    text.parse().ok().filter(|&n| (1..=16384).contains(&n))
}

fn flag(text: &str) -> Option<bool> {
    match text {
        "0" | "false" => Some(false),
        "1" | "true" => Some(true),
        _ => None,
    }
}

fn colour(text: &str) -> Option<Color> {
    let hex = text.strip_prefix('#').unwrap_or(text);
    if hex.len() != 6 || !hex.is_ascii() {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some(Color::srgb_u8(byte(0)?, byte(2)?, byte(4)?))
}
