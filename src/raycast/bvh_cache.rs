//! One BVH per loaded splat asset, built on a worker thread when the asset loads (or
//! changes) and dropped with it.

use std::collections::HashMap;
use std::sync::Arc;

use bevy::asset::{AssetEvent, AssetId, Assets};
use bevy::ecs::message::MessageReader;
use bevy::ecs::resource::Resource;
use bevy::ecs::system::{Res, ResMut};
use bevy::math::{Quat, Vec3};
use bevy::tasks::{AsyncComputeTaskPool, Task, block_on, futures_lite::future};

use super::bvh::SplatBvh;
use super::gaussian::SplatShape;
use crate::asset::{GaussianSplats, SplatGeometry};

/// The ray-cast BVHs of the loaded splat assets.
#[derive(Resource, Default)]
pub struct SplatBvhs {
    ready: HashMap<AssetId<GaussianSplats>, Arc<SplatBvh>>,
    building: HashMap<AssetId<GaussianSplats>, Task<SplatBvh>>,
}

impl SplatBvhs {
    /// The BVH of `asset`, once built.
    pub fn get(&self, asset: AssetId<GaussianSplats>) -> Option<&Arc<SplatBvh>> {
        self.ready.get(&asset)
    }

    /// Whether `asset`'s BVH is still being built (ray casts miss it until then).
    pub fn is_building(&self, asset: AssetId<GaussianSplats>) -> bool {
        self.building.contains_key(&asset)
    }
}

/// A splat as the ray cast sees it: the trained values activated (linear scales, a
/// unit quaternion, opacity in 0..1). A zero quaternion stays zero and the splat is
/// left out, as the renderer culls it.
pub fn shape_of(splat: &SplatGeometry) -> SplatShape {
    let [w, x, y, z] = splat.rotation;
    let rotation = Quat::from_xyzw(x, y, z, w);
    let length = rotation.length();
    SplatShape {
        centre: Vec3::from(splat.position),
        scale: Vec3::from(splat.log_scale).exp(),
        rotation: if length > 0.0 && length.is_finite() {
            rotation / length
        } else {
            Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)
        },
        opacity: 1.0 / (1.0 + (-splat.opacity_logit).exp()),
    }
}

/// Starts a build for every asset that loaded or changed; forgets removed ones.
pub fn start_bvh_builds(
    mut events: MessageReader<AssetEvent<GaussianSplats>>,
    assets: Res<Assets<GaussianSplats>>,
    mut bvhs: ResMut<SplatBvhs>,
) {
    for event in events.read() {
        match *event {
            AssetEvent::Added { id } | AssetEvent::Modified { id } => {
                let Some(splats) = assets.get(id) else {
                    continue;
                };
                // Copy out on this thread (48 bytes a splat); activate and build there.
                let geometry = splats.geometry().to_vec();
                let task = AsyncComputeTaskPool::get().spawn(async move {
                    let shapes: Vec<SplatShape> = geometry.iter().map(shape_of).collect();
                    SplatBvh::from_shapes(&shapes)
                });
                // A changed asset's old tree answers no more casts.
                bvhs.ready.remove(&id);
                bvhs.building.insert(id, task);
            }
            AssetEvent::Removed { id } | AssetEvent::Unused { id } => {
                bvhs.ready.remove(&id);
                bvhs.building.remove(&id);
            }
            AssetEvent::LoadedWithDependencies { .. } => {}
        }
    }
}

/// Takes in the builds that finished, without waiting for the others.
pub fn finish_bvh_builds(mut bvhs: ResMut<SplatBvhs>) {
    let mut done = Vec::new();
    for (id, task) in &mut bvhs.building {
        if let Some(bvh) = block_on(future::poll_once(task)) {
            done.push((*id, bvh));
        }
    }
    for (id, bvh) in done {
        bvhs.building.remove(&id);
        bvhs.ready.insert(id, Arc::new(bvh));
    }
}
