//! What the GPU counted in each run of shadow views, shared with the main world.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bevy::ecs::entity::Entity;
use bevy::ecs::prelude::*;
use bevy::ecs::reflect::ReflectResource;
use bevy::reflect::prelude::*;

use crate::render::view::readback::GpuCounts;
use crate::render::view::stats::SplatViewStats;

/// The counts of every shadow view the clouds are drawn into (main world), by the
/// light's entity and Bevy's pass name of the view (`shadow_directional_light_0_cascade_1`,
/// `shadow_point_light_0_+x`, …): what [`SplatStats`](crate::render::SplatStats)
/// holds for a camera (splats, pairs, tiles drawn, bands), a frame or two late. A
/// view that stops drawing splats (its light gone, its clouds out of its frustum)
/// leaves. A directional light's cascades are views of each camera (Bevy fits them to
/// the camera's frustum), under the same names for every camera: [`Self::get`] lists
/// every camera's, [`Self::get_for_camera`] one camera's. A camera's cascades of one
/// light are drawn in one run, each in a cell of one layer, and counted together
/// under the first cascade's name (`…_cascade_0`): a splat two cascades see counts
/// twice.
///
/// Reflected as an opaque value: a copy made through reflection shares the stats.
#[derive(Resource, Clone, Default, Debug, Reflect)]
#[reflect(opaque)]
#[reflect(Resource, Default, Debug, Clone)]
pub struct SplatShadowStats(Arc<Mutex<ShadowViews>>);

/// A light's views by name and the camera (main-world entity) whose cascade a view
/// is; point and spot views belong to no camera.
type ShadowViews = HashMap<Entity, BTreeMap<(String, Option<Entity>), ShadowViewEntry>>;

/// One view's counts, and whether this frame draws it from its kept surface.
#[derive(Clone, Copy, Default, Debug)]
struct ShadowViewEntry {
    stats: SplatViewStats,
    from_kept: bool,
}

/// One shadow view: its light, Bevy's name of it, and the camera whose cascade it is.
pub(crate) type ShadowViewKey = (Entity, String, Option<Entity>);

impl SplatShadowStats {
    /// The latest counts of each of `light`'s shadow views that drew splats, by view
    /// name (in name order: cascades nearest first, a point light's faces by axis;
    /// with several cameras, a directional light's cascades once per camera).
    pub fn get(&self, light: Entity) -> Vec<(String, SplatViewStats)> {
        self.views(light, |_| true)
    }

    /// As [`Self::get`], with a directional light's cascades of `camera` (a main-world
    /// entity) alone: the views drawn for it.
    pub fn get_for_camera(&self, light: Entity, camera: Entity) -> Vec<(String, SplatViewStats)> {
        self.views(light, |of| of.is_none_or(|of| of == camera))
    }

    /// The names of `light`'s shadow views that draw from the copy of their surface
    /// they kept, having not moved (see
    /// [`RedrawSplatShadows`](crate::lighting::RedrawSplatShadows)); a directional
    /// light's cascades once per camera, as in [`Self::get`].
    pub fn drawn_from_kept(&self, light: Entity) -> Vec<String> {
        self.lock()
            .get(&light)
            .map(|views| {
                let kept = views.iter().filter(|(_, entry)| entry.from_kept);
                kept.map(|((name, _), _)| name.clone()).collect()
            })
            .unwrap_or_default()
    }

    fn views(
        &self,
        light: Entity,
        keep: impl Fn(Option<Entity>) -> bool,
    ) -> Vec<(String, SplatViewStats)> {
        self.lock()
            .get(&light)
            .map(|views| {
                let chosen = views.iter().filter(|((_, camera), _)| keep(*camera));
                chosen
                    .map(|((name, _), entry)| (name.clone(), entry.stats))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Takes in the GPU's counts of the bands of the shadow view `view`.
    pub(crate) fn record(&self, (light, name, camera): &ShadowViewKey, counts: &[GpuCounts]) {
        self.lock()
            .entry(*light)
            .or_default()
            .entry((name.clone(), *camera))
            .or_default()
            .stats
            .record(counts);
    }

    /// Notes whether the shadow view `view` draws from its kept surface this frame (a
    /// view is listed once its first counts come back).
    pub(crate) fn set_from_kept(&self, (light, name, camera): &ShadowViewKey, from_kept: bool) {
        let mut lights = self.lock();
        let entry = lights
            .get_mut(light)
            .and_then(|views| views.get_mut(&(name.clone(), *camera)));
        if let Some(entry) = entry {
            entry.from_kept = from_kept;
        }
    }

    /// Keeps only the views in `drawing`.
    pub(crate) fn retain(&self, drawing: &[ShadowViewKey]) {
        let mut lights = self.lock();
        lights.retain(|light, views| {
            views.retain(|(name, camera), _| {
                drawing
                    .iter()
                    .any(|(l, n, c)| l == light && n == name && c == camera)
            });
            !views.is_empty()
        });
    }

    fn lock(&self) -> MutexGuard<'_, ShadowViews> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
