//! Which clouds a shadow view draws, and where its projection must begin to hold them.

use bevy::camera::primitives::Frustum;
use bevy::camera::visibility::RenderLayers;
use bevy::ecs::prelude::*;
use bevy::math::{Mat4, Vec3};
use bevy::render::render_asset::RenderAssets;
use bevy::render::sync_world::MainEntity;

use crate::render::extract::ExtractedCloud;
use crate::render::gpu_cloud::GpuSplats;
use crate::render::view::uniform::SplatCamera;

/// The clouds that cast into a shadow view: shown, without `NotShadowCaster`, on a
/// layer the light shares, uploaded, and (where they have bounds) inside the view's
/// frustum, whose near plane a directional light has pushed to infinity so that
/// casters between the light and the cascade count. Each with its main-world entity.
pub fn casters<'a>(
    frustum: &Frustum,
    light_layers: &RenderLayers,
    clouds: impl Iterator<Item = (&'a MainEntity, &'a ExtractedCloud)>,
    gpu_splats: &'a RenderAssets<GpuSplats>,
) -> Vec<(Entity, &'a ExtractedCloud, &'a GpuSplats)> {
    clouds
        .filter(|(_, cloud)| cloud.casts_shadows && cloud.layers.intersects(light_layers))
        .filter(|(_, cloud)| {
            cloud.bounds.is_none_or(|bounds| {
                frustum.intersects_obb(&bounds, &cloud.world_from_cloud, true, true)
            })
        })
        .filter_map(|(main, cloud)| Some((main.id(), cloud, gpu_splats.get(cloud.asset)?)))
        .filter(|(.., gpu)| !gpu.is_empty())
        .collect()
}

/// The camera-space depth of the nearest corner of the drawn clouds' boxes, for
/// clouds with bounds. An orthographic shadow view (a cascade) starts its depth
/// range there when that lies before its near plane: its casters are kept, at the
/// near plane, as Bevy's unclipped shadow depth keeps meshes.
pub fn nearest_depth(
    camera: &SplatCamera,
    drawn: &[(Entity, &ExtractedCloud, &GpuSplats)],
) -> Option<f32> {
    drawn
        .iter()
        .filter_map(|(_, cloud, _)| Some((cloud, cloud.bounds?)))
        .flat_map(|(cloud, bounds)| {
            let cam_from_cloud = camera.cam_from_world * Mat4::from(cloud.world_from_cloud);
            let (min, max) = (Vec3::from(bounds.min()), Vec3::from(bounds.max()));
            (0..8).map(move |corner| {
                let pick = |bit: u32, lo: f32, hi: f32| if corner & bit == 0 { lo } else { hi };
                let p = Vec3::new(
                    pick(1, min.x, max.x),
                    pick(2, min.y, max.y),
                    pick(4, min.z, max.z),
                );
                cam_from_cloud.transform_point3(p).z
            })
        })
        .filter(|z| z.is_finite())
        .reduce(f32::min)
}
