//! The PLY decoder (`bevy_splat::asset::formats::ply`): real files, the three encodings of the
//! same splats, malformed input, and NaN/Inf handling. Inputs that fuzzing (fuzz/)
//! finds to crash or hang go at the end as regression tests.

use bevy_splat::asset::DecodedSplats;
use bevy_splat::asset::formats::ply::decode;

mod compressed;
mod encodings;
mod malformed;
mod real_files;

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn load(name: &str) -> DecodedSplats {
    decode(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

// ---------------------------------------------------------------------------------
// Regressions found by fuzzing: none so far (fuzz/README.md says how to run it).

/// The plugin in an app without a renderer (a server, an asset tool): the PLY loads as
/// an asset through the asset server, and clouds spawn and despawn as plain entities.
#[test]
fn the_plugin_loads_clouds_without_a_renderer() {
    use bevy::prelude::*;
    use bevy_splat::{GaussianCloud, GaussianSplatPlugin, GaussianSplats};

    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data").into(),
            ..default()
        },
        TransformPlugin,
        GaussianSplatPlugin,
    ));
    let handle: Handle<GaussianSplats> = app
        .world()
        .resource::<AssetServer>()
        .load("train_3pts_sh3.ply");
    let entity = app.world_mut().spawn(GaussianCloud(handle.clone())).id();
    for _ in 0..200 {
        app.update();
        if app
            .world()
            .resource::<Assets<GaussianSplats>>()
            .contains(&handle)
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let splats = app
        .world()
        .resource::<Assets<GaussianSplats>>()
        .get(&handle)
        .map(|s| (s.len(), s.sh_degree()));
    assert_eq!(splats, Some((3, 3)));
    app.world_mut().despawn(entity);
    app.update();
}
