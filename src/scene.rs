//! Spawning a [`GaussianScene`]: one entity per node under the root, one
//! [`GaussianCloud`] per splat primitive under its node, the way Bevy's glTF scenes
//! give one entity per mesh primitive.

use bevy::asset::{Assets, Handle};
use bevy::camera::visibility::Visibility;
use bevy::ecs::name::Name;
use bevy::ecs::prelude::*;
use bevy::reflect::prelude::*;
use bevy::transform::components::Transform;

use crate::asset::GaussianScene;
use crate::cloud::GaussianCloud;

/// Spawns a glTF splat scene under this entity once it has loaded:
/// `commands.spawn(GaussianSceneRoot(assets.load("scene.glb")))`.
#[derive(Component, Clone, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
#[require(Transform, Visibility)]
pub struct GaussianSceneRoot(pub Handle<GaussianScene>);

/// Marks a root whose scene has been spawned, and holds what it spawned.
#[derive(Component, Clone, Debug, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, Clone, PartialEq)]
pub struct GaussianSceneSpawned {
    /// The entity of each node, in [`GaussianScene::nodes`] order. Mapped like
    /// `Children` when the root is saved in or spawned from a Bevy scene.
    #[entities]
    pub nodes: Vec<Entity>,
}

pub(crate) fn spawn_gaussian_scenes(
    mut commands: Commands,
    scenes: Res<Assets<GaussianScene>>,
    roots: Query<(Entity, &GaussianSceneRoot), Without<GaussianSceneSpawned>>,
) {
    for (root, GaussianSceneRoot(handle)) in &roots {
        let Some(scene) = scenes.get(handle) else {
            continue;
        };
        let nodes: Vec<Entity> = scene
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| {
                let name = node.name.clone().unwrap_or_else(|| format!("node {i}"));
                commands
                    .spawn((Name::new(name), node.transform, Visibility::default()))
                    .id()
            })
            .collect();
        for (i, node) in scene.nodes.iter().enumerate() {
            let entity = nodes[i];
            for child in node.children.iter().filter_map(|&c| nodes.get(c)) {
                commands.entity(entity).add_child(*child);
            }
            for (p, cloud) in node.clouds.iter().enumerate() {
                let cloud = commands
                    .spawn((
                        Name::new(format!("splats {p}")),
                        GaussianCloud(cloud.clone()),
                        Transform::IDENTITY,
                    ))
                    .id();
                commands.entity(entity).add_child(cloud);
            }
        }
        for &r in &scene.roots {
            if let Some(&node) = nodes.get(r) {
                commands.entity(root).add_child(node);
            }
        }
        commands.entity(root).insert(GaussianSceneSpawned { nodes });
    }
}
