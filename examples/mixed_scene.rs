//! Splats among lit meshes: a cube sweeps through the angel scan, a second copy of the
//! scan overlaps the first (their splats sort together), and a ground plane and a
//! sphere stand in front and behind.
//!
//! ```text
//! cargo run --release --example mixed_scene
//! ```

use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::prelude::*;
use bevy_panorbit_camera::{PanOrbitCamera, PanOrbitCameraPlugin};
use bevy_splat::{GaussianCloud, GaussianSplatPlugin};

#[derive(Component)]
struct Sweeping;

fn main() -> AppExit {
    App::new()
        .add_plugins((DefaultPlugins, GaussianSplatPlugin, PanOrbitCameraPlugin))
        .insert_resource(ClearColor(Color::srgb(0.55, 0.62, 0.72)))
        .add_systems(Startup, setup)
        .add_systems(Update, sweep)
        .run()
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let angel = assets.load("angel.ply");
    commands.spawn((GaussianCloud(angel.clone()), Transform::default()));
    commands.spawn((
        GaussianCloud(angel),
        Transform::from_xyz(1.3, 0.0, -1.2).with_rotation(Quat::from_rotation_y(2.4)),
    ));

    commands.spawn((
        Sweeping,
        Mesh3d(meshes.add(Cuboid::new(0.4, 0.4, 0.4))),
        MeshMaterial3d(materials.add(Color::srgb(0.9, 0.3, 0.2))),
        Transform::default(),
    ));
    commands.spawn((
        Mesh3d(meshes.add(Sphere::new(0.3))),
        MeshMaterial3d(materials.add(Color::srgb(0.2, 0.5, 0.9))),
        Transform::from_xyz(-1.3, -0.2, 1.2),
    ));
    commands.spawn((
        Mesh3d(meshes.add(Plane3d::default().mesh().size(12.0, 12.0))),
        MeshMaterial3d(materials.add(Color::srgb(0.35, 0.4, 0.35))),
        Transform::from_xyz(0.0, -1.05, 0.0),
    ));
    commands.spawn((
        DirectionalLight {
            illuminance: 8_000.0,
            shadow_maps_enabled: true,
            ..default()
        },
        Transform::from_xyz(3.0, 6.0, 2.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.spawn((
        Camera3d::default(),
        Tonemapping::None,
        Transform::from_xyz(0.4, 1.4, 6.0).looking_at(Vec3::new(0.4, 0.5, 0.0), Vec3::Y),
        PanOrbitCamera {
            focus: Vec3::new(0.4, 0.5, 0.0),
            ..default()
        },
    ));
}

/// The cube passes back and forth through the clouds.
fn sweep(time: Res<Time>, mut cubes: Query<&mut Transform, With<Sweeping>>) {
    let t = time.elapsed_secs();
    for mut transform in &mut cubes {
        transform.translation = Vec3::new(1.2 * (0.6 * t).sin(), 0.9, 0.15 * (0.9 * t).cos());
        transform.rotation = Quat::from_rotation_y(t) * Quat::from_rotation_x(0.5 * t);
    }
}
