//! Splats in Bevy's shadow maps, on lavapipe: a cloud casts its surface (the median
//! depth, where transmittance falls to 0.5) onto a lit mesh floor, for a directional
//! light (one cascade and several) and a point light, and the shadow on the floor
//! matches the silhouette the CPU reference finds from the light. `NotShadowCaster`,
//! a layer the light does not share, and a light without shadow maps cast nothing.
//! Each shadow view reports what it drew (`SplatShadowStats`).
//!
//! The clouds sit on a render layer the cameras do not see, so the image is the floor
//! alone: lit where the light reaches it, dark where a splat surface is in the way.

mod common;
mod reference_raster;

use bevy::camera::visibility::RenderLayers;
use bevy::camera::{ScalingMode, ShadowLodOrigin};
use bevy::light::{
    CascadeShadowConfigBuilder, DirectionalLightShadowMap, NotShadowCaster, PointLightShadowMap,
    ShadowFilteringMethod,
};
use bevy::math::UVec2;
use bevy::prelude::*;
use bevy::render::settings::WgpuSettings;
use bevy_splat::asset::formats::ply;
use bevy_splat::headless::{Headless, HeadlessCamera, Rgba8, lowered_limits};
use bevy_splat::{
    GaussianCloud, GaussianSplats, RedrawSplatShadows, SplatGpuLimits, SplatLod, SplatMemory,
    SplatShader, SplatShaderAppExt, SplatShadowScale, SplatShadowStats, SplatViewStats,
};

use reference_raster::{CpuCloud, PinholeCamera, max_difference, median_depth};

/// The camera's image: the floor seen from above.
const SIZE: UVec2 = UVec2::new(160, 160);
/// The floor's half-width: larger than anything the cameras see.
const FLOOR_HALF: f32 = 6.0;

fn angel() -> GaussianSplats {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/angel_sh0.ply"
    ))
    .expect("the angel's file");
    GaussianSplats::from(ply::decode(&bytes).expect("the angel decodes"))
}

/// The lowest splat centre of `splats`: the floor goes just below it.
fn lowest(splats: &GaussianSplats) -> f32 {
    splats
        .geometry()
        .iter()
        .map(|g| g.position[1])
        .fold(f32::INFINITY, f32::min)
}

/// How a test camera sees the floor.
#[derive(Clone, Copy)]
enum View {
    /// Straight down from `height`, `width` world units across.
    TopDown { centre: Vec3, width: f32 },
    /// A perspective camera at `eye` looking at `target`.
    Perspective { eye: Vec3, target: Vec3, fov_y: f32 },
}

impl View {
    fn transform(self) -> Transform {
        match self {
            View::TopDown { centre, .. } => {
                Transform::from_translation(centre + Vec3::Y * 5.0).looking_at(centre, Vec3::NEG_Z)
            }
            View::Perspective { eye, target, .. } => {
                Transform::from_translation(eye).looking_at(target, Vec3::Y)
            }
        }
    }

    fn projection(self) -> Projection {
        match self {
            View::TopDown { width, .. } => Projection::Orthographic(OrthographicProjection {
                scaling_mode: ScalingMode::Fixed {
                    width,
                    height: width * SIZE.y as f32 / SIZE.x as f32,
                },
                near: -1.0,
                far: 50.0,
                ..OrthographicProjection::default_3d()
            }),
            View::Perspective { fov_y, .. } => Projection::Perspective(PerspectiveProjection {
                fov: fov_y,
                aspect_ratio: SIZE.x as f32 / SIZE.y as f32,
                near: 0.05,
                ..default()
            }),
        }
    }

    /// Where the ray through the centre of pixel (x, y) meets the floor at `floor_y`.
    fn floor_point(self, x: u32, y: u32, floor_y: f32) -> Option<Vec3> {
        let transform = self.transform();
        // The pixel in view-space units at unit distance (perspective) or in world
        // units (orthographic), y up.
        let (sx, sy) = (
            (x as f32 + 0.5) / SIZE.x as f32 - 0.5,
            0.5 - (y as f32 + 0.5) / SIZE.y as f32,
        );
        let aspect = SIZE.x as f32 / SIZE.y as f32;
        let (origin, direction) = match self {
            View::TopDown { width, .. } => {
                let height = width / aspect;
                let origin = transform.transform_point(Vec3::new(sx * width, sy * height, 0.0));
                (origin, *transform.forward())
            }
            View::Perspective { fov_y, .. } => {
                let tan = (fov_y / 2.0).tan();
                let local = Vec3::new(2.0 * sx * tan * aspect, 2.0 * sy * tan, -1.0);
                (transform.translation, transform.rotation * local)
            }
        };
        let t = (floor_y - origin.y) / direction.y;
        (t > 0.0).then(|| origin + direction * t)
    }
}

/// The light of a test.
#[derive(Clone, Copy)]
enum Light {
    /// Travelling along `direction`, with `cascades` cascades.
    Directional { direction: Vec3, cascades: usize },
    /// At a point.
    Point { position: Vec3 },
    /// At a point, shining straight down in a cone.
    Spot { position: Vec3 },
}

struct Scene {
    splats: GaussianSplats,
    /// The side of the directional light's maps (point lights' faces are half).
    shadow_map: usize,
    /// Where the cloud stands.
    cloud: Transform,
    floor_y: f32,
    light: Light,
    view: View,
}

/// A render's image, what each shadow view counted, the plugin's GPU memory, and the
/// app and light, to go on with.
struct Rendered {
    image: Rgba8,
    views: Vec<(String, SplatViewStats)>,
    memory: u64,
    headless: Headless,
    light: Entity,
    /// The cameras, the first one's image first.
    cameras: Vec<Entity>,
    /// The first camera, to read its image again.
    camera: HeadlessCamera,
}

/// What a render changes from the plain scene.
#[derive(Clone, Copy, Default)]
struct Variant {
    /// The cloud has `NotShadowCaster`.
    not_caster: bool,
    /// The cloud is on a layer the light does not see.
    other_layer: bool,
    /// The light has no shadow maps.
    no_shadow_maps: bool,
    /// No cloud at all.
    no_cloud: bool,
    msaa: bool,
    /// The light draws its shadow views as cuts of the clouds' trees.
    light_lod: Option<SplatLod>,
    /// Room for this many chunks of long tile lists in a shadow view
    /// (`SplatGpuLimits::max_tile_chunks`; 0: every tile drawn by one workgroup).
    max_tile_chunks: Option<u32>,
    /// Storage bindings of at most this many bytes
    /// (`SplatGpuLimits::max_storage_binding_bytes`): shadow views in bands.
    max_binding: Option<u64>,
    /// A second camera, with the same view on a target of its own.
    second_camera: bool,
    /// The light has `RedrawSplatShadows`: its views never draw from a kept surface.
    redraw: bool,
    /// The light's `SplatShadowScale`.
    scale: Option<u32>,
    /// The cloud carries a `SplatShader` that leaves every splat as it is.
    hooked: bool,
    /// The device's largest 2-D texture, in texels a side: a light's cascades whose
    /// cells do not fit one layer are drawn one by one.
    max_texture_dimension: Option<u32>,
}

/// A splat shader that changes nothing.
const UNCHANGED_HOOK: &str = "#import bevy_splat::preprocess::hook::{Splat, SplatContext}

fn modify_splat(splat: Splat, context: SplatContext) -> Splat {
    return splat;
}
";

/// The layer the clouds are on: the light sees it, the cameras do not.
const CLOUD_LAYER: usize = 1;

impl Scene {
    fn render(&self, variant: Variant) -> Rgba8 {
        self.render_counted(variant).0
    }

    /// The image, and what the GPU counted in each of the light's shadow views
    /// (`SplatShadowStats`).
    fn render_counted(&self, variant: Variant) -> (Rgba8, Vec<(String, SplatViewStats)>) {
        let rendered = self.render_measured(variant);
        (rendered.image, rendered.views)
    }

    /// The image, the counts of each shadow view, and the GPU memory the plugin holds
    /// at the end.
    fn render_measured(&self, variant: Variant) -> Rendered {
        let mut hook = None;
        let settings = match variant.max_texture_dimension {
            Some(texels) => lowered_limits(|limits| limits.max_texture_dimension_2d = texels)
                .expect("no GPU adapter"),
            None => WgpuSettings::default(),
        };
        let mut headless = Headless::with_settings(common::headless_plugins(), settings, |app| {
            if variant.hooked {
                hook = Some(app.add_splat_shader("unchanged", UNCHANGED_HOOK));
            }
        });
        let world = headless.app.world_mut();
        // Small shadow maps keep lavapipe quick; the cascades still resolve a texel
        // under a centimetre here.
        world.insert_resource(DirectionalLightShadowMap {
            size: self.shadow_map,
        });
        world.insert_resource(PointLightShadowMap {
            size: self.shadow_map / 2,
        });
        world.insert_resource(SplatGpuLimits {
            max_tile_chunks: variant.max_tile_chunks,
            max_storage_binding_bytes: variant.max_binding,
        });
        let floor = world.resource_mut::<Assets<Mesh>>().add(
            Plane3d::default()
                .mesh()
                .size(2.0 * FLOOR_HALF, 2.0 * FLOOR_HALF),
        );
        let white = world
            .resource_mut::<Assets<StandardMaterial>>()
            .add(StandardMaterial {
                base_color: Color::WHITE,
                perceptual_roughness: 1.0,
                ..default()
            });
        world.spawn((
            Mesh3d(floor),
            MeshMaterial3d(white),
            Transform::from_xyz(0.0, self.floor_y, 0.0),
        ));
        let light_layers = RenderLayers::from_layers(&[0, CLOUD_LAYER]);
        let light = match self.light {
            Light::Directional {
                direction,
                cascades,
            } => world.spawn((
                DirectionalLight {
                    illuminance: 4_000.0,
                    shadow_maps_enabled: !variant.no_shadow_maps,
                    ..default()
                },
                Transform::default().looking_to(direction, Vec3::Y),
                CascadeShadowConfigBuilder {
                    num_cascades: cascades,
                    minimum_distance: 0.05,
                    first_cascade_far_bound: 3.0,
                    maximum_distance: 12.0,
                    overlap_proportion: 0.2,
                }
                .build(),
                light_layers,
            )),
            Light::Point { position } => world.spawn((
                PointLight {
                    intensity: 400_000.0,
                    range: 30.0,
                    shadow_maps_enabled: !variant.no_shadow_maps,
                    ..default()
                },
                Transform::from_translation(position),
                light_layers,
            )),
            Light::Spot { position } => world.spawn((
                SpotLight {
                    intensity: 400_000.0,
                    range: 30.0,
                    outer_angle: 1.0,
                    inner_angle: 0.9,
                    shadow_maps_enabled: !variant.no_shadow_maps,
                    ..default()
                },
                Transform::from_translation(position).looking_to(Vec3::NEG_Y, Vec3::Z),
                light_layers,
            )),
        }
        .id();
        if let Some(lod) = variant.light_lod {
            world.entity_mut(light).insert(lod);
        }
        if variant.redraw {
            world.entity_mut(light).insert(RedrawSplatShadows);
        }
        if let Some(scale) = variant.scale {
            world.entity_mut(light).insert(SplatShadowScale(scale));
        }
        if !variant.no_cloud {
            let splats = headless.add_splats(self.splats.clone());
            let cloud = headless.spawn_cloud(splats, self.cloud);
            let layer = if variant.other_layer { 2 } else { CLOUD_LAYER };
            let mut entity = headless.app.world_mut().entity_mut(cloud);
            entity.insert(RenderLayers::layer(layer));
            if variant.not_caster {
                entity.insert(NotShadowCaster);
            }
            if let Some(hook) = hook {
                entity.insert(SplatShader::new(hook));
            }
        }
        let camera =
            headless.spawn_camera(self.view.transform(), self.view.projection(), SIZE, None);
        let mut cameras = vec![camera.entity];
        if variant.second_camera {
            let second =
                headless.spawn_camera(self.view.transform(), self.view.projection(), SIZE, None);
            cameras.push(second.entity);
        }
        headless
            .app
            .world_mut()
            .entity_mut(camera.entity)
            // Hard-edged filtering, so the edge is where the map says; the camera is
            // where point lights measure their shadows' detail from.
            .insert((
                ShadowFilteringMethod::Hardware2x2,
                ShadowLodOrigin,
                if variant.msaa {
                    Msaa::Sample4
                } else {
                    Msaa::Off
                },
            ));
        // The camera draws no splats itself: let the shadow views size their buffers
        // and their pipelines compile.
        headless
            .render(std::slice::from_ref(&camera))
            .expect("a frame");
        if variant.light_lod.is_some() && !variant.no_cloud {
            common::update_until_lod_trees_are_built(&mut headless);
        }
        // A few frames more: the shadow views' buffers (and a cut) settle.
        for _ in 0..8 {
            headless.app.update();
        }
        let image = headless.read_back(&camera).expect("the image");
        let counts = headless
            .app
            .world()
            .resource::<SplatShadowStats>()
            .get(light);
        let memory = headless.app.world().resource::<SplatMemory>().bytes();
        Rendered {
            image,
            views: counts,
            memory,
            headless,
            light,
            cameras,
            camera,
        }
    }

    /// Where the CPU reference finds the floor in the splats' shadow, per pixel of
    /// the camera (`None` off the floor): a floor point is in shadow when, seen from
    /// the light, the splats' transmittance falls to 0.5 before the point.
    fn reference_shadow(&self) -> Vec<Option<bool>> {
        let floor: Vec<Option<Vec3>> = (0..SIZE.y)
            .flat_map(|y| (0..SIZE.x).map(move |x| (x, y)))
            .map(|(x, y)| self.view.floor_point(x, y, self.floor_y))
            .map(|p| p.filter(|p| p.x.abs() < FLOOR_HALF && p.z.abs() < FLOOR_HALF))
            .collect();
        // The light's view, fine enough that its pixels are smaller than the camera's.
        let (light_camera, resolution) = match self.light {
            Light::Directional { direction, .. } => {
                let eye = self.cloud.translation - direction.normalize() * 10.0;
                let transform = Transform::from_translation(eye).looking_to(direction, Vec3::Y);
                let camera =
                    PinholeCamera::orthographic_from_bevy(&transform, 6.0, 1200, 1200, 0.0);
                (camera, 1200)
            }
            Light::Point { position } | Light::Spot { position } => {
                // Straight down and wide: every floor point the camera sees (a spot
                // light's cone is narrower; the floor outside it is not lit, so not
                // compared).
                let transform =
                    Transform::from_translation(position).looking_to(Vec3::NEG_Y, Vec3::Z);
                (
                    PinholeCamera::from_bevy(&transform, 2.4, 1600, 1600, 0.01),
                    1600,
                )
            }
        };
        let texel = |p: Vec3| -> Option<((u32, u32), f64)> {
            let c = light_camera.cam_from_world * p.as_dvec3().extend(1.0);
            let (x, y) = if light_camera.orthographic {
                (c.x, c.y)
            } else {
                (c.x / c.z, c.y / c.z)
            };
            let (px, py) = (
                light_camera.fx * x + light_camera.cx,
                light_camera.fy * y + light_camera.cy,
            );
            let inside = c.z > 0.0
                && px >= 0.0
                && py >= 0.0
                && px < resolution as f64
                && py < resolution as f64;
            inside.then_some(((px as u32, py as u32), c.z))
        };
        let texels: Vec<_> = floor.iter().map(|p| p.and_then(texel)).collect();
        let pixels: Vec<(u32, u32)> = texels.iter().flatten().map(|(t, _)| *t).collect();
        let cloud = CpuCloud {
            geometry: self.splats.geometry(),
            sh: self.splats.sh(),
            sh_degree: self.splats.sh_degree(),
            world_from_cloud: self.cloud.to_matrix().as_dmat4(),
        };
        let mut hits = median_depth(&[cloud], &light_camera, &pixels).into_iter();
        floor
            .iter()
            .zip(&texels)
            .map(|(p, t)| {
                p.map(|_| match t {
                    Some((_, depth)) => hits.next().flatten().is_some_and(|hit| hit.depth < *depth),
                    None => false,
                })
            })
            .collect()
    }
}

/// The floor's pixels in shadow in `image` (`None` where the floor is not lit in
/// `bare`, the same view without the cloud): under half as bright as there.
fn shadow_mask(image: &Rgba8, bare: &Rgba8) -> Vec<Option<bool>> {
    let luma = |image: &Rgba8, i: u32| {
        let [r, g, b, _] = image.pixel(i % SIZE.x, i / SIZE.x);
        u32::from(r) + u32::from(g) + u32::from(b)
    };
    (0..SIZE.x * SIZE.y)
        .map(|i| {
            let lit = luma(bare, i);
            (lit >= 60).then(|| 2 * luma(image, i) < lit)
        })
        .collect()
}

/// Intersection over union of two masks' shadowed pixels.
fn iou(a: &[Option<bool>], b: &[Option<bool>]) -> f64 {
    let both = |i: usize| a[i] == Some(true) && b[i] == Some(true);
    let either = |i: usize| a[i] == Some(true) || b[i] == Some(true);
    let inter = (0..a.len()).filter(|&i| both(i)).count();
    let union = (0..a.len()).filter(|&i| either(i)).count();
    inter as f64 / union.max(1) as f64
}

/// Saves `image` under the target directory for a look, naming the file `name`.
fn keep(image: &Rgba8, name: &str) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("shadows");
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = image.save_png(dir.join(format!("{name}.png")));
    }
}

fn angel_scene(light: Light, view: View) -> Scene {
    let splats = angel();
    let floor_y = lowest(&splats) - 0.02;
    Scene {
        splats,
        shadow_map: 1024,
        cloud: Transform::IDENTITY,
        floor_y,
        light,
        view,
    }
}

/// The shadow matches the reference with an IoU of at least `goal`, and covers a
/// real part of the view; returns the IoU.
fn check_shadow(scene: &Scene, variant: Variant, name: &str, goal: f64) -> f64 {
    let started = std::time::Instant::now();
    let image = scene.render(variant);
    let rendered = started.elapsed();
    let bare = scene.render(Variant {
        no_cloud: true,
        ..variant
    });
    keep(&image, name);
    let reference = scene.reference_shadow();
    eprintln!(
        "{name}: rendered in {rendered:.1?}, reference in {:.1?}",
        started.elapsed() - rendered
    );
    // Where the floor is lit without the cloud, in shadow or not.
    let mask = shadow_mask(&image, &bare);
    let reference: Vec<Option<bool>> = reference
        .iter()
        .zip(&mask)
        .map(|(r, m)| r.filter(|_| m.is_some()))
        .collect();
    let shadowed = reference.iter().filter(|p| **p == Some(true)).count();
    assert!(
        shadowed > 200,
        "{name}: the reference shadow covers {shadowed} px"
    );
    let score = iou(&mask, &reference);
    eprintln!("{name}: IoU {score:.3} over {shadowed} reference px");
    assert!(score >= goal, "{name}: IoU {score:.3} < {goal}");
    score
}

const SLANTED_SUN: Vec3 = Vec3::new(0.45, -1.0, 0.3);

fn top_down() -> View {
    View::TopDown {
        centre: Vec3::new(0.35, 0.0, 0.2),
        width: 3.2,
    }
}

#[test]
fn the_angel_casts_its_median_depth_silhouette_on_a_mesh_floor() {
    let scene = angel_scene(
        Light::Directional {
            direction: SLANTED_SUN,
            cascades: 1,
        },
        top_down(),
    );
    check_shadow(&scene, Variant::default(), "directional", 0.9);
}

#[test]
fn the_same_with_msaa_on_the_camera() {
    let scene = angel_scene(
        Light::Directional {
            direction: SLANTED_SUN,
            cascades: 1,
        },
        top_down(),
    );
    let variant = Variant {
        msaa: true,
        ..default()
    };
    check_shadow(&scene, variant, "directional_msaa", 0.9);
}

/// The angel under a slanted sun of `cascades` cascades, seen across them from the
/// side, with 512² maps (smaller ones keep lavapipe quick).
fn cascaded_scene(cascades: usize) -> Scene {
    let mut scene = angel_scene(
        Light::Directional {
            direction: SLANTED_SUN,
            cascades,
        },
        View::Perspective {
            eye: Vec3::new(-0.8, 1.6, 2.6),
            target: Vec3::new(0.4, -0.6, 0.0),
            fov_y: 1.0,
        },
    );
    scene.shadow_map = 512;
    scene
}

#[test]
fn several_cascades_cast_where_the_camera_looks_across_them() {
    let scene = cascaded_scene(4);
    check_shadow(&scene, Variant::default(), "cascades", 0.9);

    // The four cascades are drawn in one run, each in a cell of one layer: the run
    // reports what it drew under its first cascade's name.
    let (_, views) = scene.render_counted(Variant::default());
    let names: Vec<&str> = views.iter().map(|(name, _)| name.as_str()).collect();
    println!("shadow views: {names:?}");
    assert_eq!(views.len(), 1, "one run for the four cascades: {names:?}");
    assert!(names[0].ends_with("cascade_0"), "{names:?}");
    for (name, counts) in &views {
        println!(
            "{name}: {} visible, {} pairs, {} tiles in {} runs",
            counts.visible_splats, counts.tile_pairs, counts.tiles_drawn, counts.tile_runs
        );
        assert!(name.contains("cascade"), "{name}");
        assert!(counts.gpu_reports > 0 && counts.complete(), "{name}");
        // Each cascade sees the angel once: the run at most four times.
        assert!(
            (1..=4 * scene.splats.len() as u32).contains(&counts.visible_splats),
            "{name}: {} visible splats",
            counts.visible_splats
        );
        assert!(counts.tile_pairs > 0, "{name}");
        assert!(
            (1..=counts.tiles_drawn).contains(&counts.tile_runs),
            "{name}: {} runs over {} tiles",
            counts.tile_runs,
            counts.tiles_drawn
        );
    }

    // Cascades are a camera's views: with two cameras, each has its run, under the
    // same name, and both are counted.
    let two = scene.render_measured(Variant {
        second_camera: true,
        ..default()
    });
    let stats = two.headless.app.world().resource::<SplatShadowStats>();
    let every = stats.get(two.light);
    assert_eq!(every.len(), 2, "a run per camera: {every:?}");
    for camera in &two.cameras {
        let own = stats.get_for_camera(two.light, *camera);
        let names: Vec<&str> = own.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            views.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>()
        );
        assert!(
            own.iter()
                .all(|(_, s)| s.gpu_reports > 0 && s.visible_splats > 0)
        );
    }
}

/// A light's cascades drawn in one run, each in a cell of one layer with its camera
/// folded into the first cascade's (`shadows/cells.rs`), cast what they cast drawn one
/// by one, as on a device whose largest texture cannot hold their layer: the same
/// splats and shadow for whole clouds; with `SplatLod` the same shadow from cuts that
/// may differ by a bin of the controller's (an eighth of an octave).
#[test]
fn cascades_drawn_in_one_run_cast_what_they_cast_drawn_one_by_one() {
    let scene = cascaded_scene(4);
    // Whole clouds, then cuts of their trees down to 4 texels: one cut for the run,
    // each cascade's nodes measured in its own texels.
    let cut = SplatLod {
        budget: u32::MAX,
        pixel_scale: 4.0,
        ..default()
    };
    for (name, light_lod) in [("whole", None), ("cut", Some(cut))] {
        let variant = Variant {
            light_lod,
            ..default()
        };
        let (together, runs) = scene.render_counted(variant);
        // Four 512² cells need a layer of 1,024² texels.
        let (apart, views) = scene.render_counted(Variant {
            max_texture_dimension: Some(1000),
            ..variant
        });
        assert_eq!((runs.len(), views.len()), (1, 4), "{runs:?} / {views:?}");
        let visible = |views: &[(String, SplatViewStats)]| -> u32 {
            views.iter().map(|(_, s)| s.visible_splats).sum()
        };
        let bare = scene.render(Variant {
            no_cloud: true,
            ..variant
        });
        let (together_mask, apart_mask) =
            (shadow_mask(&together, &bare), shadow_mask(&apart, &bare));
        let shadowed = apart_mask.iter().filter(|p| **p == Some(true)).count();
        let differ = together_mask
            .iter()
            .zip(&apart_mask)
            .filter(|(a, b)| a != b)
            .count();
        let score = iou(&together_mask, &apart_mask);
        println!(
            "{name}: in one run against one by one: IoU {score:.4}, {differ} of {shadowed} px \
             differ; {} splats against {}",
            visible(&runs),
            visible(&views)
        );
        assert!(shadowed > 200, "{name}: the shadow covers {shadowed} px");
        assert!(score >= 0.99, "{name}: IoU {score:.4}");
        // Whole clouds: the same splats. A cut: the run's one threshold is the pixel
        // floor rounded to the controller's bins in the first cascade's units, each
        // cascade's own in its own, so a cascade's cut may differ from its own by up to
        // a bin (here 1 % fewer splats, the same shadow).
        let (ours, theirs) = (visible(&runs), visible(&views));
        match light_lod {
            None => assert_eq!(ours, theirs, "{name}: the same splats drawn"),
            Some(_) => assert!(
                ours.abs_diff(theirs) <= theirs / 20,
                "{name}: {ours} splats against {theirs}"
            ),
        }
    }
}

/// A light's shadow views are drawn one after another, so they share one set of
/// working buffers (and one layer), as large as the largest of them needs (each run
/// keeps only its own inputs and read-back). While each view held its own (109c60b),
/// four cascades here held 25.5 MB against the one cascade's 5.6 MB (4.5×); shared,
/// 8.4 MB (1.5×: their largest held 155 K pairs, the one cascade 104 K). Drawn in one
/// run (`shadows/cells.rs`), the four cascades hold their splats and pairs together,
/// about what four runs of one cascade would: 24.4 MB (4.3×, 285 K splats and 487 K
/// pairs), the price of drawing a light's cascades at once (BENCHMARKS.md: on an H100
/// they took 1.50 ms drawn apart and 1.11 in one run). Two cameras' runs share theirs.
#[test]
fn the_shadow_views_of_a_light_share_their_working_buffers() {
    let (one, four) = (cascaded_scene(1), cascaded_scene(4));
    // Drawn anew every frame: no view keeps a copy of its surface, so what is measured
    // is the work alone.
    let drawn_anew = Variant {
        redraw: true,
        ..default()
    };
    // The cloud where the light does not see it: its asset, and no shadow work.
    let unseen = Variant {
        other_layer: true,
        ..drawn_anew
    };
    let shadow_memory = |scene: &Scene| {
        let drawn = scene.render_measured(drawn_anew);
        let bare = scene.render_measured(unseen);
        assert!(drawn.views.iter().all(|(_, s)| s.visible_splats > 0));
        (drawn.memory - bare.memory, drawn.views)
    };
    let (one_bytes, one_views) = shadow_memory(&one);
    let (four_bytes, four_views) = shadow_memory(&four);
    let most = |views: &[(String, SplatViewStats)]| {
        let splats = views.iter().map(|(_, s)| s.visible_splats).max();
        let pairs = views.iter().map(|(_, s)| s.tile_pairs).max();
        (splats.unwrap_or(0), pairs.unwrap_or(0))
    };
    println!(
        "shadow memory: one cascade {one_bytes} B (most splats, pairs {:?}), four \
         cascades {four_bytes} B ({:?})",
        most(&one_views),
        most(&four_views)
    );
    assert_eq!((one_views.len(), four_views.len()), (1, 1));
    assert!(
        four_bytes < one_bytes * 5,
        "four cascades hold {four_bytes} B against one cascade's {one_bytes} B"
    );
    // A second camera's run shares the first's working buffers: it adds its own
    // inputs and read-back only.
    let two_cameras = Variant {
        second_camera: true,
        ..drawn_anew
    };
    let two_bytes = four.render_measured(two_cameras).memory
        - four
            .render_measured(Variant {
                second_camera: true,
                ..unseen
            })
            .memory;
    println!("two cameras' runs of four cascades: {two_bytes} B");
    assert!(
        two_bytes < four_bytes * 3 / 2,
        "two cameras' runs hold {two_bytes} B against one's {four_bytes} B"
    );

    // Shared work is given back with the last view that draws over it, and the kept
    // surfaces with their views: the light gone, the plugin holds what it held
    // without it.
    let unseen_bytes = four.render_measured(unseen).memory;
    let mut drawn = four.render_measured(Variant::default());
    assert_eq!(
        drawn
            .headless
            .app
            .world()
            .resource::<SplatShadowStats>()
            .drawn_from_kept(drawn.light)
            .len(),
        1,
        "the still run of cascades keeps its surface"
    );
    drawn.headless.app.world_mut().despawn(drawn.light);
    for _ in 0..4 {
        drawn.headless.app.update();
    }
    let left = drawn.headless.app.world().resource::<SplatMemory>().bytes();
    println!(
        "with the light {} B, after it {left} B, never cast {unseen_bytes} B",
        drawn.memory
    );
    assert!(
        left < drawn.memory && left <= unseen_bytes,
        "{left} B held after the light went"
    );
}

/// A light and a cloud that stand still: every shadow view keeps a copy of its surface
/// and draws from it, and the image is exactly the one drawn anew every frame
/// (`RedrawSplatShadows`). The cloud moved, its shadow moves with it in the next frame,
/// and once it stands still again the views keep its new surface. A cloud with a
/// `SplatShader` is never kept.
#[test]
fn still_shadow_views_draw_from_the_surface_they_kept() {
    let lights = [
        (
            "directional, 2 cascades",
            Light::Directional {
                direction: SLANTED_SUN,
                cascades: 2,
            },
        ),
        (
            "point",
            Light::Point {
                position: Vec3::new(-1.0, 3.4, -0.8),
            },
        ),
    ];
    let redraw = Variant {
        redraw: true,
        ..default()
    };
    let from_kept = |rendered: &Rendered| {
        let world = rendered.headless.app.world();
        world
            .resource::<SplatShadowStats>()
            .drawn_from_kept(rendered.light)
    };
    let scene_of_light = |light| angel_scene(light, top_down());
    for (name, light) in lights {
        let scene = scene_of_light(light);
        let anew = scene.render_measured(redraw);
        let mut kept = scene.render_measured(Variant::default());
        println!(
            "{name}: views {:?}, from their kept surface {:?}; {} B held drawing anew, {} B \
             keeping",
            kept.views.iter().map(|(view, _)| view).collect::<Vec<_>>(),
            from_kept(&kept),
            anew.memory,
            kept.memory
        );
        assert!(from_kept(&anew).is_empty(), "{name}: redrawn views kept");
        assert!(!kept.views.is_empty(), "{name}: no shadow view drew");
        assert_eq!(
            from_kept(&kept).len(),
            kept.views.len(),
            "{name}: every still view draws from its kept surface"
        );
        assert_eq!(
            max_difference(&kept.image.pixels, &anew.image.pixels),
            0,
            "{name}: the kept surface casts what the passes draw"
        );
        keep(&kept.image, &format!("kept_{name}"));
        assert!(
            kept.memory > anew.memory,
            "{name}: the copies hold memory ({} B against {} B)",
            kept.memory,
            anew.memory
        );

        // The cloud moves: the next frame casts from where it is now.
        let moved = Scene {
            cloud: scene
                .cloud
                .with_translation(scene.cloud.translation + Vec3::new(0.5, 0.0, -0.3)),
            ..angel_scene(light, top_down())
        };
        let moved_anew = moved.render(redraw);
        let shift = max_difference(&moved_anew.pixels, &anew.image.pixels);
        assert!(
            shift > 40,
            "{name}: moving the cloud moves its shadow ({shift})"
        );
        let world = kept.headless.app.world_mut();
        let mut clouds = world.query_filtered::<&mut Transform, With<GaussianCloud>>();
        for mut transform in clouds.iter_mut(world) {
            *transform = moved.cloud;
        }
        let image = kept.headless.read_back(&kept.camera).expect("the image");
        assert_eq!(
            max_difference(&image.pixels, &moved_anew.pixels),
            0,
            "{name}: the shadow follows the cloud at once"
        );
        for _ in 0..8 {
            kept.headless.app.update();
        }
        let image = kept.headless.read_back(&kept.camera).expect("the image");
        assert_eq!(
            from_kept(&kept).len(),
            kept.views.len(),
            "{name}: kept again"
        );
        assert_eq!(
            max_difference(&image.pixels, &moved_anew.pixels),
            0,
            "{name}: the new surface kept"
        );
    }

    // Views their buffers can never hold (bindings of 64 KiB: 2,048 splats a band,
    // where one bin row of the angel below the light has more) leave splats out every
    // frame, so no copy of theirs is ever drawn from; the faces that hold theirs are.
    let starved = scene_of_light(lights[1].1).render_measured(Variant {
        max_binding: Some(64 << 10),
        ..default()
    });
    let kept_views = from_kept(&starved);
    let incomplete: Vec<&String> = starved
        .views
        .iter()
        .filter(|(_, s)| !s.complete())
        .map(|(view, _)| view)
        .collect();
    println!("64 KiB bindings: incomplete {incomplete:?}, drawn from copies {kept_views:?}");
    assert!(
        !incomplete.is_empty(),
        "some views cannot hold their splats"
    );
    assert!(
        incomplete.iter().all(|view| !kept_views.contains(view)),
        "incomplete views are never drawn from a copy"
    );
    assert_eq!(
        kept_views.len() + incomplete.len(),
        starved.views.len(),
        "the complete views are"
    );

    // A cloud with a `SplatShader` (which may follow the time) is drawn anew every
    // frame, casting what it casts without one.
    let scene = scene_of_light(lights[1].1);
    let hooked = scene.render_measured(Variant {
        hooked: true,
        ..default()
    });
    assert!(!hooked.views.is_empty(), "the hooked cloud casts");
    assert!(
        from_kept(&hooked).is_empty(),
        "a hooked cloud's views are never kept"
    );
    let plain = scene.render(redraw);
    assert_eq!(max_difference(&hooked.image.pixels, &plain.pixels), 0);
}

/// `SplatShadowScale(2)`: the splats drawn into the maps at half their resolution a
/// side, each of their texels covering 2×2 of the map's, still cast the CPU's
/// silhouette, from a quarter of the tiles; a scale that does not divide the map is
/// halved until it does.
#[test]
fn a_coarser_splat_shadow_scale_casts_the_same_silhouette_from_fewer_tiles() {
    let scene = |light| {
        let mut scene = angel_scene(light, top_down());
        scene.shadow_map = 512;
        scene
    };
    let lights = [
        (
            "directional",
            Light::Directional {
                direction: SLANTED_SUN,
                cascades: 1,
            },
        ),
        (
            "point",
            Light::Point {
                position: Vec3::new(-1.0, 3.4, -0.8),
            },
        ),
    ];
    for (name, light) in lights {
        let scene = scene(light);
        let tiles = |variant| {
            let (_, views) = scene.render_counted(variant);
            views.iter().map(|(_, s)| s.tiles_drawn).sum::<u32>()
        };
        let halved = Variant {
            scale: Some(2),
            ..default()
        };
        let full_tiles = tiles(Variant::default());
        let halved_tiles = tiles(halved);
        // 3: halved to 2, which divides 512 (and 256 for the point light's faces).
        let three_tiles = tiles(Variant {
            scale: Some(3),
            ..default()
        });
        println!("{name}: tiles drawn at scale 1 {full_tiles}, 2 {halved_tiles}, 3 {three_tiles}");
        assert!(
            halved_tiles * 3 < full_tiles,
            "{name}: a quarter of the tiles ({halved_tiles} against {full_tiles})"
        );
        assert_eq!(three_tiles, halved_tiles, "{name}: 3 acts as 2");
        let full = check_shadow(&scene, Variant::default(), &format!("{name}, scale 1"), 0.9);
        let coarse = check_shadow(&scene, halved, &format!("{name}, scale 2"), 0.9);
        println!("{name}: IoU {full:.3} at scale 1, {coarse:.3} at scale 2");
    }
}

#[test]
fn a_point_light_casts_through_its_cube_faces() {
    let scene = angel_scene(
        Light::Point {
            position: Vec3::new(-1.0, 3.4, -0.8),
        },
        View::TopDown {
            centre: Vec3::new(0.8, 0.0, 0.6),
            width: 5.0,
        },
    );
    check_shadow(&scene, Variant::default(), "point", 0.9);
}

#[test]
fn a_spot_light_casts_through_its_view() {
    let scene = angel_scene(
        Light::Spot {
            position: Vec3::new(-0.6, 3.6, -0.5),
        },
        View::TopDown {
            centre: Vec3::new(0.4, 0.0, 0.3),
            width: 4.0,
        },
    );
    check_shadow(&scene, Variant::default(), "spot", 0.9);
}

/// Lights with values that make no sense (a NaN direction) or an odd place (inside
/// the cloud): the frames are drawn, nothing panics, and the cloud only ever darkens
/// the floor.
#[test]
fn lights_with_degenerate_values_neither_panic_nor_cast_garbage() {
    for (name, light) in [
        (
            "a directional light with a NaN direction",
            Light::Directional {
                direction: Vec3::NAN,
                cascades: 2,
            },
        ),
        (
            "a point light inside the cloud",
            Light::Point {
                position: Vec3::new(0.0, 0.5, 0.0),
            },
        ),
    ] {
        let scene = angel_scene(light, top_down());
        let with = scene.render(Variant::default());
        let without = scene.render(Variant {
            no_cloud: true,
            ..default()
        });
        // A light inside the cloud is wholly shadowed by it (or nearly): never
        // brighter than without the cloud.
        let brighter = with
            .rgb()
            .iter()
            .zip(without.rgb())
            .filter(|(a, b)| **a > b.saturating_add(2))
            .count();
        assert_eq!(
            brighter, 0,
            "{name}: {brighter} values brighter with the cloud"
        );
    }
}

#[test]
fn a_light_with_splat_lod_casts_cuts_of_the_trees() {
    let scene = angel_scene(
        Light::Directional {
            direction: SLANTED_SUN,
            cascades: 1,
        },
        top_down(),
    );
    // Nodes down to a shadow-map texel: the silhouette holds.
    let texel = SplatLod {
        budget: u32::MAX,
        pixel_scale: 1.0,
        ..default()
    };
    let fine = Variant {
        light_lod: Some(texel),
        ..default()
    };
    let fine = check_shadow(&scene, fine, "directional_lod", 0.9);
    // Nodes of 24 texels: coarser, and further from the splats' own silhouette, so
    // the cut is what draws.
    let coarse = Variant {
        light_lod: Some(SplatLod {
            pixel_scale: 24.0,
            ..texel
        }),
        ..default()
    };
    let coarse = check_shadow(&scene, coarse, "directional_lod_coarse", 0.5);
    assert!(
        coarse < fine - 0.01,
        "24-texel nodes {coarse:.3}, 1-texel {fine:.3}"
    );
}

#[test]
fn clouds_that_must_not_cast_leave_the_floor_lit() {
    let scene = angel_scene(
        Light::Directional {
            direction: SLANTED_SUN,
            cascades: 1,
        },
        top_down(),
    );
    let bare = scene.render(Variant {
        no_cloud: true,
        ..default()
    });
    for (name, variant) in [
        (
            "NotShadowCaster",
            Variant {
                not_caster: true,
                ..default()
            },
        ),
        (
            "a layer the light does not see",
            Variant {
                other_layer: true,
                ..default()
            },
        ),
    ] {
        let (image, views) = scene.render_counted(variant);
        let worst = reference_raster::max_difference(&image.rgb(), &bare.rgb());
        assert!(worst <= 1, "{name}: the floor differs by {worst}");
        assert!(views.is_empty(), "{name}: views drew splats: {views:?}");
    }
    // The plain scene does cast: the comparison above can fail.
    let cast = scene.render(Variant::default());
    assert!(reference_raster::max_difference(&cast.rgb(), &bare.rgb()) > 40);
    // Without shadow maps nothing is drawn into them, and nothing breaks.
    let unshadowed = Variant {
        no_shadow_maps: true,
        ..default()
    };
    let plain = Variant {
        no_cloud: true,
        no_shadow_maps: true,
        ..default()
    };
    let worst = reference_raster::max_difference(
        &scene.render(unshadowed).rgb(),
        &scene.render(plain).rgb(),
    );
    assert!(
        worst <= 1,
        "a light without shadow maps: the floor differs by {worst}"
    );
}

/// The angel under a one-cascade sun, with shadow maps of `shadow_map` texels on a
/// side: small maps put the angel into a few tiles with long lists.
fn chunk_scene(shadow_map: usize) -> Scene {
    let mut scene = angel_scene(
        Light::Directional {
            direction: Vec3::new(0.3, -1.0, 0.2),
            cascades: 1,
        },
        top_down(),
    );
    scene.shadow_map = shadow_map;
    scene
}

/// Seen from the light, the angel falls into a few tiles of a small map, whose lists
/// are far longer than a chunk: drawn in chunks, each by its own workgroup, the shadow
/// is the one drawn tile by tile, and so it is where the room for chunks runs out
/// part of the way (the tiles that do not fit are drawn whole). A 32² map has 16
/// tiles, so the angel's 71 K splats (each in at least one tile's list) give some
/// tile more than 2 × 2,048 pairs, the chunk length (while this was written: 6 tiles
/// drawn in 72 chunks at 64²).
#[test]
fn long_tile_lists_drawn_in_chunks_cast_the_shadow_whole_tiles_cast() {
    let scene = chunk_scene(32);
    let (chunked, views) = scene.render_counted(Variant::default());
    let chunks: u32 = views.iter().map(|(_, s)| s.tile_chunks).sum();
    println!("{chunks} chunks");
    assert!(chunks > 0, "the map's long lists are cut: {views:?}");
    let whole = scene.render(Variant {
        max_tile_chunks: Some(0),
        ..default()
    });
    let some_room = scene.render(Variant {
        max_tile_chunks: Some(12),
        ..default()
    });
    let bare = scene.render(Variant {
        no_cloud: true,
        ..default()
    });
    let shadowed = shadow_mask(&chunked, &bare)
        .iter()
        .filter(|p| **p == Some(true))
        .count();
    let worst = max_difference(&chunked.rgb(), &whole.rgb());
    let worst_some = max_difference(&some_room.rgb(), &whole.rgb());
    println!(
        "{shadowed} shadowed pixels; against whole tiles: chunks {worst}/255, \
         room for 12 chunks {worst_some}/255 at most"
    );
    assert!(
        shadowed > 100,
        "the angel casts a shadow: {shadowed} pixels"
    );
    assert!(worst <= 1, "chunks against whole tiles: {worst}/255");
    assert!(
        worst_some <= 1,
        "room for 12 chunks against whole tiles: {worst_some}/255"
    );
}

/// Shadow views drawn in bands of tile rows (2 MiB storage bindings: two bands here)
/// cut their long tiles into chunks band by band, and cast the shadow whole tiles
/// cast (while this was written: 35 and 30 chunks in the two bands).
#[test]
fn chunks_in_banded_shadow_views_cast_the_shadow_whole_tiles_cast() {
    let scene = chunk_scene(128);
    let banded = Variant {
        max_binding: Some(2 << 20),
        ..default()
    };
    let (chunked, views) = scene.render_counted(banded);
    let bands: Vec<(u32, u32)> = views
        .iter()
        .map(|(_, s)| (s.bands, s.tile_chunks))
        .collect();
    println!("(bands, chunks) per view: {bands:?}");
    assert!(
        bands
            .iter()
            .all(|&(bands, chunks)| bands >= 2 && chunks > 0),
        "banded views that cut long lists: {bands:?}"
    );
    let whole = scene.render(Variant {
        max_tile_chunks: Some(0),
        ..banded
    });
    let worst = max_difference(&chunked.rgb(), &whole.rgb());
    println!("banded: chunks against whole tiles {worst}/255 at most");
    assert!(worst <= 1, "banded: chunks against whole tiles {worst}/255");
}
