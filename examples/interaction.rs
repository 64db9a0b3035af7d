//! Splats as game objects: the angel scan fades in, hovering it highlights it, clicking
//! it prints the surface point and drops a marker there, and `C` toggles a crop box
//! that cuts its plinth away. A cube beside it is picked by Bevy's mesh backend, so
//! whichever is nearer under the pointer wins.
//!
//! ```text
//! cargo run --release --example interaction
//! ```
//!
//! Drag to orbit, right-drag to pan, scroll to zoom.

use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::picking::events::{Click, Out, Over, Pointer};
use bevy::prelude::*;
use bevy_panorbit_camera::{PanOrbitCamera, PanOrbitCameraPlugin};
use bevy_splat::{
    GaussianCloud, GaussianSplatPlugin, GaussianSplats, SplatCrop, SplatCropVolume, SplatHit,
    SplatPickingPlugin, SplatTint,
};

/// Seconds the angel takes to fade in once it has loaded.
const FADE_SECONDS: f32 = 1.0;
/// Colour multiplier while a pointer is over the angel.
const HIGHLIGHT: Vec3 = Vec3::new(1.35, 1.15, 0.7);
/// The plinth the statue stands on, in the scan's own frame (y from −1.75 to its top
/// at 0.03; the statue's round base starts above it): the crop box cuts it.
const PLINTH_CENTRE: Vec3 = Vec3::new(0.0, -0.905, -0.025);
const PLINTH_HALF_SIZE: Vec3 = Vec3::new(0.85, 0.945, 0.7);

/// The angel's look: how far it has faded in, and whether a pointer is over it.
#[derive(Component, Default)]
struct Appearance {
    /// Seconds since the asset loaded; `None` while it loads.
    shown_for: Option<f32>,
    hovered: bool,
}

#[derive(Component)]
struct Status;

fn main() -> AppExit {
    App::new()
        .add_plugins((
            DefaultPlugins,
            MeshPickingPlugin,
            GaussianSplatPlugin,
            SplatPickingPlugin,
            PanOrbitCameraPlugin,
        ))
        .insert_resource(ClearColor(Color::srgb(0.08, 0.09, 0.11)))
        .add_systems(Startup, setup)
        .add_systems(Update, (fade_and_highlight, toggle_crop))
        .run()
}

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    commands
        .spawn((
            GaussianCloud(assets.load("angel.ply")),
            Transform::default(),
            Appearance::default(),
            SplatTint::fade(0.0),
        ))
        .observe(
            |over: On<Pointer<Over>>, mut angels: Query<&mut Appearance>| {
                if let Ok(mut appearance) = angels.get_mut(over.entity) {
                    appearance.hovered = true;
                }
            },
        )
        .observe(
            |out: On<Pointer<Out>>, mut angels: Query<&mut Appearance>| {
                if let Ok(mut appearance) = angels.get_mut(out.entity) {
                    appearance.hovered = false;
                }
            },
        )
        .observe(on_click);

    commands
        .spawn((
            Mesh3d(meshes.add(Cuboid::new(0.5, 0.5, 0.5))),
            MeshMaterial3d(materials.add(Color::srgb(0.85, 0.35, 0.2))),
            Transform::from_xyz(1.3, 0.35, 0.3),
        ))
        .observe(|click: On<Pointer<Click>>| {
            println!("click on the cube at {:?}", click.hit.position);
        });
    commands.spawn((
        DirectionalLight {
            illuminance: 6_000.0,
            ..default()
        },
        Transform::from_xyz(3.0, 6.0, 2.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.spawn((
        Camera3d::default(),
        Tonemapping::None,
        Transform::from_xyz(0.9, 1.2, 5.2).looking_at(Vec3::new(0.2, 0.2, 0.0), Vec3::Y),
        PanOrbitCamera {
            focus: Vec3::new(0.2, 0.2, 0.0),
            ..default()
        },
    ));
    commands.spawn((
        Status,
        Text::new("Hover and click the angel; C toggles the plinth's crop box"),
        Node {
            position_type: PositionType::Absolute,
            left: px(12),
            top: px(12),
            ..default()
        },
    ));
}

/// Prints the surface point under the pointer and leaves a small sphere there.
fn on_click(
    click: On<Pointer<Click>>,
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut status: Query<&mut Text, With<Status>>,
) {
    let Some(hit) = click.hit.extra_as::<SplatHit>() else {
        return;
    };
    let message = format!(
        "click on the angel: splat {} at ({:.3}, {:.3}, {:.3}), {:.3} from the camera",
        hit.splat_index, hit.position.x, hit.position.y, hit.position.z, hit.distance
    );
    println!("{message}");
    if let Ok(mut text) = status.single_mut() {
        text.0 = message;
    }
    commands.spawn((
        Mesh3d(meshes.add(Sphere::new(0.03))),
        // Drawn in the transparent pass: an opaque marker would hide the splats under
        // the pointer, from the eye and so from picks (they stop at the opaque depth).
        MeshMaterial3d(materials.add(StandardMaterial {
            base_color: Color::srgba(0.2, 0.9, 0.4, 0.9),
            alpha_mode: AlphaMode::Blend,
            unlit: true,
            ..default()
        })),
        Transform::from_translation(hit.position),
        bevy::picking::Pickable::IGNORE,
    ));
}

/// Fades the angel in once it has loaded and brightens it while it is hovered.
fn fade_and_highlight(
    time: Res<Time>,
    splats: Res<Assets<GaussianSplats>>,
    mut angels: Query<(&GaussianCloud, &mut Appearance, &mut SplatTint)>,
) {
    for (cloud, mut appearance, mut tint) in &mut angels {
        if appearance.shown_for.is_none() && splats.contains(&cloud.0) {
            appearance.shown_for = Some(0.0);
        }
        let Some(shown_for) = appearance.shown_for.map(|t| t + time.delta_secs()) else {
            continue;
        };
        appearance.shown_for = Some(shown_for);
        let target = SplatTint {
            rgb: if appearance.hovered {
                HIGHLIGHT
            } else {
                Vec3::ONE
            },
            opacity: (shown_for / FADE_SECONDS).min(1.0),
        };
        if *tint != target {
            *tint = target;
        }
    }
}

/// `C` cuts the plinth away, or puts it back.
fn toggle_crop(
    keys: Res<ButtonInput<KeyCode>>,
    mut commands: Commands,
    angels: Query<(Entity, Has<SplatCrop>), With<Appearance>>,
) {
    if !keys.just_pressed(KeyCode::KeyC) {
        return;
    }
    for (angel, cropped) in &angels {
        if cropped {
            commands.entity(angel).remove::<SplatCrop>();
        } else {
            commands.entity(angel).insert(SplatCrop {
                volumes: vec![SplatCropVolume::cut_box(PLINTH_CENTRE, PLINTH_HALF_SIZE)],
            });
        }
    }
}
