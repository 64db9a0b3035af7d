//! `SplatTint` and `SplatCrop` on lavapipe: a tinted or cropped cloud draws what the
//! same change made to its data draws, and degenerate crops or a zero opacity draw
//! nothing (or everything) without a panic.

mod common;
mod reference_raster;

use bevy::math::UVec2;
use bevy::prelude::*;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::asset::decoded::{SH_C0, opacity_logit};
use bevy_splat::asset::formats::ply;
use bevy_splat::headless::Headless;
use bevy_splat::{GaussianSplats, SplatCrop, SplatCropShape, SplatCropVolume, SplatTint};

use reference_raster::max_difference;

const SIZE: UVec2 = UVec2::new(96, 128);

/// The shipped angel (SH degree 0: a tint is exactly a change of its DC colour).
fn angel() -> GaussianSplats {
    let bytes =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/angel.ply")).expect("the angel");
    GaussianSplats::from(ply::decode(&bytes).expect("it decodes"))
}

/// Renders one cloud of `splats` with `extra` components on it; the RGB bytes.
fn render(splats: GaussianSplats, extra: impl Bundle) -> Vec<u8> {
    let mut headless = Headless::new(common::headless_plugins());
    let handle = headless.add_splats(splats);
    let cloud = headless.spawn_cloud(handle, Transform::IDENTITY);
    headless.app.world_mut().entity_mut(cloud).insert(extra);
    let camera = common::spawn_angel_camera(&mut headless, SIZE, 1.0);
    headless
        .render(std::slice::from_ref(&camera))
        .expect("the render")
        .remove(0)
        .rgb()
}

fn with_geometry(
    splats: &GaussianSplats,
    mut change: impl FnMut(&SplatGeometry, &[f32]) -> Option<(SplatGeometry, Vec<f32>)>,
) -> GaussianSplats {
    let stride = splats.sh_stride();
    let (mut geometry, mut sh) = (Vec::new(), Vec::new());
    for (i, g) in splats.geometry().iter().enumerate() {
        if let Some((g, coefficients)) = change(g, &splats.sh()[i * stride..(i + 1) * stride]) {
            geometry.push(g);
            sh.extend(coefficients);
        }
    }
    GaussianSplats::new(geometry, sh, splats.sh_degree()).expect("valid splats")
}

/// Visible splats compact through an atomic counter, so splats whose depth keys tie
/// may swap between two renders: a rounding step at most.
fn assert_same_image(a: &[u8], b: &[u8], what: &str) {
    assert!(a.iter().any(|&v| v > 0), "{what}: the image is not empty");
    let worst = max_difference(a, b);
    assert!(worst <= 1, "{what}: differs by {worst}/255");
}

#[test]
fn a_tint_draws_what_tinted_data_draws() {
    let tint = SplatTint {
        rgb: Vec3::new(1.0, 0.6, 0.3),
        opacity: 0.55,
    };
    let splats = angel();
    let tinted_data = with_geometry(&splats, |g, sh| {
        let opacity = 0.55 / (1.0 + (-g.opacity_logit).exp());
        let geometry = SplatGeometry {
            opacity_logit: opacity_logit(opacity),
            ..*g
        };
        // Colour = max(0, 0.5 + C0·dc) · k, which is 0.5 + C0·dc' for this dc'.
        let dc = (0..3)
            .map(|c| ((0.5 + SH_C0 * sh[c]) * tint.rgb[c] - 0.5) / SH_C0)
            .collect();
        Some((geometry, dc))
    });
    let drawn = render(splats, tint);
    let expected = render(tinted_data, ());
    assert_same_image(&drawn, &expected, "tint");
}

#[test]
fn a_tint_of_opacity_zero_draws_nothing() {
    let drawn = render(angel(), SplatTint::fade(0.0));
    assert!(
        drawn.iter().all(|&v| v == 0),
        "nothing drawn on the black target"
    );
    let nan = render(
        angel(),
        SplatTint {
            rgb: Vec3::NAN,
            opacity: f32::NAN,
        },
    );
    assert!(
        nan.iter().all(|&v| v == 0),
        "a NaN tint draws nothing either"
    );
}

#[test]
fn a_crop_draws_what_the_cropped_data_draws() {
    // Keep the statue above the plinth, cut a ball out of its middle, through a
    // turned box.
    let crop = SplatCrop {
        volumes: vec![
            SplatCropVolume {
                shape: SplatCropShape::Box {
                    centre: Vec3::new(0.0, 1.1, 0.0),
                    half_size: Vec3::new(0.9, 0.85, 0.9),
                    rotation: Quat::from_rotation_y(0.5),
                },
                mode: bevy_splat::SplatCropMode::Keep,
            },
            SplatCropVolume::cut_sphere(Vec3::new(0.0, 1.0, 0.2), 0.3),
        ],
    };
    let splats = angel();
    let kept = with_geometry(&splats, |g, sh| {
        crop.keeps(Vec3::from(g.position))
            .then(|| (*g, sh.to_vec()))
    });
    assert!(kept.len() < splats.len() && !kept.is_empty());
    let drawn = render(splats.clone(), crop);
    let expected = render(kept, ());
    assert_same_image(&drawn, &expected, "crop");
    let whole = render(splats, ());
    assert!(
        max_difference(&whole, &drawn) > 20,
        "the crop changes the image"
    );
}

#[test]
fn degenerate_crop_volumes_keep_nothing_or_cut_nothing() {
    let whole = render(angel(), ());
    for volume in [
        SplatCropVolume::keep_box(Vec3::ZERO, Vec3::ZERO),
        SplatCropVolume::keep_box(Vec3::ZERO, Vec3::new(1.0, -2.0, 1.0)),
        SplatCropVolume::keep_sphere(Vec3::ZERO, -1.0),
        SplatCropVolume::keep_sphere(Vec3::NAN, 1.0),
    ] {
        let kept = render(
            angel(),
            SplatCrop {
                volumes: vec![volume],
            },
        );
        assert!(kept.iter().all(|&v| v == 0), "{volume:?} keeps nothing");
        let cut = SplatCropVolume {
            mode: bevy_splat::SplatCropMode::Cut,
            ..volume
        };
        let uncut = render(angel(), SplatCrop { volumes: vec![cut] });
        assert_same_image(&uncut, &whole, &format!("{cut:?} cuts nothing"));
    }
}
