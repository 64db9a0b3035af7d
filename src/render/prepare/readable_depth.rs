//! Readable depth for the cameras that draw splats.

use bevy::camera::Camera3d;
use bevy::ecs::prelude::*;
use bevy::render::view::RenderVisibleEntities;
use wgpu::TextureUsages;

use crate::cloud::GaussianCloud;

/// Makes the depth texture of every camera that draws splats bindable: the tile render
/// reads the opaque scene's depth to stop each pixel's splats there.
///
/// Any 3D camera draws the clouds it sees, so a camera qualifies once a cloud is in its
/// view (visible after culling and `RenderLayers`, loaded or not). Cameras that never
/// see one (a UI or overlay camera, one whose layers leave the clouds out) keep the
/// depth usage they asked for, as they would without the plugin (a sampled depth
/// texture may lose a driver's depth compression).
///
/// A camera that has seen a cloud keeps readable depth for as long as it lives: the
/// usage is part of what Bevy's texture cache matches on, so switching back and forth
/// as clouds leave and enter its view would allocate a new full-screen depth texture
/// each time. The flag is set on the render world's copy of `Camera3d` (extracted
/// afresh every frame) before the depth textures are made, so the user's component is
/// not changed.
pub fn request_readable_depth(
    mut cameras: Query<(Entity, &mut Camera3d, &RenderVisibleEntities)>,
    mut seen_clouds: Local<std::collections::HashSet<Entity>>,
) {
    // Render-world camera entities live as long as their main-world cameras.
    seen_clouds.retain(|&camera| cameras.contains(camera));
    let readable = TextureUsages::TEXTURE_BINDING.bits();
    for (entity, mut camera, visible) in &mut cameras {
        let sees_clouds = visible
            .get::<GaussianCloud>()
            .is_some_and(|clouds| clouds.iter_visible().next().is_some());
        if sees_clouds {
            seen_clouds.insert(entity);
        }
        if seen_clouds.contains(&entity) && camera.depth_texture_usages.0 & readable == 0 {
            camera.depth_texture_usages.0 |= readable;
        }
    }
}
