//! Pointer picking of clouds through Bevy's picking (`bevy_picking`): with
//! [`SplatPickingPlugin`], `Pointer<Over>`, `Pointer<Click>`, `Pointer<Drag>` … reach
//! cloud entities as they reach meshes.
//!
//! A pointer hits a cloud where the plugin's one surface lies: the depth at which the
//! front-to-back transmittance, composited exactly as the tile render draws the pixel,
//! first falls to 0.5 (see `docs/SURFACE.md`). The GPU finds it from the frame's own
//! tile data (`render/passes/pick.rs`), so what is picked is what is seen at any scene
//! size; the answer comes back a frame or two late and never stalls a frame.
//!
//! - `backend`: the picking backend (pointer pixels to the GPU, answers to
//!   `PointerHits`);
//! - `hit`: [`SplatHit`], the splat-specific data on each hit;
//! - `settings`: which cameras pick ([`SplatPickingSettings`], [`SplatPickingCamera`]).

mod backend;
mod hit;
mod settings;

use bevy::app::{App, Plugin, PreUpdate};
use bevy::ecs::prelude::*;
use bevy::picking::PickingSystems;

use crate::systems::SplatSystems;

pub use hit::SplatHit;
pub use settings::{SplatPickingCamera, SplatPickingSettings};

/// Makes clouds pickable by pointers: a picking backend for `bevy_picking`. Needs
/// Bevy's `PickingPlugin` (in `DefaultPlugins` with the `bevy_picking` feature) and
/// [`GaussianSplatPlugin`](crate::GaussianSplatPlugin).
///
/// Clouds opt out with `Pickable::IGNORE`, like meshes (pointers then see the clouds
/// behind them). Hits are ordered against other backends' by their depth along the
/// pointer's ray, so meshes in front of a cloud win and clouds in front of meshes win.
#[derive(Default)]
pub struct SplatPickingPlugin;

impl Plugin for SplatPickingPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<SplatPickingSettings>()
            .register_type::<SplatPickingCamera>()
            .register_type::<SplatHit>()
            .init_resource::<SplatPickingSettings>()
            .init_resource::<backend::PickLedger>()
            .configure_sets(
                PreUpdate,
                SplatSystems::Picking.in_set(PickingSystems::Backend),
            )
            .add_systems(
                PreUpdate,
                backend::splat_picking.in_set(SplatSystems::Picking),
            );
    }
}
