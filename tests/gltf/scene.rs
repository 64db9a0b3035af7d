//! glTF scenes through the asset server: one entity per node under the root, one cloud
//! per splat primitive under its node, node transforms as Bevy transforms.

use bevy::prelude::*;
use bevy_splat::{GaussianCloud, GaussianScene, GaussianSceneRoot, GaussianSceneSpawned};
use bevy_splat::{GaussianSplatPlugin, GaussianSplats};

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/formats").into(),
            ..default()
        },
        TransformPlugin,
        GaussianSplatPlugin,
    ));
    app
}

/// Spawns `file` as a scene root and updates until it has spawned.
fn spawn(app: &mut App, file: &str) -> Entity {
    let handle: Handle<GaussianScene> = app.world().resource::<AssetServer>().load(file.to_owned());
    let root = app
        .world_mut()
        .spawn(GaussianSceneRoot(handle.clone()))
        .id();
    for _ in 0..400 {
        app.update();
        if app.world().get::<GaussianSceneSpawned>(root).is_some() {
            // One more frame so the clouds' assets are in place too.
            app.update();
            return root;
        }
        if let Some(bevy::asset::LoadState::Failed(e)) = app
            .world()
            .resource::<AssetServer>()
            .get_load_state(&handle)
        {
            panic!("{file}: {e}");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("{file} did not spawn");
}

fn clouds_under(app: &mut App, root: Entity) -> Vec<(Entity, usize)> {
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if let Some(children) = app.world().get::<Children>(e) {
            stack.extend(children.iter());
        }
        if let Some(cloud) = app.world().get::<GaussianCloud>(e) {
            let len = app
                .world()
                .resource::<Assets<GaussianSplats>>()
                .get(&cloud.0)
                .map_or(0, GaussianSplats::len);
            found.push((e, len));
        }
    }
    found
}

#[test]
fn the_tower_spawns_one_cloud_under_its_turned_node() {
    let mut app = app();
    let root = spawn(&mut app, "tower_legacy_spz.glb");
    let clouds = clouds_under(&mut app, root);
    assert_eq!(clouds.len(), 1);
    assert_eq!(clouds[0].1, 73_172);
    let node = app.world().get::<ChildOf>(clouds[0].0).unwrap().parent();
    let transform = *app.world().get::<Transform>(node).unwrap();
    // The file's matrix: −90° about X (Z-up data to Y-up) and a translation.
    let expected = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    assert!(
        transform.rotation.dot(expected).abs() > 1.0 - 1e-6,
        "{transform:?}"
    );
    assert!((transform.translation - Vec3::new(1.2308, 186.9347, 0.6765)).length() < 1e-3);
    assert_eq!(app.world().get::<ChildOf>(node).unwrap().parent(), root);
}

#[test]
fn every_primitive_of_the_conformance_matrix_gets_a_cloud() {
    let mut app = app();
    let root = spawn(&mut app, "khr_conformance_matrix.glb");
    let clouds = clouds_under(&mut app, root);
    assert_eq!(clouds.len(), 15, "{clouds:?}");
    assert!(clouds.iter().all(|&(_, len)| len == 1));
}

#[test]
fn a_gltf_with_an_external_buffer_loads_it_from_beside_it() {
    let mut app = app();
    let root = spawn(&mut app, "unit_sh_legacy_gltf/UnitSH_legacy.gltf");
    let clouds = clouds_under(&mut app, root);
    assert_eq!(clouds.iter().map(|c| c.1).collect::<Vec<_>>(), vec![9]);
}
