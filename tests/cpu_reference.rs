//! The GPU pipeline against the plain CPU rasterizer in `reference_raster` on tiny
//! synthetic scenes, each aimed at one way a tile rasterizer can go wrong.

mod common;
mod reference_raster;

use bevy::camera::ScalingMode;
use bevy::math::{DMat4, UVec2, Vec3};
use bevy::prelude::{OrthographicProjection, PerspectiveProjection, Projection};
use bevy::transform::components::Transform;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::headless::Headless;
use bevy_splat::{GaussianSplats, SplatStats, SplatStorage, SplatViewStats};

use common::random::Rng;
use reference_raster::{CpuCloud, PinholeCamera, rasterize, to_unorm8};

const SH_C0: f32 = 0.282_094_8;
const FOV_Y: f32 = 1.0;
const NEAR: f32 = 0.01;

/// One splat, described in activated terms.
#[derive(Clone, Copy)]
struct Splat {
    position: [f32; 3],
    scale: [f32; 3],
    rotation: [f32; 4],
    opacity_logit: f32,
    colour: [f32; 3],
}

impl Splat {
    fn new(position: [f32; 3], scale: f32, opacity: f32, colour: [f32; 3]) -> Self {
        Self {
            position,
            scale: [scale; 3],
            rotation: [1.0, 0.0, 0.0, 0.0],
            opacity_logit: (opacity / (1.0 - opacity)).ln(),
            colour,
        }
    }

    fn geometry(&self) -> SplatGeometry {
        SplatGeometry {
            position: self.position,
            opacity_logit: self.opacity_logit,
            rotation: self.rotation,
            log_scale: self.scale.map(f32::ln),
            _pad: 0.0,
        }
    }
}

fn cloud(splats: &[Splat]) -> GaussianSplats {
    let geometry = splats.iter().map(Splat::geometry).collect();
    let sh = splats
        .iter()
        .flat_map(|s| s.colour.map(|c| (c - 0.5) / SH_C0))
        .collect();
    // f32 storage: the CPU reference reads the same f32 values.
    GaussianSplats::new(geometry, sh, 0)
        .unwrap()
        .with_storage(SplatStorage::Full)
}

/// How a GPU image compares with the CPU reference.
struct Comparison {
    /// The largest channel difference, in 1/255.
    worst: u8,
    /// The share of pixels off by more than 1/255.
    share: f64,
    /// Pixels the reference covers.
    lit: usize,
    /// What the GPU reported for the camera.
    stats: Option<SplatViewStats>,
}

/// Renders `splats` on the GPU and on the CPU from the origin looking down −Z, and
/// returns the largest channel difference and the share of pixels off by more than 1.
fn compare_cloud(cloud: GaussianSplats, size: UVec2) -> (u8, f64, usize) {
    let c = compare_from(cloud, size, Transform::IDENTITY);
    (c.worst, c.share, c.lit)
}

/// Like `compare_cloud`, from any camera pose.
fn compare_from(cloud: GaussianSplats, size: UVec2, transform: Transform) -> Comparison {
    let reference = cloud.clone();
    compare_from_against(cloud, &reference, size, transform)
}

/// `compare_from` with the CPU drawing `reference`: the same splats as the GPU should
/// see them.
fn compare_from_against(
    cloud: GaussianSplats,
    reference: &GaussianSplats,
    size: UVec2,
    transform: Transform,
) -> Comparison {
    let projection = PerspectiveProjection {
        fov: FOV_Y,
        aspect_ratio: size.x as f32 / size.y as f32,
        near: NEAR,
        ..Default::default()
    };
    let pinhole = PinholeCamera::from_bevy(&transform, FOV_Y, size.x, size.y, NEAR);
    compare_against(
        cloud,
        reference,
        size,
        transform,
        projection.into(),
        pinhole,
    )
}

/// Renders `cloud` with a Bevy camera of `projection` at `transform` and on the CPU
/// with `pinhole`, the same camera.
fn compare_with(
    cloud: GaussianSplats,
    size: UVec2,
    transform: Transform,
    projection: Projection,
    pinhole: PinholeCamera,
) -> Comparison {
    let reference = cloud.clone();
    compare_against(cloud, &reference, size, transform, projection, pinhole)
}

/// Renders `cloud` on the GPU and `reference` (the same splats as the CPU should see
/// them) on the CPU.
fn compare_against(
    cloud: GaussianSplats,
    reference: &GaussianSplats,
    size: UVec2,
    transform: Transform,
    projection: Projection,
    pinhole: PinholeCamera,
) -> Comparison {
    let mut headless = Headless::new(common::headless_plugins());
    let handle = headless.add_splats(cloud);
    headless.spawn_cloud(handle, Transform::IDENTITY);
    let camera = headless.spawn_camera(transform, projection, size, None);
    let gpu = headless
        .render(std::slice::from_ref(&camera))
        .unwrap()
        .remove(0);

    let cpu = rasterize(
        &[CpuCloud {
            geometry: reference.geometry(),
            sh: reference.sh(),
            sh_degree: reference.sh_degree(),
            world_from_cloud: DMat4::IDENTITY,
        }],
        &pinhole,
    );
    let mut worst = 0;
    let mut off = 0;
    let mut lit = 0;
    for (i, pixel) in cpu.iter().enumerate() {
        let x = (i as u32) % size.x;
        let y = (i as u32) / size.x;
        let ours = gpu.pixel(x, y);
        let diff = (0..3)
            .map(|c| ours[c].abs_diff(to_unorm8(pixel[c])))
            .max()
            .unwrap_or(0);
        worst = worst.max(diff);
        lit += usize::from(pixel[3] > 0.01);
        off += usize::from(diff > 1);
    }
    Comparison {
        worst,
        share: off as f64 / cpu.len() as f64,
        lit,
        stats: headless
            .app
            .world()
            .resource::<SplatStats>()
            .get(camera.entity),
    }
}

fn assert_matches(splats: &[Splat], size: UVec2) {
    let (worst, share, lit) = compare_cloud(cloud(splats), size);
    assert!(lit > 0, "the scene should draw something");
    println!(
        "max difference {worst}/255, {:.3}% of pixels off by more than 1",
        share * 100.0
    );
    assert!(
        worst <= 2,
        "max difference {worst}/255 against the CPU reference"
    );
    assert!(
        share <= 0.001,
        "{:.3}% of pixels differ by more than 1/255",
        share * 100.0
    );
}

const SIZE: UVec2 = UVec2::new(72, 40);

/// Where a pixel's centre is seen at depth `z` (≥ 0, in front) by the test camera.
fn at_pixel(x: f32, y: f32, z: f32) -> [f32; 3] {
    let f = SIZE.y as f32 / 2.0 / (FOV_Y / 2.0).tan();
    let cx = SIZE.x as f32 / 2.0;
    let cy = SIZE.y as f32 / 2.0;
    [(x - cx) / f * z, -(y - cy) / f * z, -z]
}

#[test]
fn splats_straddling_tile_borders() {
    let splats = [
        Splat::new(at_pixel(16.0, 16.0, 3.0), 0.08, 0.9, [1.0, 0.2, 0.1]),
        Splat::new(at_pixel(32.0, 20.0, 2.5), 0.05, 0.6, [0.1, 0.9, 0.2]),
        Splat::new(at_pixel(48.0, 32.0, 4.0), 0.2, 0.99, [0.2, 0.3, 1.0]),
        Splat::new(at_pixel(70.0, 39.0, 3.0), 0.1, 0.8, [0.9, 0.9, 0.1]),
        // Centre off-screen, body on it: no centre-only frustum test.
        Splat::new(at_pixel(-6.0, 20.0, 3.0), 0.1, 0.95, [0.7, 0.1, 0.9]),
    ];
    assert_matches(&splats, SIZE);
}

#[test]
fn one_splat_covering_the_screen() {
    let mut big = Splat::new([0.0, 0.0, -2.0], 3.0, 0.7, [0.3, 0.6, 0.9]);
    big.scale = [3.0, 1.5, 0.5];
    big.rotation = [0.9, 0.1, 0.3, 0.2];
    assert_matches(&[big], SIZE);
}

#[test]
fn splats_behind_and_at_the_camera_are_culled() {
    let splats = [
        Splat::new([0.0, 0.0, 2.0], 0.5, 0.9, [1.0, 0.0, 0.0]),
        Splat::new([0.0, 0.0, 0.0], 0.5, 0.9, [0.0, 1.0, 0.0]),
        Splat::new([0.0, 0.0, -0.005], 0.5, 0.9, [0.0, 1.0, 1.0]),
        Splat::new(at_pixel(36.0, 20.0, 3.0), 0.1, 0.9, [0.0, 0.0, 1.0]),
    ];
    assert_matches(&splats, SIZE);
}

#[test]
fn invalid_values_never_draw() {
    let good = Splat::new(at_pixel(36.0, 20.0, 3.0), 0.1, 0.9, [0.9, 0.5, 0.1]);
    let mut splats = vec![good];
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut s = Splat::new(at_pixel(20.0, 20.0, 2.0), 0.3, 0.9, [0.0, 1.0, 0.0]);
        s.position[1] = bad;
        splats.push(s);
        let mut s = Splat::new(at_pixel(20.0, 20.0, 2.0), 0.3, 0.9, [0.0, 1.0, 0.0]);
        s.rotation[2] = bad;
        splats.push(s);
        let mut s = Splat::new(at_pixel(20.0, 20.0, 2.0), 0.3, 0.9, [0.0, 1.0, 0.0]);
        s.colour[0] = bad;
        splats.push(s);
    }
    let mut nan_scale = Splat::new(at_pixel(50.0, 20.0, 2.0), 0.3, 0.9, [0.0, 1.0, 0.0]);
    nan_scale.scale[0] = f32::NAN;
    let mut inf_scale = nan_scale;
    inf_scale.scale[0] = f32::INFINITY;
    let mut nan_opacity = nan_scale;
    nan_opacity.scale = [0.3; 3];
    nan_opacity.opacity_logit = f32::NAN;
    splats.extend([nan_scale, inf_scale, nan_opacity]);
    let (worst, share, lit) = compare_cloud(cloud(&splats), SIZE);
    assert!(
        lit > 0 && worst <= 2 && share <= 0.001,
        "max difference {worst}, {share}"
    );
}

#[test]
fn a_non_finite_higher_sh_coefficient_never_draws() {
    // Degree 3: the GPU tests the SH sum, not each coefficient, so every kind of bad
    // value in a coefficient of each degree (where the basis may be 0 along the view)
    // must still cull its splat.
    const STRIDE: usize = 48;
    let good = Splat::new(at_pixel(36.0, 20.0, 3.0), 0.1, 0.9, [0.9, 0.5, 0.1]);
    let mut splats = vec![good];
    let mut bad_at = vec![None];
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        for coefficient in [1usize, 4, 9, 15] {
            let x = 8.0 + 10.0 * (bad_at.len() % 6) as f32;
            let y = 8.0 + 12.0 * (bad_at.len() / 6) as f32;
            splats.push(Splat::new(at_pixel(x, y, 2.0), 0.2, 0.9, [0.0, 1.0, 0.0]));
            bad_at.push(Some((coefficient * 3, bad)));
        }
    }
    let geometry = splats.iter().map(Splat::geometry).collect();
    let mut sh = Vec::with_capacity(splats.len() * STRIDE);
    for (splat, bad) in splats.iter().zip(&bad_at) {
        let mut coefficients = [0.01f32; STRIDE];
        for (c, v) in splat.colour.iter().enumerate() {
            coefficients[c] = (v - 0.5) / SH_C0;
        }
        if let Some((at, value)) = bad {
            coefficients[*at] = *value;
        }
        sh.extend(coefficients);
    }
    let cloud = GaussianSplats::new(geometry, sh, 3)
        .unwrap()
        .with_storage(SplatStorage::Full);
    let (worst, share, lit) = compare_cloud(cloud, SIZE);
    assert!(
        lit > 0 && worst <= 2 && share <= 0.001,
        "max difference {worst}, {share}"
    );
}

#[test]
fn zero_quaternions_and_zero_scales() {
    let mut zero_q = Splat::new(at_pixel(20.0, 20.0, 2.0), 0.3, 0.9, [1.0, 0.0, 0.0]);
    zero_q.rotation = [0.0; 4];
    // Scale 0 (log-scale −∞): the 0.3 px screen blur still draws a dot.
    let dot = Splat::new(at_pixel(50.5, 20.5, 2.0), 0.0, 0.95, [1.0, 1.0, 1.0]);
    let mut flat = Splat::new(at_pixel(36.0, 10.0, 2.0), 0.2, 0.9, [0.2, 0.9, 0.4]);
    flat.scale[2] = 0.0;
    assert_matches(&[zero_q, dot, flat], SIZE);
}

#[test]
fn opacity_zero_and_one() {
    let mut opaque = Splat::new(at_pixel(24.0, 20.0, 3.0), 0.15, 0.5, [1.0, 0.5, 0.0]);
    opaque.opacity_logit = f32::INFINITY;
    let mut clear = Splat::new(at_pixel(48.0, 20.0, 3.0), 0.15, 0.5, [0.0, 0.5, 1.0]);
    clear.opacity_logit = f32::NEG_INFINITY;
    let nearly = Splat::new(at_pixel(36.0, 20.0, 2.0), 0.2, 0.999_999, [0.3, 1.0, 0.3]);
    let faint = Splat::new(at_pixel(36.0, 30.0, 2.0), 0.2, 0.003, [1.0, 1.0, 1.0]);
    assert_matches(&[opaque, clear, nearly, faint], SIZE);
}

#[test]
fn nothing_visible_renders_black() {
    let splats = [Splat::new([0.0, 0.0, 5.0], 0.5, 0.9, [1.0, 1.0, 1.0])];
    let (worst, _, lit) = compare_cloud(cloud(&splats), SIZE);
    assert_eq!((worst, lit), (0, 0));
    let (worst, _, lit) = compare_cloud(cloud(&[]), SIZE);
    assert_eq!((worst, lit), (0, 0));
}

#[test]
fn one_pixel_image() {
    let splats = [
        Splat::new([0.0, 0.0, -2.0], 0.01, 0.8, [0.9, 0.2, 0.4]),
        Splat::new([0.0, 0.0, -3.0], 0.5, 0.8, [0.1, 0.2, 0.9]),
    ];
    assert_matches(&splats, UVec2::ONE);
}

#[test]
fn many_overlapping_splats_saturate_like_the_reference() {
    // A deterministic pseudo-random scene dense enough that pixels reach T ≤ 1e-4.
    let mut rng = Rng(0x2545_f491);
    let mut next = move || rng.next();
    let splats: Vec<Splat> = (0..400)
        .map(|_| {
            let z = 1.5 + 3.0 * next();
            let mut s = Splat::new(
                at_pixel(next() * 80.0 - 4.0, next() * 48.0 - 4.0, z),
                0.02 + 0.15 * next(),
                0.05 + 0.94 * next(),
                [next(), next(), next()],
            );
            s.scale = [
                s.scale[0],
                s.scale[0] * (0.2 + next()),
                s.scale[0] * (0.2 + next()),
            ];
            s.rotation = [next() - 0.5, next() - 0.5, next() - 0.5, next() - 0.5];
            s
        })
        .collect();
    assert_matches(&splats, SIZE);
}

#[test]
fn pair_buffers_grow_until_the_frame_is_complete() {
    // 300 faint screen-covering splats on every bin (256 of 16×16 pixels) need 300
    // pairs per bin, more than the 65,536 a view starts with: the first frame is
    // short, later ones complete.
    let splats: Vec<Splat> = (0..300)
        .map(|i| {
            let z = 2.0 + i as f32 * 0.01;
            let colour = [(i % 7) as f32 / 7.0, 0.5, 1.0 - (i % 5) as f32 / 5.0];
            Splat::new([0.0, 0.0, -z], 4.0, 0.02, colour)
        })
        .collect();
    let c = compare_from(cloud(&splats), UVec2::new(256, 256), Transform::IDENTITY);
    let stats = c.stats.unwrap();
    let bins = (256 / bevy_splat::render::BIN_SIZE).pow(2);
    assert_eq!(stats.tile_pairs, 300 * bins);
    assert_eq!(stats.tile_pairs_kept, stats.tile_pairs);
    assert!(c.lit > 0 && c.worst <= 2, "max difference {}/255", c.worst);
}

#[test]
fn a_single_splat_cloud() {
    assert_matches(
        &[Splat::new(
            at_pixel(30.0, 18.0, 2.0),
            0.05,
            0.7,
            [0.4, 0.8, 0.2],
        )],
        SIZE,
    );
}

#[test]
fn the_degenerate_lod_tile_matches_the_reference() {
    // Unnormalised quaternions (norms 0.46–3.2) and scales down to 1e-10.
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/degenerate_lod_tile_sh3.ply"
    ))
    .unwrap();
    let splats = GaussianSplats::from(bevy_splat::asset::formats::ply::decode(&bytes).unwrap())
        .with_storage(SplatStorage::Full);
    let bounds = splats.bounds().unwrap();
    let centre = Vec3::from(bounds.center);
    let size = UVec2::new(96, 64);
    let eye = Transform::from_translation(
        centre + Vec3::new(0.3, 0.4, 1.0) * bounds.half_extents.length() * 1.5,
    )
    .looking_at(centre, Vec3::Y);

    let c = compare_from(splats, size, eye);
    let (worst, lit) = (c.worst, c.lit);
    assert!(
        lit > 100,
        "the tile should fill part of the image ({lit} px)"
    );
    assert!(worst <= 2, "max difference {worst}/255");
}

/// SH values that f16 holds exactly, so f16 storage must give the f32 image.
fn f16_exact(values: impl IntoIterator<Item = f32>) -> Vec<f32> {
    values
        .into_iter()
        .map(|v| half::f16::from_f32(v).to_f32())
        .collect()
}

/// 40 round splats over the `SIZE` image at distances 2 to 3.
fn scattered_splats(next: &mut impl FnMut() -> f32) -> Vec<Splat> {
    (0..40)
        .map(|_| {
            let at = at_pixel(next() * 72.0, next() * 40.0, 2.0 + next());
            Splat::new(at, 0.05 + 0.1 * next(), 0.3 + 0.6 * next(), [0.5; 3])
        })
        .collect()
}

#[test]
fn half_precision_sh_decodes_every_degree() {
    let mut rng = Rng(0x1234_5678);
    let mut next = move || rng.next();
    for degree in 0..=3u8 {
        let stride = 3 * (usize::from(degree) + 1).pow(2);
        let splats = scattered_splats(&mut next);
        let geometry = splats.iter().map(Splat::geometry).collect();
        let sh = f16_exact((0..splats.len() * stride).map(|_| next() * 2.0 - 1.0));
        let cloud = GaussianSplats::new(geometry, sh, degree)
            .unwrap()
            .with_half_precision_sh(true);
        let c = compare_from(cloud, SIZE, Transform::IDENTITY);
        assert!(c.lit > 0, "degree {degree}: nothing drawn");
        assert!(
            c.worst <= 2,
            "degree {degree}: max difference {}/255",
            c.worst
        );
    }
}

#[test]
fn orthographic_cameras_match_the_reference() {
    // An orthographic volume from 2 units behind the camera to 40 in front, 2 units
    // tall: splats behind the camera's position but inside the volume are drawn, one
    // behind the volume is not, and sizes do not shrink with depth.
    let size = UVec2::new(64, 48);
    let (view_height, near) = (2.0, -2.0);
    let mut rng = Rng(0x0b5e_55ed);
    let mut splats: Vec<Splat> = (0..60)
        .map(|i| {
            let mut next = || rng.next();
            let z = 1.5 - 7.0 * next();
            let mut s = Splat::new(
                [2.6 * next() - 1.3, 2.0 * next() - 1.0, z],
                0.02 + 0.1 * next(),
                0.3 + 0.6 * next(),
                [next(), next(), next()],
            );
            s.scale[1] *= 0.2 + next();
            s.rotation = [next() - 0.5, next() - 0.5, next() - 0.5, next() - 0.5];
            if i == 0 {
                // Behind the near plane: culled.
                s.position = [0.0, 0.0, 2.5];
                s.scale = [0.5; 3];
            }
            s
        })
        .collect();
    // A large splat at the camera's own depth.
    splats.push(Splat::new([0.3, -0.2, 0.0], 0.3, 0.5, [0.9, 0.2, 0.6]));
    let projection = OrthographicProjection {
        near,
        far: 40.0,
        scaling_mode: ScalingMode::FixedVertical {
            viewport_height: view_height,
        },
        ..OrthographicProjection::default_3d()
    };
    let transform = Transform::IDENTITY;
    let pinhole =
        PinholeCamera::orthographic_from_bevy(&transform, view_height, size.x, size.y, near);
    let c = compare_with(cloud(&splats), size, transform, projection.into(), pinhole);
    println!(
        "max difference {}/255, {:.3}% off by more than 1",
        c.worst,
        c.share * 100.0
    );
    assert!(
        c.lit > size.x as usize * size.y as usize / 4,
        "only {} pixels lit",
        c.lit
    );
    assert!(c.worst <= 2, "max difference {}/255", c.worst);
    assert!(c.share <= 0.001);
}
