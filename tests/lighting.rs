//! Splats that receive light (`SplatLighting`), on lavapipe: a mesh cube between a
//! light and a wall of splats shadows exactly the splats whose centres the CPU finds
//! behind the cube (`Shadowed`), for a directional and a point light, with MSAA and
//! without; `Lit` gives each splat its albedo times Bevy's ambient and direct light;
//! `Unlit` and `NotShadowReceiver` leave the image as it was; bad lights (a NaN
//! direction, a zero range) add nothing and degenerate splats (zero or huge scales)
//! are lit or culled, never a panic or a spoiled image.
//!
//! The wall's splats lie on a grid and the cube's shadow edges fall half-way between
//! grid lines, so a splat is in shadow or out of it, whatever the shadow filter. The
//! cube is on a render layer the camera does not see: the image is the wall alone.

mod common;
mod reference_raster;

use bevy::camera::visibility::RenderLayers;
use bevy::camera::{Exposure, ScalingMode};
use bevy::light::{
    CascadeShadowConfigBuilder, DirectionalLightShadowMap, NotShadowReceiver, PointLightShadowMap,
    ShadowFilteringMethod,
};
use bevy::math::{DMat4, UVec2};
use bevy::prelude::*;
use bevy::render::view::Msaa;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::headless::{Headless, Rgba8};
use bevy_splat::{GaussianSplats, SplatLighting, SplatLod};

use reference_raster::{CpuCloud, PinholeCamera, rasterize, to_unorm8};

const SH_C0: f32 = 0.282_094_8;
const SIZE: UVec2 = UVec2::new(128, 128);
/// Grid spacing of the wall's splats, and how many lie across it.
const SPACING: f32 = 0.05;
const ACROSS: i32 = 41;
/// The wall's trained grey.
const ALBEDO: f32 = 0.8;
/// The cube's half-size; the light and the camera see layer 0, only the light this.
const CUBE_HALF: f32 = 0.3;
const CUBE_LAYER: usize = 1;
/// The camera's exposure (`Exposure { ev100: 0 }`): 1 / 1.2.
const EXPOSURE: f32 = 1.0 / 1.2;

/// Flat discs facing +Z, on a grid centred on the origin. The wall leans by 1 % in x
/// (and 0.02 % in y) so that no two splats are at the same depth: where a dark and a
/// light splat overlap at one depth, the order they blend in is the GPU's to choose.
fn wall_positions() -> Vec<Vec3> {
    let half = ACROSS / 2;
    (-half..=half)
        .flat_map(|y| {
            (-half..=half).map(move |x| {
                let (x, y) = (x as f32 * SPACING, y as f32 * SPACING);
                Vec3::new(x, y, 0.01 * x + 0.0002 * y)
            })
        })
        .collect()
}

/// The wall, each splat at `colour(position)`, with scales `scale` (in-plane, in-plane,
/// across).
fn wall_with(colour: impl Fn(Vec3) -> f32, scale: [f32; 3]) -> GaussianSplats {
    let positions = wall_positions();
    let geometry = positions
        .iter()
        .map(|p| SplatGeometry {
            position: p.to_array(),
            opacity_logit: (0.95f32 / 0.05).ln(),
            rotation: [1.0, 0.0, 0.0, 0.0],
            log_scale: scale.map(f32::ln),
            _pad: 0.0,
        })
        .collect();
    let sh = positions
        .iter()
        .flat_map(|p| [(colour(*p) - 0.5) / SH_C0; 3])
        .collect();
    GaussianSplats::new(geometry, sh, 0).expect("a valid wall")
}

fn wall(colour: impl Fn(Vec3) -> f32) -> GaussianSplats {
    wall_with(colour, [0.03, 0.03, 0.002])
}

/// Where the cube stands.
#[derive(Clone, Copy)]
struct Cube(Vec3);

impl Cube {
    /// Whether the ray from `p` toward `to_light` (a direction) or to a point light at
    /// `to_light` meets the cube (slab test).
    fn blocks(self, p: Vec3, light: LightKind) -> bool {
        let (direction, reach) = match light {
            LightKind::Directional { travel } => (-travel.normalize(), f32::INFINITY),
            LightKind::Point { position } => ((position - p).normalize(), (position - p).length()),
        };
        let (mut near, mut far) = (0.0f32, reach);
        for axis in 0..3 {
            let (lo, hi) = (self.0[axis] - CUBE_HALF, self.0[axis] + CUBE_HALF);
            if direction[axis].abs() < 1e-9 {
                if p[axis] < lo || p[axis] > hi {
                    return false;
                }
                continue;
            }
            let (a, b) = (
                (lo - p[axis]) / direction[axis],
                (hi - p[axis]) / direction[axis],
            );
            near = near.max(a.min(b));
            far = far.min(a.max(b));
        }
        near <= far
    }
}

#[derive(Clone, Copy)]
enum LightKind {
    /// Travelling along `travel`.
    Directional {
        travel: Vec3,
    },
    Point {
        position: Vec3,
    },
}

struct Scene {
    light: LightKind,
    /// Lux (directional) or lumens (point).
    intensity: f32,
    /// A point light's range.
    range: f32,
    ambient: f32,
    cube: Option<Cube>,
    lighting: Option<SplatLighting>,
    not_receiver: bool,
    msaa: bool,
    filter: ShadowFilteringMethod,
    /// A directional light's cascades; with more than one, the camera looks at the
    /// wall in perspective, from the side, so the wall spans them.
    cascades: usize,
    /// The camera draws cuts of the clouds' trees (`SplatLod`).
    camera_lod: Option<SplatLod>,
}

impl Scene {
    fn directional() -> Self {
        Self {
            // Tilted along x: the cube's shadow edges land half-way between columns
            // (x from cube.x − 0.125 to cube.x + 0.625).
            light: LightKind::Directional {
                travel: Vec3::new(0.25, 0.0, -1.0),
            },
            intensity: 1_000.0,
            range: 20.0,
            ambient: 0.0,
            cube: Some(Cube(Vec3::new(-0.25, 0.025, 1.0))),
            lighting: Some(SplatLighting::SHADOWED),
            not_receiver: false,
            msaa: false,
            filter: ShadowFilteringMethod::Hardware2x2,
            cascades: 1,
            camera_lod: None,
        }
    }

    fn point() -> Self {
        Self {
            // The cube's edges (±0.3 at z = 1.3) reach the wall at ±0.525.
            light: LightKind::Point {
                position: Vec3::new(0.0, 0.0, 3.0 + 1.0 / 30.0),
            },
            intensity: 100_000.0,
            cube: Some(Cube(Vec3::new(0.0, 0.0, 1.0))),
            ..Self::directional()
        }
    }

    fn camera_transform(&self) -> Transform {
        if self.cascades > 1 {
            Transform::from_xyz(2.0, 0.3, 2.6).looking_at(Vec3::ZERO, Vec3::Y)
        } else {
            Transform::from_xyz(0.0, 0.0, 5.0).looking_at(Vec3::ZERO, Vec3::Y)
        }
    }

    /// The perspective camera's vertical field of view.
    const FOV_Y: f32 = 0.9;

    fn projection(&self) -> Projection {
        if self.cascades > 1 {
            return Projection::Perspective(PerspectiveProjection {
                fov: Self::FOV_Y,
                aspect_ratio: 1.0,
                near: 0.05,
                ..default()
            });
        }
        Projection::Orthographic(OrthographicProjection {
            scaling_mode: ScalingMode::Fixed {
                width: Self::VIEW_WIDTH,
                height: Self::VIEW_WIDTH,
            },
            near: 0.0,
            far: 20.0,
            ..OrthographicProjection::default_3d()
        })
    }

    /// The CPU reference's image of `splats` from the test camera.
    fn reference(&self, splats: &GaussianSplats) -> Vec<[f64; 4]> {
        let camera = if self.cascades > 1 {
            PinholeCamera::from_bevy(&self.camera_transform(), Self::FOV_Y, SIZE.x, SIZE.y, 0.05)
        } else {
            PinholeCamera::orthographic_from_bevy(
                &self.camera_transform(),
                Self::VIEW_WIDTH,
                SIZE.x,
                SIZE.y,
                0.0,
            )
        };
        rasterize(
            &[CpuCloud {
                geometry: splats.geometry(),
                sh: splats.sh(),
                sh_degree: splats.sh_degree(),
                world_from_cloud: DMat4::IDENTITY,
            }],
            &camera,
        )
    }

    /// World units the camera shows across.
    const VIEW_WIDTH: f32 = 2.2;

    fn render(&self, splats: GaussianSplats) -> Rgba8 {
        let mut headless = Headless::new(common::headless_plugins());
        let world = headless.app.world_mut();
        world.insert_resource(DirectionalLightShadowMap { size: 1024 });
        world.insert_resource(PointLightShadowMap { size: 1024 });
        world.insert_resource(GlobalAmbientLight {
            color: Color::WHITE,
            brightness: self.ambient,
            ..default()
        });
        let layers = RenderLayers::from_layers(&[0, CUBE_LAYER]);
        match self.light {
            LightKind::Directional { travel } => {
                world.spawn((
                    DirectionalLight {
                        illuminance: self.intensity,
                        shadow_maps_enabled: true,
                        ..default()
                    },
                    Transform::default().looking_to(travel, Vec3::Y),
                    if self.cascades > 1 {
                        // The wall lies 2.8 to 4.2 from the side camera.
                        CascadeShadowConfigBuilder {
                            num_cascades: self.cascades,
                            minimum_distance: 0.1,
                            first_cascade_far_bound: 3.2,
                            maximum_distance: 5.0,
                            overlap_proportion: 0.2,
                        }
                    } else {
                        CascadeShadowConfigBuilder {
                            num_cascades: 1,
                            minimum_distance: 0.1,
                            first_cascade_far_bound: 6.0,
                            maximum_distance: 6.0,
                            overlap_proportion: 0.2,
                        }
                    }
                    .build(),
                    layers,
                ));
            }
            LightKind::Point { position } => {
                world.spawn((
                    PointLight {
                        intensity: self.intensity,
                        range: self.range,
                        shadow_maps_enabled: true,
                        ..default()
                    },
                    Transform::from_translation(position),
                    layers,
                ));
            }
        }
        if let Some(Cube(centre)) = self.cube {
            let mesh = world
                .resource_mut::<Assets<Mesh>>()
                .add(Cuboid::from_length(2.0 * CUBE_HALF));
            let material = world
                .resource_mut::<Assets<StandardMaterial>>()
                .add(StandardMaterial::default());
            world.spawn((
                Mesh3d(mesh),
                MeshMaterial3d(material),
                Transform::from_translation(centre),
                RenderLayers::layer(CUBE_LAYER),
            ));
        }
        let handle = headless.add_splats(splats);
        let cloud = headless.spawn_cloud(handle, Transform::IDENTITY);
        let mut entity = headless.app.world_mut().entity_mut(cloud);
        if let Some(lighting) = self.lighting {
            entity.insert(lighting);
        }
        if self.not_receiver {
            entity.insert(NotShadowReceiver);
        }
        let camera = headless.spawn_camera(self.camera_transform(), self.projection(), SIZE, None);
        headless.app.world_mut().entity_mut(camera.entity).insert((
            self.filter,
            Exposure { ev100: 0.0 },
            if self.msaa { Msaa::Sample4 } else { Msaa::Off },
        ));
        if let Some(lod) = self.camera_lod {
            headless
                .app
                .world_mut()
                .entity_mut(camera.entity)
                .insert(lod);
        }
        headless
            .render(std::slice::from_ref(&camera))
            .expect("a frame");
        if self.camera_lod.is_some() {
            common::update_until_lod_trees_are_built(&mut headless);
        }
        // A few frames more: the light pass compiles the first frame a cloud asks.
        for _ in 0..6 {
            headless.app.update();
        }
        headless.read_back(&camera).expect("the image")
    }

    /// Whether the cube shadows the wall point `p`.
    fn shadowed(&self, p: Vec3) -> bool {
        self.cube.is_some_and(|cube| cube.blocks(p, self.light))
    }
}

/// The largest channel difference against the reference, and the share of pixels off
/// by more than 2/255.
fn compare(gpu: &Rgba8, cpu: &[[f64; 4]]) -> (u8, f64) {
    let mut worst = 0;
    let mut off = 0;
    for (i, pixel) in cpu.iter().enumerate() {
        let (x, y) = (i as u32 % SIZE.x, i as u32 / SIZE.x);
        let ours = gpu.pixel(x, y);
        let diff = (0..3)
            .map(|c| ours[c].abs_diff(to_unorm8(pixel[c])))
            .max()
            .unwrap_or(0);
        worst = worst.max(diff);
        off += usize::from(diff > 2);
    }
    (worst, off as f64 / cpu.len() as f64)
}

fn save(image: &Rgba8, name: &str) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("lighting");
    let _ = std::fs::create_dir_all(&dir);
    let _ = image.save_png(dir.join(format!("{name}.png")));
}

/// The cube's shadow on the wall against the CPU's: every splat whose centre the cube
/// hides from the light goes black (`Shadowed` at strength 1), every other keeps its
/// trained colour.
fn assert_shadow_matches(scene: &Scene, name: &str) {
    let gpu = scene.render(wall(|_| ALBEDO));
    save(&gpu, name);
    let shadowed = wall_positions()
        .into_iter()
        .filter(|p| scene.shadowed(*p))
        .count();
    assert!(
        shadowed > 100,
        "the test cube should shadow many splats ({shadowed})"
    );
    let expected = wall(|p| if scene.shadowed(p) { 0.0 } else { ALBEDO });
    let (worst, share) = compare(&gpu, &scene.reference(&expected));
    println!(
        "{name}: {shadowed} splats in shadow; max difference {worst}/255, {:.3}% of pixels off by more than 2",
        share * 100.0
    );
    assert!(
        worst <= 3 && share <= 0.001,
        "{name}: the shadowed wall differs from the CPU's (max {worst}/255, {:.3}% of pixels)",
        share * 100.0
    );
}

#[test]
fn a_cube_shadows_exactly_the_splats_behind_it_from_a_directional_light() {
    assert_shadow_matches(&Scene::directional(), "directional");
}

#[test]
fn the_shadow_is_the_same_with_msaa_and_bevys_default_filter() {
    let scene = Scene {
        msaa: true,
        filter: ShadowFilteringMethod::Gaussian,
        ..Scene::directional()
    };
    assert_shadow_matches(&scene, "directional_msaa_gaussian");
}

#[test]
fn a_cube_shadows_exactly_the_splats_behind_it_from_a_point_light() {
    assert_shadow_matches(&Scene::point(), "point");
}

#[test]
fn half_strength_halves_the_shadow() {
    let scene = Scene {
        lighting: Some(SplatLighting::Shadowed { strength: 0.5 }),
        ..Scene::directional()
    };
    let gpu = scene.render(wall(|_| ALBEDO));
    let expected = wall(|p| {
        if scene.shadowed(p) {
            ALBEDO * 0.5
        } else {
            ALBEDO
        }
    });
    let (worst, share) = compare(&gpu, &scene.reference(&expected));
    assert!(
        worst <= 3 && share <= 0.001,
        "half-strength shadow: max {worst}/255, {:.3}% of pixels",
        share * 100.0
    );
}

#[test]
fn unlit_and_not_receiving_clouds_are_drawn_as_they_were() {
    let plain = Scene {
        cube: None,
        lighting: None,
        ..Scene::directional()
    }
    .render(wall(|_| ALBEDO));
    let (worst, share) = compare(&plain, &Scene::directional().reference(&wall(|_| ALBEDO)));
    assert!(
        worst <= 2 && share == 0.0,
        "the plain wall: max {worst}/255"
    );
    for (name, scene) in [
        (
            "Unlit",
            Scene {
                lighting: Some(SplatLighting::Unlit),
                ..Scene::directional()
            },
        ),
        (
            "NotShadowReceiver",
            Scene {
                not_receiver: true,
                ..Scene::directional()
            },
        ),
    ] {
        let image = scene.render(wall(|_| ALBEDO));
        assert!(
            image.rgb() == plain.rgb(),
            "{name}: the wall should be drawn exactly as without the light and cube"
        );
    }
}

#[test]
fn lit_splats_take_ambient_and_direct_light_as_albedo() {
    // Straight on: n·l = 1. Direct light E/π·exposure = 0.5, ambient·exposure = 0.25.
    let direct = 0.5;
    let ambient = 0.25;
    let scene = Scene {
        light: LightKind::Directional {
            travel: Vec3::new(0.25, 0.0, -1.0),
        },
        // The light meets the wall at cos θ = 1/|(0.25, 0, 1)|.
        intensity: direct * std::f32::consts::PI / EXPOSURE * Vec3::new(0.25, 0.0, 1.0).length(),
        ambient: ambient / EXPOSURE,
        lighting: Some(SplatLighting::Lit),
        ..Scene::directional()
    };
    let gpu = scene.render(wall(|_| ALBEDO));
    save(&gpu, "lit");
    let expected = wall(|p| {
        let direct = if scene.shadowed(p) { 0.0 } else { direct };
        ALBEDO * (ambient + direct)
    });
    let (worst, share) = compare(&gpu, &scene.reference(&expected));
    println!("lit: max difference {worst}/255, {:.3}% off", share * 100.0);
    assert!(
        worst <= 3 && share <= 0.001,
        "Lit: max {worst}/255, {:.3}% of pixels",
        share * 100.0
    );
}

/// `Lit` under `scene`, with an ambient light of 0.25 after exposure: the wall as the
/// CPU sees it with each splat at `expected(position)` times its albedo.
fn assert_lit(scene: Scene, splats: GaussianSplats, expected: impl Fn(Vec3) -> f32, name: &str) {
    let gpu = scene.render(splats);
    save(&gpu, name);
    let (worst, share) = compare(&gpu, &scene.reference(&wall(|p| ALBEDO * expected(p))));
    assert!(
        worst <= 3 && share <= 0.001,
        "{name}: max {worst}/255, {:.3}% of pixels",
        share * 100.0
    );
}

#[test]
fn bad_lights_add_nothing_and_spoil_nothing() {
    let ambient = 0.25;
    // A directional light aimed along a NaN vector (Bevy's `looking_to` keeps its
    // rotation valid; a NaN rotation stops Bevy itself, in bevy_math, before any
    // renderer sees it): shadows may fall, but the wall only ever darkens.
    let nan = LightKind::Directional {
        travel: Vec3::new(f32::NAN, 0.0, -1.0),
    };
    let shadowed = Scene {
        light: nan,
        ..Scene::directional()
    }
    .render(wall(|_| ALBEDO));
    let plain = Scene::directional().reference(&wall(|_| ALBEDO));
    for (i, pixel) in plain.iter().enumerate() {
        let (x, y) = (i as u32 % SIZE.x, i as u32 / SIZE.x);
        let ours = shadowed.pixel(x, y);
        assert!(
            (0..3).all(|c| ours[c] <= to_unorm8(pixel[c]).saturating_add(2)),
            "pixel ({x}, {y}) brighter than the unlit wall: {ours:?}"
        );
    }
    // A point light of zero range reaches nothing: ambient light alone.
    let point = Scene {
        range: 0.0,
        ambient: ambient / EXPOSURE,
        lighting: Some(SplatLighting::Lit),
        ..Scene::point()
    };
    assert_lit(point, wall(|_| ALBEDO), |_| ambient, "lit_zero_range");
}

#[test]
fn degenerate_splats_are_lit_or_culled_without_harm() {
    // Discs of zero thickness are lit like any other.
    let direct = 0.5;
    let scene = Scene {
        intensity: direct * std::f32::consts::PI / EXPOSURE * Vec3::new(0.25, 0.0, 1.0).length(),
        lighting: Some(SplatLighting::Lit),
        ..Scene::directional()
    };
    let shadowed = |p| scene.shadowed(p);
    let gpu = scene.render(wall_with(|_| ALBEDO, [0.03, 0.03, 0.0]));
    let expected = wall(|p| if shadowed(p) { 0.0 } else { ALBEDO * direct });
    let (worst, share) = compare(&gpu, &scene.reference(&expected));
    assert!(
        worst <= 3 && share <= 0.001,
        "zero-thickness discs: max {worst}/255, {:.3}% of pixels",
        share * 100.0
    );
    // Points (every scale zero) and splats too large to draw: no panic, an image.
    for scale in [[0.0; 3], [0.03, 0.03, 1e30]] {
        let scene = Scene {
            lighting: Some(SplatLighting::Lit),
            ..Scene::directional()
        };
        let image = scene.render(wall_with(|_| ALBEDO, scale));
        assert_eq!(image.rgb().len(), (SIZE.x * SIZE.y * 3) as usize);
    }
}

#[test]
fn the_shadow_is_the_same_across_several_cascades() {
    // Seen in perspective from the side, the wall spans three cascades and the blends
    // between them.
    let scene = Scene {
        cascades: 3,
        ..Scene::directional()
    };
    assert_shadow_matches(&scene, "directional_cascades");
}

#[test]
fn a_camera_drawing_level_of_detail_cuts_shadows_the_same_splats() {
    // A budget above the wall's splats: the cut is the leaves, drawn through the
    // preprocess's LOD variant with RECEIVE.
    let scene = Scene {
        camera_lod: Some(SplatLod::with_budget(1_000_000)),
        ..Scene::directional()
    };
    assert_shadow_matches(&scene, "directional_camera_lod");
}
