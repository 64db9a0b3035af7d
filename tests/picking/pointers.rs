//! Pointers for a headless app: custom `bevy_picking` pointers placed on a camera's
//! image, and what they hover once the GPU's answers are back.

use bevy::asset::uuid::Uuid;
use bevy::camera::{NormalizedRenderTarget, RenderTarget};
use bevy::picking::backend::HitData;
use bevy::picking::hover::HoverMap;
use bevy::picking::pointer::{Location, PointerId, PointerLocation};
use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_splat::headless::{Headless, HeadlessCamera};
use bevy_splat::{SplatHit, SplatPickingPlugin, SplatRaycastPlugin};

/// A headless app that picks clouds (and meshes, with Bevy's mesh backend) and casts rays.
pub fn picking_app() -> Headless {
    Headless::with(crate::common::headless_plugins(), |app| {
        app.add_plugins((SplatPickingPlugin, MeshPickingPlugin, SplatRaycastPlugin));
        // `bevy_picking` casts pointer rays only while a primary window exists (its
        // viewport test asks for it), even for cameras that draw into images. A window
        // entity without a native window stands in for it.
        app.world_mut().spawn((Window::default(), PrimaryWindow));
    })
}

pub fn pointer_id(n: usize) -> PointerId {
    PointerId::Custom(Uuid::from_u128(0x5a1a_0000 + n as u128))
}

pub fn location(camera: &HeadlessCamera, pixel: UVec2) -> Location {
    Location {
        target: RenderTarget::Image(camera.image.clone().into())
            .normalize(None)
            .and_then(|t| match t {
                NormalizedRenderTarget::Image(_) => Some(t),
                _ => None,
            })
            .expect("an image target"),
        // The pixel's centre, in the image's (logical = physical) pixels.
        position: pixel.as_vec2() + 0.5,
    }
}

/// One pointer per pixel over `camera`'s image.
pub fn spawn_pointers(headless: &mut Headless, camera: &HeadlessCamera, pixels: &[UVec2]) {
    for (n, &pixel) in pixels.iter().enumerate() {
        headless
            .app
            .world_mut()
            .spawn((pointer_id(n), PointerLocation::new(location(camera, pixel))));
    }
}

/// What pointer `n` hovers: every entity with its hit.
pub fn hovered(headless: &Headless, n: usize) -> Vec<(Entity, HitData)> {
    let map = headless.app.world().resource::<HoverMap>();
    let mut hits: Vec<_> = map
        .get(&pointer_id(n))
        .map(|m| m.iter().map(|(e, h)| (*e, h.clone())).collect())
        .unwrap_or_default();
    hits.sort_by(|a, b| a.1.depth.total_cmp(&b.1.depth));
    hits
}

/// The splat hit under pointer `n`, if it hovers a cloud.
pub fn splat_hit(headless: &Headless, n: usize) -> Option<SplatHit> {
    hovered(headless, n)
        .iter()
        .find_map(|(_, hit)| hit.extra_as::<SplatHit>().copied())
}

/// Renders until the camera's frames are complete, then until the hover state of
/// `pointers` pointers has not changed for a few frames (picks come back a frame or
/// two late). Depths count as unchanged within 0.1 %: where splats tie in depth (a
/// flat wall of them), which of them a pixel hits follows the order the GPU counted
/// them in, which may change from frame to frame, and with it the hit's depth by a
/// hair.
pub fn settle(headless: &mut Headless, camera: &HeadlessCamera, pointers: usize) {
    headless
        .render(std::slice::from_ref(camera))
        .expect("the scene renders");
    let snapshot = |headless: &Headless| -> Vec<Vec<(Entity, f32)>> {
        (0..pointers)
            .map(|n| {
                hovered(headless, n)
                    .iter()
                    .map(|(e, h)| (*e, h.depth))
                    .collect()
            })
            .collect()
    };
    let same = |a: &[Vec<(Entity, f32)>], b: &[Vec<(Entity, f32)>]| {
        a.len() == b.len()
            && a.iter().zip(b).all(|(a, b)| {
                a.len() == b.len()
                    && a.iter().zip(b).all(|((ea, da), (eb, db))| {
                        ea == eb && (da - db).abs() <= 1e-3 * da.abs().max(db.abs())
                    })
            })
    };
    let mut last = snapshot(headless);
    let mut stable = 0;
    for _ in 0..60 {
        headless.app.update();
        let now = snapshot(headless);
        stable = if same(&now, &last) { stable + 1 } else { 0 };
        last = now;
        if stable >= 4 {
            return;
        }
    }
    panic!("the pointers' hover state never settled");
}
