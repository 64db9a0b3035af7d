//! A windowless Bevy app that renders splat cameras into images and reads them back.
//! Used by the `render` example and by the image tests.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use bevy::app::AppExit;
use bevy::camera::{ClearColorConfig, Projection, RenderTarget, Viewport};
use bevy::core_pipeline::tonemapping::{DebandDither, Tonemapping};
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::gpu_readback::{Readback, ReadbackComplete};
use bevy::render::render_resource::{TextureFormat, TextureUsages};
use bevy::render::settings::{WgpuLimits, WgpuSettings};
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use bevy_splat::{GaussianCloud, GaussianSplatPlugin, GaussianSplats, SplatComposite, SplatStats};

/// Frames to wait for a camera that never reports splat counts (it sees no cloud).
const NO_SPLAT_FRAMES: u32 = 8;
/// Give up after this many frames.
const MAX_FRAMES: u32 = 600;

/// An 8-bit RGBA image read back from a camera target.
pub struct Rgba8 {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

impl Rgba8 {
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = ((y * self.width + x) * 4) as usize;
        [
            self.pixels[i],
            self.pixels[i + 1],
            self.pixels[i + 2],
            self.pixels[i + 3],
        ]
    }

    /// Writes the RGB bytes as an 8-bit PNG.
    pub fn save_png(&self, path: &std::path::Path) -> Result<(), String> {
        image::save_buffer(
            path,
            &self.rgb(),
            self.width,
            self.height,
            image::ExtendedColorType::Rgb8,
        )
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Drops alpha: the RGB bytes, row by row.
    pub fn rgb(&self) -> Vec<u8> {
        self.pixels
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect()
    }
}

pub struct Headless {
    pub app: App,
}

/// Device settings like this machine's adapter, with storage buffer bindings of at
/// most `bytes`: a small device's limits, on any GPU. `None` without an adapter.
pub fn storage_binding_limit(bytes: u64) -> Option<WgpuSettings> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = WgpuSettings::default().backends?;
    let instance = wgpu::Instance::new(desc);
    let adapter = bevy::tasks::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..default()
    }))
    .ok()?;
    Some(WgpuSettings {
        constrained_limits: Some(WgpuLimits {
            max_storage_buffer_binding_size: bytes,
            ..adapter.limits()
        }),
        ..default()
    })
}

/// A camera spawned by [`Headless::spawn_camera`].
#[derive(Clone, Debug)]
pub struct HeadlessCamera {
    pub entity: Entity,
    pub image: Handle<Image>,
    pub size: UVec2,
}

impl Headless {
    pub fn new() -> Self {
        Self::with(|_| {})
    }

    /// A headless app; `configure` adds plugins or resources before the app is finished.
    pub fn with(configure: impl FnOnce(&mut App)) -> Self {
        Self::with_settings(WgpuSettings::default(), configure)
    }

    /// A headless app whose device is created with `settings` (e.g. lowered limits).
    pub fn with_settings(settings: WgpuSettings, configure: impl FnOnce(&mut App)) -> Self {
        let mut app = App::new();
        let plugins = DefaultPlugins
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                ..default()
            })
            .set(RenderPlugin {
                render_creation: settings.into(),
                synchronous_pipeline_compilation: true,
                ..default()
            })
            .disable::<WinitPlugin>();
        // Bevy's logger can be installed once per process; tests make many apps.
        static LOGGER: std::sync::Once = std::sync::Once::new();
        let mut first = false;
        LOGGER.call_once(|| first = true);
        if first {
            app.add_plugins(plugins.set(bevy::log::LogPlugin {
                level: bevy::log::Level::WARN,
                // Lavapipe is slow by design, and a readback dropped with its
                // entity is expected here: keep those quiet.
                filter:
                    "wgpu=error,bevy_render::renderer=error,bevy_render::gpu_readback=error".into(),
                ..default()
            }));
        } else {
            app.add_plugins(plugins.disable::<bevy::log::LogPlugin>());
        }
        app.add_plugins(GaussianSplatPlugin);
        configure(&mut app);
        app.finish();
        app.cleanup();
        Self { app }
    }

    pub fn add_splats(&mut self, splats: GaussianSplats) -> Handle<GaussianSplats> {
        self.app
            .world_mut()
            .resource_mut::<Assets<GaussianSplats>>()
            .add(splats)
    }

    pub fn spawn_cloud(&mut self, splats: Handle<GaussianSplats>, transform: Transform) -> Entity {
        self.app
            .world_mut()
            .spawn((GaussianCloud(splats), transform))
            .id()
    }

    /// A camera rendering into its own `Rgba8Unorm` image of `size` on black, with the
    /// splat layer's values written as rendered (no tonemapping, no colour conversion).
    /// `viewport` restricts it to part of the image.
    pub fn spawn_camera(
        &mut self,
        transform: Transform,
        projection: impl Into<Projection>,
        size: UVec2,
        viewport: Option<Viewport>,
    ) -> HeadlessCamera {
        let world = self.app.world_mut();
        let mut image = Image::new_target_texture(size.x, size.y, TextureFormat::Rgba8Unorm, None);
        // Read back after rendering.
        image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
        let image = world.resource_mut::<Assets<Image>>().add(image);
        self.spawn_camera_on(image, transform, projection, size, viewport, 0)
    }

    /// A camera as a user's window shows it: an `Rgba8UnormSrgb` image of `size`
    /// cleared to `background`, with the default composite (the trained image over
    /// the scene in sRGB values) and no tonemapping.
    pub fn spawn_display_camera(
        &mut self,
        transform: Transform,
        projection: impl Into<Projection>,
        size: UVec2,
        background: Color,
    ) -> HeadlessCamera {
        let world = self.app.world_mut();
        let mut image =
            Image::new_target_texture(size.x, size.y, TextureFormat::Rgba8UnormSrgb, None);
        image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
        let image = world.resource_mut::<Assets<Image>>().add(image);
        let camera = self.spawn_camera_on(image, transform, projection, size, None, 0);
        let mut entity = self.app.world_mut().entity_mut(camera.entity);
        entity.remove::<SplatComposite>().insert(Camera {
            clear_color: ClearColorConfig::Custom(background),
            ..default()
        });
        camera
    }

    /// Another camera drawing into an existing camera's image (e.g. a second viewport).
    pub fn spawn_camera_on(
        &mut self,
        image: Handle<Image>,
        transform: Transform,
        projection: impl Into<Projection>,
        size: UVec2,
        viewport: Option<Viewport>,
        order: isize,
    ) -> HeadlessCamera {
        let entity = self
            .app
            .world_mut()
            .spawn((
                Camera3d::default(),
                Camera {
                    clear_color: if order == 0 {
                        ClearColorConfig::Custom(Color::BLACK)
                    } else {
                        ClearColorConfig::None
                    },
                    viewport,
                    order,
                    ..default()
                },
                RenderTarget::Image(image.clone().into()),
                projection.into(),
                transform,
                Tonemapping::None,
                DebandDither::Disabled,
                Msaa::Off,
                SplatComposite::Passthrough,
            ))
            .id();
        HeadlessCamera {
            entity,
            image,
            size,
        }
    }

    /// Renders until every splat camera has drawn a complete frame (its buffers held
    /// every tile pair), then reads back each camera's image.
    pub fn render(&mut self, cameras: &[HeadlessCamera]) -> Result<Vec<Rgba8>, String> {
        for frame in 0..MAX_FRAMES {
            self.app.update();
            if let Some(exit) = self
                .app
                .world_mut()
                .resource_mut::<Messages<AppExit>>()
                .drain()
                .next()
            {
                return Err(format!("the app exited early: {exit:?}"));
            }
            let stats = self.app.world().resource::<SplatStats>().clone();
            // Buffers only grow, so once a reported frame was complete every later
            // frame of the same scene is too. A camera that draws no splats never
            // reports: give it a few frames.
            let complete = cameras.iter().all(|camera| match stats.get(camera.entity) {
                Some(s) => s.gpu_reports > 0 && s.complete(),
                None => frame >= NO_SPLAT_FRAMES,
            });
            if complete {
                return cameras
                    .iter()
                    .map(|camera| self.read_back(camera))
                    .collect();
            }
        }
        Err(format!(
            "splat frames were still incomplete after {MAX_FRAMES} frames"
        ))
    }

    pub fn read_back(&mut self, camera: &HeadlessCamera) -> Result<Rgba8, String> {
        let received: Arc<Mutex<Option<Vec<u8>>>> = Arc::default();
        let sink = received.clone();
        let reader = self
            .app
            .world_mut()
            .spawn(Readback::texture(camera.image.clone()))
            .observe(move |event: On<ReadbackComplete>| {
                if let Ok(mut slot) = sink.lock() {
                    slot.get_or_insert_with(|| event.data.clone());
                }
            })
            .id();
        for _ in 0..MAX_FRAMES {
            self.app.update();
            let data = received.lock().map_err(|e| e.to_string())?.take();
            if let Some(data) = data {
                self.app.world_mut().despawn(reader);
                return Ok(unpad(&data, camera.size));
            }
        }
        Err("the image readback never completed".into())
    }
}

/// Texture copies pad rows to 256 bytes; keep just the pixels.
fn unpad(data: &[u8], size: UVec2) -> Rgba8 {
    let row = size.x as usize * 4;
    let padded = row.div_ceil(256) * 256;
    let stride = if size.y > 1 { padded } else { row };
    let pixels = data
        .chunks(stride)
        .take(size.y as usize)
        .flat_map(|r| &r[..row])
        .copied()
        .collect();
    Rgba8 {
        width: size.x,
        height: size.y,
        pixels,
    }
}
