//! Picks in a scene: clouds ordered by depth, `Pickable::IGNORE`, tints, crops, meshes
//! in front of and behind a cloud, and a click reaching a cloud's observer.

use std::sync::{Arc, Mutex};

use bevy::picking::Pickable;
use bevy::picking::events::{Click, Pointer};
use bevy::picking::pointer::{PointerAction, PointerButton, PointerInput};
use bevy::prelude::*;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::headless::{Headless, HeadlessCamera};
use bevy_splat::{GaussianSplats, SplatCrop, SplatCropVolume, SplatHit, SplatTint};

use crate::pointers::{
    hovered, location, picking_app, pointer_id, settle, spawn_pointers, splat_hit,
};

const SIZE: UVec2 = UVec2::new(96, 64);
/// The image's centre and a pixel near its left edge.
const CENTRE: UVec2 = UVec2::new(48, 32);
const LEFT: UVec2 = UVec2::new(20, 32);

/// A dense wall of near-opaque splats across the view at depth `z` (the camera sits at
/// the origin looking down −Z).
fn wall(z: f32) -> GaussianSplats {
    let mut geometry = Vec::new();
    for i in 0..48 {
        for j in 0..32 {
            geometry.push(SplatGeometry {
                position: [
                    (i as f32 - 23.5) * 0.1 * -z / 5.0,
                    (j as f32 - 15.5) * 0.1 * -z / 5.0,
                    z,
                ],
                opacity_logit: 3.0,
                rotation: [1.0, 0.0, 0.0, 0.0],
                log_scale: [(0.08 * -z / 5.0).ln(); 3],
                _pad: 0.0,
            });
        }
    }
    let count = geometry.len();
    GaussianSplats::new(geometry, vec![0.5; count * 3], 0).expect("valid splats")
}

fn scene() -> (Headless, HeadlessCamera) {
    let mut headless = picking_app();
    let camera = headless.spawn_camera(
        Transform::IDENTITY,
        PerspectiveProjection {
            fov: 0.8,
            aspect_ratio: SIZE.x as f32 / SIZE.y as f32,
            near: 0.05,
            ..default()
        },
        SIZE,
        None,
    );
    (headless, camera)
}

fn spawn_wall(headless: &mut Headless, z: f32) -> Entity {
    let handle = headless.add_splats(wall(z));
    headless.spawn_cloud(handle, Transform::IDENTITY)
}

fn hovered_entities(headless: &Headless, n: usize) -> Vec<Entity> {
    hovered(headless, n).into_iter().map(|(e, _)| e).collect()
}

#[test]
fn the_nearest_cloud_is_hit_and_ignored_clouds_are_seen_through() {
    let (mut headless, camera) = scene();
    let front = spawn_wall(&mut headless, -3.0);
    let back = spawn_wall(&mut headless, -5.0);
    spawn_pointers(&mut headless, &camera, &[CENTRE]);
    settle(&mut headless, &camera, 1);
    let hit = splat_hit(&headless, 0).expect("a hit");
    assert_eq!(hit.cloud, front);
    assert!((hit.view_depth - 3.0).abs() < 0.05, "{hit:?}");
    assert!((hit.position.z + 3.0).abs() < 0.05, "{hit:?}");
    // The front wall blocks what is behind it, as an opaque mesh would.
    assert_eq!(hovered_entities(&headless, 0), vec![front]);

    headless
        .app
        .world_mut()
        .entity_mut(front)
        .insert(Pickable::IGNORE);
    settle(&mut headless, &camera, 1);
    let hit = splat_hit(&headless, 0).expect("a hit behind");
    assert_eq!(hit.cloud, back);
    assert!((hit.view_depth - 5.0).abs() < 0.08, "{hit:?}");
}

#[test]
fn a_faded_out_cloud_picks_nothing() {
    let (mut headless, camera) = scene();
    let front = spawn_wall(&mut headless, -3.0);
    spawn_pointers(&mut headless, &camera, &[CENTRE]);
    settle(&mut headless, &camera, 1);
    assert_eq!(splat_hit(&headless, 0).map(|h| h.cloud), Some(front));

    headless
        .app
        .world_mut()
        .entity_mut(front)
        .insert(SplatTint::fade(0.0));
    // Nothing drawn: the camera reports no frames, so settle on frames alone.
    for _ in 0..12 {
        headless.app.update();
    }
    assert_eq!(hovered(&headless, 0).len(), 0);

    // Half faded: still a surface where the wall is dense enough.
    headless
        .app
        .world_mut()
        .entity_mut(front)
        .insert(SplatTint::fade(0.9));
    settle(&mut headless, &camera, 1);
    assert_eq!(splat_hit(&headless, 0).map(|h| h.cloud), Some(front));
}

#[test]
fn a_crop_cuts_the_pick_where_it_cuts_the_image() {
    let (mut headless, camera) = scene();
    let front = spawn_wall(&mut headless, -3.0);
    let back = spawn_wall(&mut headless, -5.0);
    // Cut a box out of the front wall's middle.
    headless
        .app
        .world_mut()
        .entity_mut(front)
        .insert(SplatCrop {
            volumes: vec![SplatCropVolume::cut_box(
                Vec3::new(0.0, 0.0, -3.0),
                Vec3::new(0.5, 0.5, 0.5),
            )],
        });
    spawn_pointers(&mut headless, &camera, &[CENTRE, LEFT]);
    settle(&mut headless, &camera, 2);
    assert_eq!(splat_hit(&headless, 0).map(|h| h.cloud), Some(back));
    assert_eq!(splat_hit(&headless, 1).map(|h| h.cloud), Some(front));
}

fn spawn_square(headless: &mut Headless, z: f32) -> Entity {
    let world = headless.app.world_mut();
    let mesh = world
        .resource_mut::<Assets<Mesh>>()
        .add(Rectangle::new(0.6, 0.6));
    let material = world
        .resource_mut::<Assets<StandardMaterial>>()
        .add(StandardMaterial::from_color(Color::WHITE));
    world
        .spawn((
            Mesh3d(mesh),
            MeshMaterial3d(material),
            Transform::from_xyz(0.0, 0.0, z),
        ))
        .id()
}

#[test]
fn meshes_and_clouds_are_ordered_by_depth() {
    let (mut headless, camera) = scene();
    let wall = spawn_wall(&mut headless, -4.0);
    let near = spawn_square(&mut headless, -2.0);
    spawn_pointers(&mut headless, &camera, &[CENTRE, LEFT]);
    settle(&mut headless, &camera, 2);
    // In front of the wall the square wins; beside it, the wall.
    assert_eq!(hovered_entities(&headless, 0), vec![near]);
    assert_eq!(hovered_entities(&headless, 1), vec![wall]);

    headless
        .app
        .world_mut()
        .entity_mut(near)
        .insert(Transform::from_xyz(0.0, 0.0, -6.0));
    settle(&mut headless, &camera, 2);
    assert_eq!(hovered_entities(&headless, 0), vec![wall]);
}

#[test]
fn a_click_reaches_the_cloud_with_its_surface_point() {
    let (mut headless, camera) = scene();
    let cloud = spawn_wall(&mut headless, -3.0);
    let clicks: Arc<Mutex<Vec<(Entity, Option<Vec3>, Option<SplatHit>)>>> = Arc::default();
    let sink = clicks.clone();
    headless
        .app
        .world_mut()
        .entity_mut(cloud)
        .observe(move |click: On<Pointer<Click>>| {
            if let Ok(mut clicks) = sink.lock() {
                clicks.push((
                    click.entity,
                    click.hit.position,
                    click.hit.extra_as::<SplatHit>().copied(),
                ));
            }
        });
    spawn_pointers(&mut headless, &camera, &[CENTRE]);
    settle(&mut headless, &camera, 1);

    let at = location(&camera, CENTRE);
    for action in [
        PointerAction::Press(PointerButton::Primary),
        PointerAction::Release(PointerButton::Primary),
    ] {
        headless.app.world_mut().write_message(PointerInput::new(
            pointer_id(0),
            at.clone(),
            action,
        ));
        headless.app.update();
    }
    let clicks = clicks.lock().expect("the clicks").clone();
    assert_eq!(clicks.len(), 1, "{clicks:?}");
    let (entity, position, hit) = clicks[0];
    assert_eq!(entity, cloud);
    let position = position.expect("a surface point");
    assert!((position.z + 3.0).abs() < 0.05, "{position}");
    let hit = hit.expect("the splat's data");
    assert_eq!(hit.position, position);
    assert!((hit.splat_index as usize) < 48 * 32);
}

#[test]
fn an_empty_cloud_and_a_pointer_off_the_image_hit_nothing() {
    let (mut headless, camera) = scene();
    let empty = GaussianSplats::new(Vec::new(), Vec::new(), 0).expect("an empty cloud");
    let empty = headless.add_splats(empty);
    headless.spawn_cloud(empty, Transform::from_xyz(0.0, 0.0, -1.0));
    let wall = spawn_wall(&mut headless, -4.0);
    // The second pointer lies outside the camera's image: it casts no ray.
    spawn_pointers(&mut headless, &camera, &[CENTRE, UVec2::new(500, 500)]);
    settle(&mut headless, &camera, 2);
    assert_eq!(splat_hit(&headless, 0).map(|h| h.cloud), Some(wall));
    assert!(hovered(&headless, 1).is_empty());
}
