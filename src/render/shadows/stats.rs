//! What the GPU counted in each shadow view, shared with the main world.

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
/// leaves. A directional light's cascades are drawn per camera under one name each,
/// so with several cameras an entry holds the latest camera's cascade.
///
/// Reflected as an opaque value: a copy made through reflection shares the stats.
#[derive(Resource, Clone, Default, Debug, Reflect)]
#[reflect(opaque)]
#[reflect(Resource, Default, Debug, Clone)]
pub struct SplatShadowStats(Arc<Mutex<ShadowViews>>);

type ShadowViews = HashMap<Entity, BTreeMap<String, SplatViewStats>>;

impl SplatShadowStats {
    /// The latest counts of each of `light`'s shadow views that drew splats, by view
    /// name (in name order: cascades nearest first, a point light's faces by axis).
    pub fn get(&self, light: Entity) -> Vec<(String, SplatViewStats)> {
        self.lock()
            .get(&light)
            .map(|views| views.iter().map(|(name, s)| (name.clone(), *s)).collect())
            .unwrap_or_default()
    }

    /// Takes in the GPU's counts of the bands of `light`'s view `view`.
    pub(crate) fn record(&self, light: Entity, view: &str, counts: &[GpuCounts]) {
        self.lock()
            .entry(light)
            .or_default()
            .entry(view.to_owned())
            .or_default()
            .record(counts);
    }

    /// Keeps only the views in `drawing` (light, view name).
    pub(crate) fn retain(&self, drawing: &[(Entity, String)]) {
        let mut lights = self.lock();
        lights.retain(|light, views| {
            views.retain(|name, _| drawing.iter().any(|(l, n)| l == light && n == name));
            !views.is_empty()
        });
    }

    fn lock(&self) -> MutexGuard<'_, ShadowViews> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
