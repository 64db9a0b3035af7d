//! One level-of-detail tree per splat asset, built on a worker thread once a camera
//! asks for level of detail, and dropped with the asset.

use std::collections::HashMap;
use std::sync::Arc;

use bevy::asset::{AssetEvent, AssetId, Assets};
use bevy::ecs::message::MessageReader;
use bevy::ecs::prelude::*;
use bevy::tasks::{AsyncComputeTaskPool, Task, block_on, futures_lite::future};

use super::settings::SplatLod;
use super::spheres::LodSpheres;
use super::tree::SplatLodTree;
use crate::asset::GaussianSplats;

/// A cloud's level of detail: its tree, the spheres its cut is chosen by, and its
/// interior nodes as splats in the asset's own storage layout (what the GPU draws).
#[derive(Debug)]
pub struct CloudLod {
    /// The tree: leaves, interior nodes, parents and children.
    pub tree: SplatLodTree,
    /// Every node's bounding sphere, as the cut measures it.
    pub spheres: LodSpheres,
    /// The interior nodes as an asset of their own (not added to `Assets`).
    pub interior: GaussianSplats,
}

impl CloudLod {
    /// The level of detail of `splats` (the file's own tree, if it brought one, else
    /// one built): `None` for a cloud too small to have interior nodes.
    pub fn build(splats: &GaussianSplats) -> Option<Self> {
        // A tree the file brought is taken as it is; one that does not fit is rebuilt.
        let tree = splats
            .file_tree()
            .and_then(|file| SplatLodTree::from_file(file, splats))
            .unwrap_or_else(|| SplatLodTree::build(splats));
        if tree.interior().is_empty() {
            return None;
        }
        let spheres = LodSpheres::new(&tree, splats);
        let interior = GaussianSplats::new(
            tree.interior().to_vec(),
            tree.interior_sh().to_vec(),
            splats.sh_degree(),
        )?
        .with_storage(splats.storage())
        .with_antialiased(splats.antialiased());
        Some(Self {
            tree,
            spheres,
            interior,
        })
    }

    /// Bytes held on the CPU.
    pub fn heap_bytes(&self) -> usize {
        self.tree.heap_bytes()
            + self.spheres.heap_bytes()
            + self.interior.len() * size_of::<crate::asset::SplatGeometry>()
            + self.interior.sh().len() * 4
    }
}

/// The level-of-detail trees of the loaded splat assets. Trees are built only while
/// some camera (or light, for its shadow views) has [`SplatLod`]: an app that never
/// asks pays nothing.
#[derive(Resource, Default)]
pub struct SplatLodTrees {
    ready: HashMap<AssetId<GaussianSplats>, Arc<CloudLod>>,
    building: HashMap<AssetId<GaussianSplats>, Task<Option<CloudLod>>>,
    /// Assets whose build found nothing to build (a single splat).
    without: Vec<AssetId<GaussianSplats>>,
    /// Bumped whenever a tree is added or dropped, so the render world copies the map
    /// only when it changed.
    generation: u64,
}

impl SplatLodTrees {
    /// The level of detail of `asset`, once built.
    pub fn get(&self, asset: AssetId<GaussianSplats>) -> Option<&Arc<CloudLod>> {
        self.ready.get(&asset)
    }

    /// Whether `asset`'s tree is still being built (its clouds are drawn whole).
    pub fn is_building(&self, asset: AssetId<GaussianSplats>) -> bool {
        self.building.contains_key(&asset)
    }

    /// Every tree built, by asset.
    pub fn iter(&self) -> impl Iterator<Item = (AssetId<GaussianSplats>, &Arc<CloudLod>)> {
        self.ready.iter().map(|(id, lod)| (*id, lod))
    }

    /// Changes with every tree added or dropped.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    fn forget(&mut self, id: AssetId<GaussianSplats>) {
        if self.ready.remove(&id).is_some() {
            self.generation += 1;
        }
        self.building.remove(&id);
        self.without.retain(|other| *other != id);
    }
}

/// Forgets the trees of changed and removed assets, and, while a camera or a light
/// has [`SplatLod`], starts a build for every asset without a tree.
pub fn start_lod_builds(
    mut events: MessageReader<AssetEvent<GaussianSplats>>,
    assets: Res<Assets<GaussianSplats>>,
    wanted: Query<(), With<SplatLod>>,
    mut trees: ResMut<SplatLodTrees>,
) {
    for event in events.read() {
        match *event {
            AssetEvent::Modified { id }
            | AssetEvent::Removed { id }
            | AssetEvent::Unused { id } => {
                trees.forget(id);
            }
            AssetEvent::Added { .. } | AssetEvent::LoadedWithDependencies { .. } => {}
        }
    }
    if wanted.is_empty() {
        return;
    }
    for (id, splats) in assets.iter() {
        if trees.ready.contains_key(&id) || trees.building.contains_key(&id) {
            continue;
        }
        if trees.without.contains(&id) {
            continue;
        }
        // The build reads the whole asset: a copy moves to the worker (freed when done).
        let splats = splats.clone();
        let task = AsyncComputeTaskPool::get().spawn(async move { CloudLod::build(&splats) });
        trees.building.insert(id, task);
    }
}

/// Takes in the builds that finished, without waiting for the others.
pub fn finish_lod_builds(mut trees: ResMut<SplatLodTrees>) {
    let mut done = Vec::new();
    for (id, task) in &mut trees.building {
        if let Some(lod) = block_on(future::poll_once(task)) {
            done.push((*id, lod));
        }
    }
    for (id, lod) in done {
        trees.building.remove(&id);
        match lod {
            Some(lod) => {
                trees.ready.insert(id, Arc::new(lod));
                trees.generation += 1;
            }
            None => trees.without.push(id),
        }
    }
}
