//! A thousand frames of clouds coming and going while rendering: spawned, moved,
//! hidden, despawned, given other assets, their assets edited in place; the camera
//! resized to odd sizes, re-viewported and switched off and on. Every so often the
//! image must be exactly what the clouds alive at that moment give on the CPU, no
//! frame may raise a validation error, and at the end the GPU memory the plugin
//! holds returns to where it started.

mod common;
mod reference_raster;

use bevy::asset::AssetId;
use bevy::camera::{RenderTarget, Viewport};
use bevy::math::UVec2;
use bevy::prelude::*;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::headless::{Headless, HeadlessCamera};
use bevy_splat::{GaussianCloud, GaussianSplats, SplatMemory};

use common::random::Rng;
use reference_raster::{CpuCloud, PinholeCamera, rasterize, to_unorm8};

const FOV_Y: f32 = 0.8;
const FRAMES: u32 = 1000;

fn random_cloud(rng: &mut Rng, tint: [f32; 3], count: usize) -> GaussianSplats {
    let mut geometry = Vec::new();
    let mut sh = Vec::new();
    for _ in 0..count {
        geometry.push(SplatGeometry {
            position: [rng.next() - 0.5, rng.next() - 0.5, rng.next() - 0.5],
            opacity_logit: rng.next() * 4.0 - 1.0,
            rotation: [
                rng.next() - 0.5,
                rng.next() - 0.5,
                rng.next() - 0.5,
                rng.next() - 0.5,
            ],
            log_scale: [(0.03 + 0.1 * rng.next()).ln(); 3],
            _pad: 0.0,
        });
        for c in tint {
            sh.push((c * (0.5 + 0.5 * rng.next()) - 0.5) / 0.282_094_8);
        }
    }
    GaussianSplats::new(geometry, sh, 0).unwrap()
}

struct Live {
    entity: Entity,
    asset: usize,
    transform: Transform,
    visible: bool,
}

fn spawn(
    world: &mut World,
    handles: &[Handle<GaussianSplats>],
    asset: usize,
    transform: Transform,
) -> Live {
    let entity = world
        .spawn((GaussianCloud(handles[asset].clone()), transform))
        .id();
    Live {
        entity,
        asset,
        transform,
        visible: true,
    }
}

/// The image the live clouds give on the CPU, compared with what the GPU drew.
fn check(
    headless: &mut Headless,
    camera: &HeadlessCamera,
    live: &[Live],
    handles: &[Handle<GaussianSplats>],
    size: UVec2,
    frame: u32,
) {
    let image = headless
        .render(std::slice::from_ref(camera))
        .unwrap_or_else(|e| panic!("frame {frame}: {e}"))
        .remove(0);
    let world = headless.app.world();
    let assets = world.resource::<Assets<GaussianSplats>>();
    let camera_transform = *world.get::<Transform>(camera.entity).unwrap();
    let clouds: Vec<CpuCloud> = live
        .iter()
        .filter(|l| l.visible)
        .map(|l| {
            let splats = assets.get(&handles[l.asset]).unwrap();
            CpuCloud {
                geometry: splats.geometry(),
                sh: splats.sh(),
                sh_degree: splats.sh_degree(),
                world_from_cloud: l.transform.to_matrix().as_dmat4(),
            }
        })
        .collect();
    let pinhole = PinholeCamera::from_bevy(&camera_transform, FOV_Y, size.x, size.y, 0.01);
    let expected = rasterize(&clouds, &pinhole);
    let mut worst = 0;
    for (i, p) in expected.iter().enumerate() {
        let got = image.pixel(i as u32 % size.x, i as u32 / size.x);
        for c in 0..3 {
            worst = worst.max(got[c].abs_diff(to_unorm8(p[c])));
        }
    }
    assert!(
        worst <= 2,
        "frame {frame}: image differs from the live clouds by {worst}/255"
    );
}

fn resize_target(headless: &mut Headless, camera: &mut HeadlessCamera, size: UVec2) {
    let world = headless.app.world_mut();
    {
        let mut images = world.resource_mut::<Assets<Image>>();
        let mut image = images.get_mut(&camera.image).unwrap();
        image.resize(bevy::render::render_resource::Extent3d {
            width: size.x,
            height: size.y,
            depth_or_array_layers: 1,
        });
    }
    camera.size = size;
    if let Some(mut projection) = world.get_mut::<Projection>(camera.entity)
        && let Projection::Perspective(p) = projection.as_mut()
    {
        p.aspect_ratio = size.x as f32 / size.y as f32;
    }
}

#[test]
fn a_thousand_frames_of_changes() {
    let mut rng = Rng(0x9e37_79b9);
    let mut headless = Headless::new(common::headless_plugins());
    let baseline = headless.app.world().resource::<SplatMemory>().bytes();

    let mut handles: Vec<Handle<GaussianSplats>> =
        [[1.0, 0.3, 0.2], [0.2, 0.4, 1.0], [0.3, 1.0, 0.4]]
            .into_iter()
            .map(|tint| {
                let cloud = random_cloud(&mut rng, tint, 80);
                headless.add_splats(cloud)
            })
            .collect();
    let mut size = UVec2::new(64, 48);
    let projection = PerspectiveProjection {
        fov: FOV_Y,
        aspect_ratio: 64.0 / 48.0,
        near: 0.01,
        ..default()
    };
    let mut camera = headless.spawn_camera(
        Transform::from_xyz(0.0, 0.3, 4.0).looking_at(Vec3::ZERO, Vec3::Y),
        projection,
        size,
        None,
    );

    let mut live: Vec<Live> = Vec::new();
    let mut checks = 0;
    let mut peak_memory = 0;
    let odd_sizes = [
        UVec2::new(63, 47),
        UVec2::new(17, 9),
        UVec2::new(1, 1),
        UVec2::new(50, 31),
        UVec2::new(64, 48),
    ];
    for frame in 0..FRAMES {
        let world = headless.app.world_mut();
        if frame % 40 == 0 && live.len() < 6 {
            let at = Vec3::new(rng.next() * 2.0 - 1.0, rng.next() - 0.5, rng.next() - 0.5);
            live.push(spawn(
                world,
                &handles,
                frame as usize % 3,
                Transform::from_translation(at),
            ));
        }
        for l in &mut live {
            l.transform.translation.x += 0.01 * (frame as f32 * 0.05).sin();
            l.transform.rotate_y(0.02);
            world.entity_mut(l.entity).insert(l.transform);
        }
        if frame % 37 == 0
            && let Some(l) = live.get_mut(frame as usize / 37 % 6)
        {
            l.visible = !l.visible;
            let visibility = if l.visible {
                Visibility::Inherited
            } else {
                Visibility::Hidden
            };
            world.entity_mut(l.entity).insert(visibility);
        }
        if frame % 90 == 45 && !live.is_empty() {
            let gone = live.remove(0);
            world.despawn(gone.entity);
        }
        if frame % 120 == 60
            && let Some(l) = live.last_mut()
        {
            l.asset = (l.asset + 1) % 3;
            world
                .entity_mut(l.entity)
                .insert(GaussianCloud(handles[l.asset].clone()));
        }
        if frame % 200 == 100 {
            // An edited asset: same handle, new splats (as a hot reload delivers).
            let tint = [rng.next(), rng.next(), rng.next()];
            let count = 20 + (rng.next() * 100.0) as usize;
            let cloud = random_cloud(&mut rng, tint, count);
            let id: AssetId<GaussianSplats> = handles[1].id();
            world
                .resource_mut::<Assets<GaussianSplats>>()
                .insert(id, cloud)
                .unwrap();
        }
        if frame % 150 == 75 {
            size = odd_sizes[(frame / 150) as usize % odd_sizes.len()];
            resize_target(&mut headless, &mut camera, size);
        }
        let world = headless.app.world_mut();
        if frame % 250 == 125 {
            // Off for a few frames, then on again.
            world.get_mut::<Camera>(camera.entity).unwrap().is_active = false;
        }
        if frame % 250 == 130 {
            world.get_mut::<Camera>(camera.entity).unwrap().is_active = true;
        }
        if frame % 333 == 200 {
            // A viewport on part of the target, then the whole target again.
            world.get_mut::<Camera>(camera.entity).unwrap().viewport = Some(Viewport {
                physical_position: UVec2::ZERO,
                physical_size: (size / 2).max(UVec2::ONE),
                ..default()
            });
        }
        if frame % 333 == 210 {
            world.get_mut::<Camera>(camera.entity).unwrap().viewport = None;
        }
        headless.app.update();
        let exited = headless
            .app
            .world_mut()
            .resource_mut::<Messages<AppExit>>()
            .drain()
            .next();
        assert!(
            exited.is_none(),
            "frame {frame}: the app quit ({exited:?}): a validation error?"
        );

        let camera_on = headless
            .app
            .world()
            .get::<Camera>(camera.entity)
            .unwrap()
            .is_active;
        let whole_target = headless
            .app
            .world()
            .get::<Camera>(camera.entity)
            .unwrap()
            .viewport
            .is_none();
        if frame % 100 == 99 && camera_on && whole_target {
            check(&mut headless, &camera, &live, &handles, size, frame);
            checks += 1;
        }
        peak_memory = peak_memory.max(headless.app.world().resource::<SplatMemory>().bytes());
    }

    // Everything gone: clouds, assets, the camera's target.
    let world = headless.app.world_mut();
    for l in live.drain(..) {
        world.despawn(l.entity);
    }
    world.entity_mut(camera.entity).remove::<RenderTarget>();
    world.despawn(camera.entity);
    handles.clear();
    for _ in 0..10 {
        headless.app.update();
    }
    assert!(checks >= 6, "only {checks} images were checked");
    assert!(
        peak_memory > baseline,
        "the plugin's GPU memory was never counted"
    );
    let held = headless.app.world().resource::<SplatMemory>().bytes();
    assert_eq!(
        held, baseline,
        "the plugin still holds {held} bytes of GPU memory (baseline {baseline})"
    );
}
