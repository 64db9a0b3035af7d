//! Only cameras that draw splats get a bindable depth texture (the tile render reads
//! the opaque depth): a camera whose `RenderLayers` leave the cloud out keeps Bevy's
//! attachment-only depth, and a camera that has seen a cloud stays readable when the
//! cloud leaves its view (so its depth texture is not reallocated each time).
//! Lavapipe.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

mod common;

use bevy::camera::visibility::RenderLayers;
use bevy::math::UVec2;
use bevy::prelude::*;
use bevy::render::render_resource::TextureUsages;
use bevy::render::sync_world::MainEntity;
use bevy::render::view::ViewDepthTexture;
use bevy::render::{Render, RenderApp, RenderSystems};
use bevy_splat::GaussianSplats;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::headless::Headless;

const SIZE: UVec2 = UVec2::new(32, 32);

fn one_splat() -> GaussianSplats {
    GaussianSplats::new(
        vec![SplatGeometry {
            position: [0.0, 0.0, 0.0],
            opacity_logit: 3.0,
            rotation: [1.0, 0.0, 0.0, 0.0],
            log_scale: [0.3f32.ln(); 3],
            _pad: 0.0,
        }],
        vec![1.0, 0.5, 0.2],
        0,
    )
    .expect("a valid splat")
}

/// The usage of each camera's depth texture in the latest frame, by main-world camera:
/// written by a render-world system (the render world runs on its own thread).
#[derive(Resource, Clone, Default)]
struct DepthUsages(Arc<Mutex<HashMap<Entity, TextureUsages>>>);

impl DepthUsages {
    fn of(&self, camera: Entity) -> TextureUsages {
        *self
            .0
            .lock()
            .unwrap()
            .get(&camera)
            .expect("the camera has a depth texture")
    }
}

fn record_depth_usages(usages: Res<DepthUsages>, views: Query<(&MainEntity, &ViewDepthTexture)>) {
    let mut usages = usages.0.lock().unwrap();
    for (camera, depth) in &views {
        usages.insert(camera.id(), depth.texture.usage());
    }
}

#[test]
fn only_cameras_that_see_clouds_get_readable_depth() {
    let usages = DepthUsages::default();
    let mut headless = Headless::with(common::headless_plugins(), |app| {
        app.sub_app_mut(RenderApp)
            .insert_resource(usages.clone())
            .add_systems(
                Render,
                record_depth_usages.in_set(RenderSystems::PrepareBindGroups),
            );
    });
    let splats = headless.add_splats(one_splat());
    let cloud = headless.spawn_cloud(splats, Transform::from_xyz(0.0, 0.0, -4.0));
    let projection = PerspectiveProjection {
        fov: 0.8,
        aspect_ratio: 1.0,
        near: 0.01,
        ..default()
    };
    let splat_camera = headless.spawn_camera(Transform::IDENTITY, projection.clone(), SIZE, None);
    let other = headless.spawn_camera(Transform::IDENTITY, projection, SIZE, None);
    headless
        .app
        .world_mut()
        .entity_mut(other.entity)
        .insert(RenderLayers::layer(1));
    let images = headless
        .render(&[splat_camera.clone(), other.clone()])
        .expect("the render");
    assert!(
        images[0].rgb().iter().any(|&c| c > 0),
        "the splat camera draws the cloud"
    );
    assert!(
        images[1].rgb().iter().all(|&c| c == 0),
        "the other camera sees nothing"
    );

    let readable = TextureUsages::TEXTURE_BINDING;
    assert!(usages.of(splat_camera.entity).contains(readable));
    assert!(
        !usages.of(other.entity).contains(readable),
        "a camera without clouds in view keeps attachment-only depth"
    );
    // The flag is set on the render world's copy: the user's component is untouched.
    let user_usage = headless
        .app
        .world()
        .get::<Camera3d>(splat_camera.entity)
        .expect("a 3D camera")
        .depth_texture_usages;
    assert_eq!(
        TextureUsages::from(user_usage),
        TextureUsages::from(Camera3d::default().depth_texture_usages)
    );

    // The cloud goes behind the camera: out of view, but the camera stays readable.
    headless
        .app
        .world_mut()
        .entity_mut(cloud)
        .insert(Transform::from_xyz(0.0, 0.0, 4.0));
    for _ in 0..3 {
        headless.app.update();
    }
    assert!(
        headless
            .app
            .world()
            .resource::<bevy_splat::SplatStats>()
            .get(splat_camera.entity)
            .is_none(),
        "the cloud is out of view: the camera draws no splats"
    );
    assert!(usages.of(splat_camera.entity).contains(readable));
}
