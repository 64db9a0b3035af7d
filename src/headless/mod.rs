//! Offline rendering: a windowless Bevy app that renders splat cameras into images
//! and reads them back as [`Rgba8`] (thumbnails, exports, image tests in CI).
//!
//! [`Headless`] owns an [`App`] built from the plugins the caller passes (its
//! `DefaultPlugins`, with the windowing backend disabled), with [`GaussianSplatPlugin`]
//! added. Clouds are added straight to its [`Assets`] ([`Headless::add_splats`], or
//! [`scene::load`] for a file on disk), cameras draw into images of their own
//! ([`Headless::spawn_camera`] for the splat layer's values as rendered,
//! [`Headless::spawn_display_camera`] for what a window would show), and
//! [`Headless::render`] updates the app until every splat camera has drawn a
//! complete frame, then reads each image back.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy::winit::WinitPlugin;
//! use bevy_splat::headless::{Headless, scene};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut headless = Headless::new(DefaultPlugins.build().disable::<WinitPlugin>());
//! for (splats, transform) in scene::load("scene.ply")? {
//!     let splats = headless.add_splats(splats);
//!     headless.spawn_cloud(splats, transform);
//! }
//! let camera = headless.spawn_display_camera(
//!     Transform::from_xyz(0.0, 1.0, 4.0).looking_at(Vec3::ZERO, Vec3::Y),
//!     PerspectiveProjection::default(),
//!     UVec2::new(640, 480),
//!     Color::BLACK,
//! );
//! let images = headless.render(&[camera])?;
//! images[0].save_png("thumbnail.png")?;
//! # Ok(())
//! # }
//! ```
//!
//! Native only: [`Headless::render`] blocks its thread until the GPU's work comes
//! back, which on the web only happens once control returns to the browser.
//!
//! - `rgba`: [`Rgba8`], the image read back, and [`Rgba8::save_png`] (feature `png`);
//! - [`scene`]: any splat file from disk as clouds with their transforms.

mod rgba;
pub mod scene;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bevy::app::{App, AppExit, PluginGroup};
use bevy::asset::{Assets, Handle};
use bevy::camera::{
    Camera, Camera3d, CameraMainTextureUsages, ClearColorConfig, Projection, RenderTarget, Viewport,
};
use bevy::color::Color;
use bevy::core_pipeline::tonemapping::{DebandDither, Tonemapping};
use bevy::ecs::entity::Entity;
use bevy::ecs::message::Messages;
use bevy::ecs::observer::On;
use bevy::image::Image;
use bevy::log::LogPlugin;
use bevy::math::UVec2;
use bevy::render::RenderPlugin;
use bevy::render::gpu_readback::{Readback, ReadbackComplete};
use bevy::render::render_resource::{TextureFormat, TextureUsages};
use bevy::render::settings::{WgpuLimits, WgpuSettings};
use bevy::render::view::Msaa;
use bevy::transform::components::Transform;
use bevy::window::{ExitCondition, WindowPlugin};

use crate::{
    GaussianCloud, GaussianSplatPlugin, GaussianSplats, SplatComposite, SplatPipelinesStatus,
    SplatStats,
};

pub use rgba::Rgba8;
#[cfg(feature = "png")]
pub use rgba::SavePngError;

/// Frames to wait for a camera that never reports splat counts (it sees no cloud).
const NO_SPLAT_FRAMES: u32 = 8;
/// Frames [`Headless::render`] and [`Headless::read_back`] wait before giving up.
pub const MAX_FRAMES: u32 = 600;

/// Log filter directives for a headless render: wgpu's warnings, the renderer's
/// warning about a software adapter, and read-backs still in flight when their
/// entity or app goes away, all expected in batch renders, kept to errors. For a
/// [`LogPlugin`]'s `filter`, see [`quiet_log`].
pub const QUIET_LOG_FILTER: &str =
    "wgpu=error,bevy_render::renderer=error,bevy_render::gpu_readback=error";

/// A [`LogPlugin`] for batch renders: warnings and errors, with
/// [`QUIET_LOG_FILTER`]. Set it in the plugins passed to [`Headless::new`].
pub fn quiet_log() -> LogPlugin {
    LogPlugin {
        level: bevy::log::Level::WARN,
        filter: QUIET_LOG_FILTER.into(),
        ..Default::default()
    }
}

/// Why [`Headless::render`] or [`Headless::read_back`] returned no image.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// Something in the app sent [`AppExit`] before the images were read back.
    #[error("the app exited early: {0:?}")]
    Exited(AppExit),
    /// The app has no splat renderer: the plugins had no `RenderPlugin`, or the
    /// render world did not start.
    #[error("the app renders no splats (no SplatStats: is RenderPlugin in its plugins?)")]
    NoRenderer,
    /// Some splat camera still had not drawn a complete frame after this many frames.
    #[error("splat frames were still incomplete after {0} frames")]
    Incomplete(u32),
    /// The image's read-back had not arrived after this many frames.
    #[error("the image readback never completed ({0} frames)")]
    ReadbackTimedOut(u32),
}

/// Device settings like this machine's first adapter's (high performance preferred),
/// with storage buffer bindings of at most `bytes`: a small device's limits, on any
/// GPU. `None` without an adapter. For [`Headless::with_settings`].
pub fn storage_binding_limit(bytes: u64) -> Option<WgpuSettings> {
    lowered_limits(|limits| limits.max_storage_buffer_binding_size = bytes)
}

/// Device settings like this machine's first adapter's (high performance preferred),
/// with its limits as `lower` leaves them: a smaller device's, on any GPU (for
/// instance 2-D textures of at most 1,000 texels a side, `max_texture_dimension_2d`).
/// `None` without an adapter. For [`Headless::with_settings`].
pub fn lowered_limits(lower: impl FnOnce(&mut WgpuLimits)) -> Option<WgpuSettings> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = WgpuSettings::default().backends?;
    let instance = wgpu::Instance::new(desc);
    let adapter = bevy::tasks::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .ok()?;
    let mut limits = adapter.limits();
    lower(&mut limits);
    Some(WgpuSettings {
        constrained_limits: Some(limits),
        ..Default::default()
    })
}

/// A camera spawned by [`Headless`], with the image it draws into.
#[derive(Clone, Debug)]
pub struct HeadlessCamera {
    /// The camera entity.
    pub entity: Entity,
    /// The image it renders into, read back by [`Headless::read_back`].
    pub image: Handle<Image>,
    /// The image's size in pixels.
    pub size: UVec2,
}

/// A windowless app that renders splat cameras into images and reads them back.
pub struct Headless {
    /// The app: add resources, spawn entities or step it with `app.update()`.
    pub app: App,
}

/// Whether a headless app has installed its [`LogPlugin`]: a process has one logger.
static LOGGER_INSTALLED: AtomicBool = AtomicBool::new(false);

impl Headless {
    /// A headless app of `plugins` and [`GaussianSplatPlugin`], on the default
    /// device; see [`Headless::with_settings`].
    pub fn new(plugins: impl PluginGroup) -> Self {
        Self::with_settings(plugins, WgpuSettings::default(), |_| {})
    }

    /// A headless app; `configure` adds plugins, resources or splat shaders before the
    /// app is finished. See [`Headless::with_settings`].
    pub fn with(plugins: impl PluginGroup, configure: impl FnOnce(&mut App)) -> Self {
        Self::with_settings(plugins, WgpuSettings::default(), configure)
    }

    /// A headless app of `plugins` whose device is created with `settings` (e.g.
    /// lowered limits, [`storage_binding_limit`]), with [`GaussianSplatPlugin`] added
    /// and then `configure` run, before the app is finished.
    ///
    /// `plugins` are the app's `DefaultPlugins` or the like, without a windowing
    /// backend: disable `bevy::winit::WinitPlugin` where Bevy has the `bevy_winit`
    /// feature. Their `WindowPlugin` is set to open no window and never exit, and
    /// their `RenderPlugin` to `settings` with pipelines compiled before the first
    /// frame. A process has one logger: the first headless app keeps the plugins'
    /// `LogPlugin` (see [`quiet_log`]), later ones leave it out.
    ///
    /// # Panics
    ///
    /// If `plugins` has no `RenderPlugin`; and as Bevy does, when no GPU adapter
    /// matches `settings`, or `configure` adds a plugin twice.
    pub fn with_settings(
        plugins: impl PluginGroup,
        settings: WgpuSettings,
        configure: impl FnOnce(&mut App),
    ) -> Self {
        let window = WindowPlugin {
            primary_window: None,
            exit_condition: ExitCondition::DontExit,
            ..Default::default()
        };
        let mut plugins = match plugins.build().try_set(window) {
            Ok(plugins) | Err((plugins, _)) => plugins,
        };
        plugins = match plugins.try_set(RenderPlugin {
            render_creation: settings.into(),
            synchronous_pipeline_compilation: true,
            ..Default::default()
        }) {
            Ok(plugins) => plugins,
            Err(_) => panic!("bevy_splat::headless: the plugins have no RenderPlugin"),
        };
        if plugins.enabled::<LogPlugin>() && LOGGER_INSTALLED.swap(true, Ordering::SeqCst) {
            plugins = plugins.disable::<LogPlugin>();
        }
        let mut app = App::new();
        app.add_plugins(plugins).add_plugins(GaussianSplatPlugin);
        configure(&mut app);
        app.finish();
        app.cleanup();
        Self { app }
    }

    /// Adds `splats` to the app's assets.
    pub fn add_splats(&mut self, splats: GaussianSplats) -> Handle<GaussianSplats> {
        self.app
            .world_mut()
            .resource_mut::<Assets<GaussianSplats>>()
            .add(splats)
    }

    /// Spawns a cloud of `splats` at `transform`.
    pub fn spawn_cloud(&mut self, splats: Handle<GaussianSplats>, transform: Transform) -> Entity {
        self.app
            .world_mut()
            .spawn((GaussianCloud(splats), transform))
            .id()
    }

    /// A camera rendering into its own `Rgba8Unorm` image of `size` on black, with the
    /// splat layer's values written as rendered (no tonemapping, no colour conversion,
    /// [`SplatComposite::Passthrough`]). `viewport` restricts it to part of the image.
    pub fn spawn_camera(
        &mut self,
        transform: Transform,
        projection: impl Into<Projection>,
        size: UVec2,
        viewport: Option<Viewport>,
    ) -> HeadlessCamera {
        let image = self.add_target(size, TextureFormat::Rgba8Unorm);
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
        let image = self.add_target(size, TextureFormat::Rgba8UnormSrgb);
        let camera = self.spawn_camera_on(image, transform, projection, size, None, 0);
        let mut entity = self.app.world_mut().entity_mut(camera.entity);
        entity.remove::<SplatComposite>().insert(Camera {
            clear_color: ClearColorConfig::Custom(background),
            ..Default::default()
        });
        camera
    }

    /// A camera drawing into an existing image, such as another camera's (a second
    /// viewport): as [`Headless::spawn_camera`], but it clears the image to black
    /// only when `order` is 0 and draws over it otherwise.
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
                    ..Default::default()
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

    /// Makes `camera` composite its splats in a compute pass: an HDR main texture
    /// (`Rgba16Float`) that takes storage writes. Its image is the same.
    pub fn composite_by_compute(&mut self, camera: &HeadlessCamera) {
        self.app.world_mut().entity_mut(camera.entity).insert((
            bevy::camera::Hdr,
            CameraMainTextureUsages::default().with(TextureUsages::STORAGE_BINDING),
        ));
    }

    /// Updates the app until every camera of `cameras` that draws splats has drawn a
    /// complete frame (its buffers held every tile pair; a camera that sees no cloud
    /// gets a few frames), then reads back each camera's image, in order.
    pub fn render(&mut self, cameras: &[HeadlessCamera]) -> Result<Vec<Rgba8>, HeadlessError> {
        // Frames drawn since the splat pipelines became ready.
        let mut ready_frames = 0;
        for _ in 0..MAX_FRAMES {
            self.update()?;
            if self.pipelines_ready() {
                ready_frames += 1;
            }
            let stats = self
                .app
                .world()
                .get_resource::<SplatStats>()
                .ok_or(HeadlessError::NoRenderer)?;
            // Buffers only grow, so once a reported frame was complete every later
            // frame of the same scene is too. A camera that draws no splats never
            // reports: give it a few frames.
            let complete = cameras.iter().all(|camera| match stats.get(camera.entity) {
                Some(s) => s.gpu_reports > 0 && s.complete(),
                None => ready_frames > NO_SPLAT_FRAMES,
            });
            if complete {
                return cameras
                    .iter()
                    .map(|camera| self.read_back(camera))
                    .collect();
            }
        }
        Err(HeadlessError::Incomplete(MAX_FRAMES))
    }

    /// Whether the splat pipelines are compiled (until then no camera draws splats).
    fn pipelines_ready(&self) -> bool {
        self.app
            .world()
            .get_resource::<SplatPipelinesStatus>()
            .is_some_and(SplatPipelinesStatus::ready)
    }

    /// Reads back `camera`'s image as it stands, updating the app until the copy
    /// arrives.
    pub fn read_back(&mut self, camera: &HeadlessCamera) -> Result<Rgba8, HeadlessError> {
        let received: Arc<Mutex<Option<Vec<u8>>>> = Arc::default();
        let sink = received.clone();
        let reader = self
            .app
            .world_mut()
            .spawn(Readback::texture(camera.image.clone()))
            .observe(move |event: On<ReadbackComplete>| {
                let mut slot = sink.lock().unwrap_or_else(PoisonError::into_inner);
                slot.get_or_insert_with(|| event.data.clone());
            })
            .id();
        for _ in 0..MAX_FRAMES {
            self.update()?;
            let data = received
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(data) = data {
                self.app.world_mut().despawn(reader);
                return Ok(Rgba8::from_padded_rows(&data, camera.size));
            }
        }
        self.app.world_mut().despawn(reader);
        Err(HeadlessError::ReadbackTimedOut(MAX_FRAMES))
    }

    /// One `App::update`, failing if the app asked to exit.
    fn update(&mut self) -> Result<(), HeadlessError> {
        self.app.update();
        let exit = self
            .app
            .world_mut()
            .get_resource_mut::<Messages<AppExit>>()
            .and_then(|mut messages| messages.drain().next());
        match exit {
            Some(exit) => Err(HeadlessError::Exited(exit)),
            None => Ok(()),
        }
    }

    /// A render target image of `size` and `format` that can be copied out.
    fn add_target(&mut self, size: UVec2, format: TextureFormat) -> Handle<Image> {
        let mut image = Image::new_target_texture(size.x, size.y, format, None);
        // Read back after rendering.
        image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
        self.app
            .world_mut()
            .resource_mut::<Assets<Image>>()
            .add(image)
    }
}
