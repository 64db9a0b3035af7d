//! bevy_splat renders trained 3D Gaussian Splatting scenes inside Bevy.
//!
//! Add [`GaussianSplatPlugin`], then spawn entities with a [`GaussianCloud`] that holds
//! a handle to a `.ply` file loaded as [`GaussianSplats`]:
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_splat::{GaussianCloud, GaussianSplatPlugin};
//!
//! App::new()
//!     .add_plugins((DefaultPlugins, GaussianSplatPlugin))
//!     .add_systems(Startup, |mut commands: Commands, assets: Res<AssetServer>| {
//!         commands.spawn(GaussianCloud(assets.load("angel.ply")));
//!         commands.spawn((Camera3d::default(), Transform::from_xyz(0.0, 1.0, 4.0)));
//!     })
//!     .run();
//! ```
//!
//! [`headless`] renders splat cameras into images without a window (native only);
//! [`gpu_sort`] is the GPU radix sort and prefix scan the passes are built on, for
//! any wgpu program. [`lod`] builds a cloud's level-of-detail tree, whose interior
//! nodes are splats merged from their children (the renderer does not choose among
//! them yet).
//!
//! # Naming
//!
//! The types at the crate root and in [`render`] are named in two families.
//! `Gaussian*` is the splat data and the plugin that brings it: the
//! [`GaussianSplats`] asset, the [`GaussianCloud`] component that places one, the
//! glTF `GaussianScene` and the component that spawns it (`GaussianSceneRoot`), and
//! [`GaussianSplatPlugin`]. `Splat*` is everything that loads, configures, queries or
//! reports on drawing them: [`SplatLoader`], [`SplatTint`], [`SplatCrop`],
//! [`SplatComposite`], [`SplatRaycast`], [`SplatStats`], … The tool modules
//! ([`asset::formats`], [`cameras`], [`raycast`]'s building blocks, [`gpu_sort`],
//! [`headless`]) name their types within the module, read with its path
//! (`formats::ply::PlyError`, `headless::Headless`). Former names that broke the
//! scheme remain as deprecated aliases.

#![warn(missing_docs)]

pub mod asset;
pub mod cameras;
mod cloud;
mod crop;
pub mod gpu_sort;
#[cfg(not(target_arch = "wasm32"))]
pub mod headless;
mod lighting;
pub mod lod;
#[cfg(feature = "picking")]
pub mod picking;
pub mod raycast;
pub mod render;
#[cfg(feature = "gltf")]
mod scene;
mod shader;
#[cfg(feature = "rad")]
pub mod streaming;
mod systems;
mod tint;

use bevy::app::{App, Plugin, PostUpdate, PreUpdate};
use bevy::asset::AssetApp;
use bevy::camera::visibility::VisibilitySystems;
use bevy::ecs::schedule::IntoScheduleConfigs;

#[cfg(feature = "gltf")]
#[allow(deprecated)]
pub use asset::GltfSplatLoader;
#[cfg(feature = "gltf")]
pub use asset::{GaussianScene, SplatSceneLoader};
pub use asset::{GaussianSplats, SplatLoadError, SplatLoader, SplatLoaderSettings, SplatStorage};
#[allow(deprecated)]
pub use asset::{PlyLoader, PlyLoaderSettings};
pub use cloud::{GaussianCloud, SplatRasterMode};
pub use crop::{MAX_CROP_VOLUMES, SplatCrop, SplatCropMode, SplatCropShape, SplatCropVolume};
pub use lighting::{RedrawSplatShadows, SplatLighting, SplatShadowScale};
pub use lod::SplatLod;
#[cfg(feature = "picking")]
pub use picking::{SplatHit, SplatPickingCamera, SplatPickingPlugin, SplatPickingSettings};
pub use raycast::{SplatRayHit, SplatRaycast, SplatRaycastPlugin, SplatRaycastSettings};
pub use render::{
    SplatComposite, SplatDepth, SplatGpuLimits, SplatLodStats, SplatMemory, SplatPassTimes,
    SplatPipelinesStatus, SplatStats, SplatViewStats,
};
#[cfg(feature = "shadows")]
pub use render::{SplatShadowPassTimes, SplatShadowStats};
#[cfg(feature = "gltf")]
pub use scene::{GaussianSceneRoot, GaussianSceneSpawned};
pub use shader::{SplatShader, SplatShaderAppExt, SplatShaderId, SplatShaderSource, SplatShaders};
pub use systems::SplatSystems;
pub use tint::SplatTint;

/// [`SplatCropVolume`]'s name before the crate's naming scheme.
#[deprecated(note = "renamed to SplatCropVolume")]
pub type CropVolume = SplatCropVolume;
/// [`SplatCropShape`]'s name before the crate's naming scheme.
#[deprecated(note = "renamed to SplatCropShape")]
pub type CropShape = SplatCropShape;
/// [`SplatCropMode`]'s name before the crate's naming scheme.
#[deprecated(note = "renamed to SplatCropMode")]
pub type CropMode = SplatCropMode;

/// Registers the splat asset and its loaders (every splat file format, glTF scenes
/// with the `gltf` feature), the [`GaussianCloud`] component and, where the app
/// renders, the splat render pipeline.
///
/// Its main-world systems run in [`SplatSystems`]; its public components and resources
/// are registered for reflection.
#[derive(Default)]
pub struct GaussianSplatPlugin;

impl Plugin for GaussianSplatPlugin {
    fn build(&self, app: &mut App) {
        // Explicit even though Bevy's `reflect_auto_register` feature would find these
        // types: that feature is optional (this crate builds Bevy without it) and not
        // available on every platform.
        app.register_type::<GaussianCloud>()
            .register_type::<SplatRasterMode>()
            .register_type::<SplatTint>()
            .register_type::<SplatLighting>()
            .register_type::<RedrawSplatShadows>()
            .register_type::<SplatShadowScale>()
            .register_type::<SplatCrop>()
            .register_type::<SplatCropVolume>()
            .register_type::<SplatCropShape>()
            .register_type::<SplatCropMode>()
            .register_type::<SplatShader>()
            .register_type::<SplatShaderId>()
            .register_type::<SplatLod>()
            .init_resource::<SplatShaders>()
            .init_resource::<lod::SplatLodTrees>()
            .add_systems(
                PreUpdate,
                (lod::start_lod_builds, lod::finish_lod_builds)
                    .chain()
                    .in_set(SplatSystems::Lod),
            );
        app.init_asset::<GaussianSplats>()
            .init_asset_loader::<SplatLoader>()
            .configure_sets(
                PostUpdate,
                SplatSystems::Bounds.in_set(VisibilitySystems::CalculateBounds),
            )
            .add_systems(
                PostUpdate,
                cloud::update_cloud_bounds.in_set(SplatSystems::Bounds),
            )
            .add_plugins(render::SplatRenderPlugin);
        #[cfg(feature = "rad")]
        app.register_type::<streaming::SplatStreaming>()
            .register_type::<streaming::SplatStreamingStats>()
            .init_resource::<streaming::SplatStreaming>()
            .init_resource::<streaming::SplatStreamingStats>()
            .init_resource::<streaming::SplatStreams>()
            .add_systems(
                PostUpdate,
                streaming::update_streams
                    .after(bevy::transform::TransformSystems::Propagate)
                    .in_set(SplatSystems::Streaming),
            );
        #[cfg(feature = "gltf")]
        app.register_type::<GaussianSceneRoot>()
            .register_type::<GaussianSceneSpawned>()
            .init_asset::<GaussianScene>()
            .init_asset_loader::<SplatSceneLoader>()
            .add_systems(
                bevy::app::Update,
                scene::spawn_gaussian_scenes.in_set(SplatSystems::SceneSpawn),
            );
    }
}
