//! `SplatRaycast` in an app: the shipped angel and hand-made clouds, placed by their
//! transforms, hidden or not, composited together along the ray.

use std::time::Duration;

use bevy::camera::visibility::VisibilityPlugin;
use bevy::ecs::system::RunSystemOnce;
use bevy::math::{Dir3, Quat, Ray3d, Vec3};
use bevy::prelude::*;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::asset::formats::ply;
use bevy_splat::raycast::{CastSettings, SplatBvhs};
use bevy_splat::{
    GaussianCloud, GaussianSplatPlugin, GaussianSplats, SplatCrop, SplatCropVolume, SplatRayHit,
    SplatRaycast, SplatRaycastPlugin, SplatRaycastSettings, SplatTint,
};

pub fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin::default(),
        TransformPlugin,
        VisibilityPlugin,
        GaussianSplatPlugin,
        SplatRaycastPlugin,
    ));
    // Visibility's bounds systems read meshes and skins.
    app.init_asset::<Mesh>()
        .init_asset::<bevy::mesh::skinning::SkinnedMeshInverseBindposes>();
    app
}

pub fn angel() -> GaussianSplats {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/angel.ply"))
        .expect("the shipped angel");
    GaussianSplats::from(ply::decode(&bytes).expect("it decodes"))
}

/// One round splat: σ in every direction, opacity as given.
fn ball(centre: Vec3, sigma: f32, opacity: f32) -> SplatGeometry {
    SplatGeometry {
        position: centre.to_array(),
        opacity_logit: (opacity / (1.0 - opacity)).ln(),
        rotation: [1.0, 0.0, 0.0, 0.0],
        log_scale: [sigma.ln(); 3],
        _pad: 0.0,
    }
}

fn splats(geometry: Vec<SplatGeometry>) -> GaussianSplats {
    let count = geometry.len();
    GaussianSplats::new(geometry, vec![0.5; count * 3], 0).expect("valid splats")
}

/// Adds the assets and waits (a bounded number of frames) until their BVHs are built.
pub fn add_and_build(app: &mut App, assets: Vec<GaussianSplats>) -> Vec<Handle<GaussianSplats>> {
    let handles: Vec<_> = assets
        .into_iter()
        .map(|a| {
            app.world_mut()
                .resource_mut::<Assets<GaussianSplats>>()
                .add(a)
        })
        .collect();
    for _ in 0..2000 {
        app.update();
        let bvhs = app.world().resource::<SplatBvhs>();
        if handles.iter().all(|h| bvhs.get(h.id()).is_some()) {
            return handles;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("the BVHs were never built");
}

pub fn cast(app: &mut App, ray: Ray3d, settings: SplatRaycastSettings) -> Option<SplatRayHit> {
    app.world_mut()
        .run_system_once(move |raycast: SplatRaycast| raycast.cast(ray, &settings))
        .expect("the cast runs")
}

fn ray(origin: Vec3, towards: Vec3) -> Ray3d {
    Ray3d::new(origin, Dir3::new(towards - origin).expect("a direction"))
}

#[test]
fn a_placed_angel_is_hit_where_its_own_tree_says() {
    let mut app = app();
    let handle = add_and_build(&mut app, vec![angel()]).remove(0);
    let placement = Transform {
        translation: Vec3::new(2.0, -1.0, 0.5),
        rotation: Quat::from_rotation_y(0.8),
        scale: Vec3::new(1.5, 0.8, 1.2),
    };
    let cloud = app
        .world_mut()
        .spawn((GaussianCloud(handle.clone()), placement))
        .id();
    app.update();
    let bvh = app
        .world()
        .resource::<SplatBvhs>()
        .get(handle.id())
        .expect("built")
        .clone();
    let world_from_local = placement.compute_affine();
    let mut hits = 0;
    for i in 0..60 {
        let t = i as f32 / 60.0;
        let target =
            placement.transform_point(Vec3::new(0.4 * (t * 9.0).sin(), 1.8 * t - 0.2, 0.0));
        let origin = target + Vec3::new(3.0 * (t * 5.0).cos(), 0.5, 3.0 * (t * 5.0).sin());
        let r = ray(origin, target);
        let got = cast(&mut app, r, SplatRaycastSettings::default());
        let want = bvh.cast_transformed(
            world_from_local,
            r.origin,
            *r.direction,
            &CastSettings::default(),
        );
        match (got, want) {
            (Some(got), Some(want)) => {
                hits += 1;
                assert_eq!(got.entity, cloud);
                assert_eq!(got.splat_index, want.splat);
                assert!((got.distance - want.distance).abs() <= 1e-4 * want.distance.max(1.0));
                assert!(got.position.distance(want.position) <= 1e-3);
            }
            (None, None) => {}
            other => panic!("ray {i}: {other:?}"),
        }
    }
    assert!(hits > 30, "most rays aimed at the statue hit it: {hits}");
}

#[test]
fn hidden_clouds_are_passed_through_and_nearer_clouds_win() {
    let mut app = app();
    let handle = add_and_build(&mut app, vec![angel()]).remove(0);
    let near = app
        .world_mut()
        .spawn((
            GaussianCloud(handle.clone()),
            Transform::from_xyz(0.0, 0.0, 2.0),
        ))
        .id();
    let far = app
        .world_mut()
        .spawn((GaussianCloud(handle), Transform::from_xyz(0.0, 0.0, -2.0)))
        .id();
    app.update();
    let r = ray(Vec3::new(-0.2, 0.8, 10.0), Vec3::new(-0.2, 0.8, -10.0));
    let hit = cast(&mut app, r, SplatRaycastSettings::default()).expect("a hit");
    assert_eq!(hit.entity, near);
    app.world_mut().entity_mut(near).insert(Visibility::Hidden);
    app.update();
    let hit = cast(&mut app, r, SplatRaycastSettings::default()).expect("a hit");
    assert_eq!(hit.entity, far, "a hidden cloud is not hit");
    let settings = SplatRaycastSettings {
        include_hidden: true,
        ..default()
    };
    assert_eq!(cast(&mut app, r, settings).map(|h| h.entity), Some(near));
    let settings = SplatRaycastSettings {
        max_distance: 1.0,
        ..default()
    };
    assert_eq!(cast(&mut app, r, settings), None, "nothing within a unit");
}

#[test]
fn clouds_along_one_ray_are_composited_together() {
    // Neither cloud alone stops the ray (0.4 < 0.5), both together do (1 − 0.6² =
    // 0.64): the hit is the second splat along the ray, in the other cloud.
    let mut app = app();
    let handles = add_and_build(
        &mut app,
        vec![
            splats(vec![ball(Vec3::new(0.0, 0.0, 5.0), 0.2, 0.4)]),
            splats(vec![ball(Vec3::new(0.0, 0.0, 6.0), 0.2, 0.4)]),
        ],
    );
    let first = app
        .world_mut()
        .spawn((GaussianCloud(handles[0].clone()), Transform::IDENTITY))
        .id();
    let second = app
        .world_mut()
        .spawn((GaussianCloud(handles[1].clone()), Transform::IDENTITY))
        .id();
    app.update();
    let hit = cast(
        &mut app,
        ray(Vec3::ZERO, Vec3::Z),
        SplatRaycastSettings::default(),
    )
    .expect("the two clouds together stop the ray");
    assert_eq!(hit.entity, second);
    assert_eq!(hit.splat_index, 0);
    assert!((hit.distance - 6.0).abs() < 1e-4, "{hit:?}");
    app.world_mut().despawn(second);
    assert_eq!(
        cast(
            &mut app,
            ray(Vec3::ZERO, Vec3::Z),
            SplatRaycastSettings::default()
        ),
        None,
        "the first alone never reaches the median"
    );
    let settings = SplatRaycastSettings {
        threshold: 0.7,
        ..default()
    };
    let hit = cast(&mut app, ray(Vec3::ZERO, Vec3::Z), settings).expect("at T = 0.6 ≤ 0.7");
    assert_eq!(hit.entity, first);
}

#[test]
fn bad_rays_and_empty_clouds_give_no_hit() {
    let mut app = app();
    let handles = add_and_build(&mut app, vec![angel(), splats(Vec::new())]);
    for handle in handles {
        app.world_mut()
            .spawn((GaussianCloud(handle), Transform::IDENTITY));
    }
    // A cloud placed by a singular transform is skipped, not a NaN.
    let flat = app
        .world_mut()
        .resource_mut::<Assets<GaussianSplats>>()
        .add(angel());
    app.world_mut().spawn((
        GaussianCloud(flat),
        Transform::from_scale(Vec3::new(1.0, 0.0, 1.0)),
    ));
    app.update();
    let towards = Vec3::new(0.0, 0.8, 0.0);
    let good = ray(Vec3::new(0.0, 0.8, 5.0), towards);
    assert!(cast(&mut app, good, SplatRaycastSettings::default()).is_some());
    let nan = Ray3d::new(Vec3::NAN, Dir3::Z);
    assert_eq!(cast(&mut app, nan, SplatRaycastSettings::default()), None);
    for settings in [
        SplatRaycastSettings {
            threshold: f32::NAN,
            ..default()
        },
        SplatRaycastSettings {
            threshold: 0.0,
            ..default()
        },
        SplatRaycastSettings {
            threshold: 1.5,
            ..default()
        },
        SplatRaycastSettings {
            max_distance: f32::NAN,
            ..default()
        },
        SplatRaycastSettings {
            max_distance: -1.0,
            ..default()
        },
    ] {
        assert_eq!(cast(&mut app, good, settings), None, "{settings:?}");
    }
}

#[test]
fn crops_and_tints_apply_to_ray_casts_as_to_drawing() {
    let mut app = app();
    let splats = angel();
    let crop = SplatCrop {
        volumes: vec![SplatCropVolume::cut_box(
            Vec3::new(0.0, 0.2, 0.0),
            Vec3::new(2.0, 0.6, 2.0),
        )],
    };
    // The same cut made to the data, and the same fade.
    let kept: Vec<SplatGeometry> = splats
        .geometry()
        .iter()
        .filter(|g| crop.keeps(Vec3::from(g.position)))
        .copied()
        .collect();
    let faded: Vec<SplatGeometry> = splats
        .geometry()
        .iter()
        .map(|g| SplatGeometry {
            opacity_logit: {
                let opacity = 0.5 / (1.0 + (-g.opacity_logit).exp());
                (opacity / (1.0 - opacity)).ln()
            },
            ..*g
        })
        .collect();
    let handles = add_and_build(
        &mut app,
        vec![splats.clone(), splats_of(&kept), splats_of(&faded)],
    );
    let cropped = app
        .world_mut()
        .spawn((GaussianCloud(handles[0].clone()), crop.clone()))
        .id();
    app.update();
    let mut compared = 0;
    for i in 0..40 {
        let y = -0.3 + 2.2 * i as f32 / 40.0;
        let r = ray(Vec3::new(0.1, y, 4.0), Vec3::new(-0.1, y, -1.0));
        let with_crop = cast(&mut app, r, SplatRaycastSettings::default());
        // The cropped data, alone.
        let visibility = app
            .world_mut()
            .entity_mut(cropped)
            .insert(Visibility::Hidden)
            .id();
        let reference = app
            .world_mut()
            .spawn((GaussianCloud(handles[1].clone()), Transform::IDENTITY))
            .id();
        app.update();
        let expected = cast(&mut app, r, SplatRaycastSettings::default());
        app.world_mut().despawn(reference);
        app.world_mut()
            .entity_mut(visibility)
            .insert(Visibility::Inherited);
        app.update();
        assert_eq!(
            with_crop.map(|h| (h.distance, h.position)),
            expected.map(|h| (h.distance, h.position)),
            "ray {i}"
        );
        if let Some(hit) = with_crop {
            assert!(
                !crop.volumes[0]
                    .contains(splats.geometry()[hit.splat_index as usize].position.into())
            );
            compared += 1;
        }
    }
    assert!(compared > 10, "{compared}");
    app.world_mut().despawn(cropped);

    // A fade scales every opacity: the faded cloud is hit where faded data is.
    let tinted = app
        .world_mut()
        .spawn((GaussianCloud(handles[0].clone()), SplatTint::fade(0.5)))
        .id();
    app.update();
    let r = ray(Vec3::new(-0.2, 0.8, 5.0), Vec3::new(-0.2, 0.8, -5.0));
    let faded_hit = cast(&mut app, r, SplatRaycastSettings::default()).expect("a hit");
    assert_eq!(faded_hit.entity, tinted);
    app.world_mut()
        .entity_mut(tinted)
        .insert(Visibility::Hidden);
    let reference = app
        .world_mut()
        .spawn((GaussianCloud(handles[2].clone()), Transform::IDENTITY))
        .id();
    app.update();
    let expected = cast(&mut app, r, SplatRaycastSettings::default()).expect("a hit");
    assert_eq!(expected.entity, reference);
    assert_eq!(faded_hit.splat_index, expected.splat_index);
    assert!((faded_hit.distance - expected.distance).abs() < 1e-4);
    app.world_mut().despawn(reference);
    app.world_mut()
        .entity_mut(tinted)
        .insert((Visibility::Inherited, SplatTint::fade(0.0)));
    app.update();
    assert_eq!(
        cast(&mut app, r, SplatRaycastSettings::default()),
        None,
        "a cloud faded out is not hit"
    );
}

fn splats_of(geometry: &[SplatGeometry]) -> GaussianSplats {
    splats(geometry.to_vec())
}
