//! A directional light's cascades drawn in one run of the passes: side by side in one
//! layer, each in its own cell, so that every stage runs once for all of them instead
//! of once per cascade. On an H100 a cascade's run cost at least 0.16 ms however few
//! splats it drew (its dependent dispatches and fixed costs, BENCHMARKS.md); one run
//! pays that once for the light.
//!
//! The passes project with one camera, the layer's: the first cascade's. Every other
//! cascade's clouds are seen through its own camera folded into that one: an
//! orthographic cascade differs from the first by a scale and a shift of its camera
//! space (Bevy's cascades share the light's rotation, but the fold does not need it),
//! so multiplying its instances by that affine map puts its splats in its cell at
//! exactly the pixels, footprints and depth order its own run would give them. What
//! cannot be folded — the cell's bounds, which no splat's tiles cross, and its depth
//! buffer mapping — is in `LayerCell`, one per cascade in the view's uniform.

use bevy::math::{Mat4, UVec2, Vec3};

use crate::render::passes::common::BIN_SIZE;
use crate::render::view::uniform::{LayerCellUniform, MAX_LAYER_CELLS, SplatCamera};

/// Where each view of a layer of cells is drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct CellLayout {
    /// The layer's size, in its pixels.
    pub layer: UVec2,
    /// The grid's columns, and how far apart its cells start.
    pub columns: u32,
    pub stride: UVec2,
    /// Each view's cell: its first pixel and its size.
    pub cells: Vec<[u32; 4]>,
}

impl CellLayout {
    /// One view alone: its cell is the layer.
    pub fn single(size: UVec2) -> Self {
        Self {
            layer: size,
            columns: 1,
            stride: UVec2::ZERO,
            cells: vec![[0, 0, size.x, size.y]],
        }
    }

    /// `count` views of `size` in a grid (as many columns as rows, or one more), each
    /// cell starting on a bin so that no bin of tiles straddles two cells; `None` for
    /// more views than a layer holds ([`MAX_LAYER_CELLS`]) or a layer wider or taller
    /// than `max_dimension`.
    pub fn grid(count: usize, size: UVec2, max_dimension: u32) -> Option<Self> {
        if count == 0 || count > MAX_LAYER_CELLS || size.x == 0 || size.y == 0 {
            return None;
        }
        let columns = (count as f64).sqrt().ceil() as u32;
        let rows = (count as u32).div_ceil(columns);
        let stride = UVec2::new(
            size.x.checked_next_multiple_of(BIN_SIZE)?,
            size.y.checked_next_multiple_of(BIN_SIZE)?,
        );
        let layer = UVec2::new(
            stride.x.checked_mul(columns - 1)?.checked_add(size.x)?,
            stride.y.checked_mul(rows - 1)?.checked_add(size.y)?,
        );
        if layer.x > max_dimension || layer.y > max_dimension {
            return None;
        }
        let cells = (0..count as u32)
            .map(|k| {
                let origin = UVec2::new(k % columns, k / columns) * stride;
                [origin.x, origin.y, size.x, size.y]
            })
            .collect();
        Some(Self {
            layer,
            columns,
            stride,
            cells,
        })
    }
}

/// `camera` (a cascade's) folded into `layer`'s camera space for the cell `rect`: the
/// camera whose `cam_from_world` the cascade's instances take, and the cell's uniform.
/// `None` unless both are orthographic with square pixels in the same ratio (what
/// Bevy's cascades are); such views are drawn in their own runs.
///
/// The layer projects a point (x, y, z) of its camera space to pixel
/// `f₀·(x, y) + p₀` at distance z; the cascade to `fᵢ·(x, y) + pᵢ`, at its own
/// distance. With s = fᵢ / f₀, the map (x, y, z) ↦ s·(x, y, z) + t, where
/// t = ((pᵢ + cell − p₀) / f₀, near₀ − s·nearᵢ), takes the cascade's point to the
/// layer's pixel in the cell, scales every footprint by s in both axes (the
/// orthographic Jacobian is f₀, so f₀·s = fᵢ), keeps the order of distances, and puts
/// the cascade's near plane on the layer's. Scaling z by s too keeps the map a
/// similarity, so a cloud's size in layer units (what the level-of-detail cut
/// measures) is its size in the cascade's pixels over f₀.
pub fn fold(
    camera: &SplatCamera,
    layer: &SplatCamera,
    rect: [u32; 4],
) -> Option<(SplatCamera, LayerCellUniform)> {
    if !camera.orthographic || !layer.orthographic {
        return None;
    }
    let [ax, ay] = layer.focal;
    let [fx, fy] = camera.focal;
    let s = fx / ax;
    let square = ((fy / ay) - s).abs() <= 1e-5 * s;
    // Orthographic depth is affine in distance: (a·t + b) / (0·t + 1).
    let [a, b, c, d] = camera.depth_from_distance;
    if !(s.is_finite() && s > 0.0 && square && c == 0.0 && d == 1.0) {
        return None;
    }
    let shift = Vec3::new(
        (camera.principal[0] + rect[0] as f32 - layer.principal[0]) / ax,
        (camera.principal[1] + rect[1] as f32 - layer.principal[1]) / ay,
        layer.near - s * camera.near,
    );
    let layer_from_cascade = Mat4::from_translation(shift) * Mat4::from_scale(Vec3::splat(s));
    let cam_from_world = layer_from_cascade * camera.cam_from_world;
    // The cascade's depth of a folded distance t' = s·t + t_z.
    let depth_from_distance = [a / s, b - a * shift.z / s, 0.0, 1.0];
    let folded = SplatCamera {
        cam_from_world,
        near: layer.near,
        focal: layer.focal,
        principal: layer.principal,
        depth_from_distance: layer.depth_from_distance,
        ..*camera
    };
    let finite = cam_from_world.is_finite() && depth_from_distance.iter().all(|v| v.is_finite());
    finite.then_some((
        folded,
        LayerCellUniform {
            cam_from_world: cam_from_world.to_cols_array_2d(),
            rect,
            depth_from_distance,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::{Quat, Vec4};

    fn cascade(half: f32, centre: Vec3, (near, far): (f32, f32), size: u32) -> SplatCamera {
        let world_from_view = Mat4::from_rotation_translation(
            Quat::from_euler(bevy::math::EulerRot::XYZ, -0.9, 0.3, 0.0),
            centre,
        );
        // Bevy's cascades: reverse-Z orthographic, near and far swapped.
        let clip = Mat4::orthographic_rh(-half, half, -half, half, far, near);
        SplatCamera::from_view(world_from_view, clip, UVec2::splat(size)).expect("a cascade")
    }

    /// The pixel and depth value a camera gives a world point.
    fn project(camera: &SplatCamera, world: Vec3) -> (f32, f32, f32) {
        let p = camera.cam_from_world * world.extend(1.0);
        let [a, b, c, d] = camera.depth_from_distance;
        (
            camera.focal[0] * p.x + camera.principal[0],
            camera.focal[1] * p.y + camera.principal[1],
            (a * p.z + b) / (c * p.z + d),
        )
    }

    #[test]
    fn a_folded_cascade_puts_every_point_in_its_cell_at_its_own_pixel_and_depth() {
        let layer = cascade(4.0, Vec3::new(0.0, 3.0, 1.0), (-2.0, 30.0), 512);
        let far = cascade(17.0, Vec3::new(5.0, 9.0, -4.0), (-8.0, 90.0), 512);
        let layout = CellLayout::grid(4, UVec2::splat(512), 8192).expect("fits");
        let rect = layout.cells[3];
        let (folded, cell) = fold(&far, &layer, rect).expect("folds");
        for world in [
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(-6.0, 0.5, 2.0),
            Vec3::new(4.0, -3.0, -7.0),
        ] {
            let (x, y, depth) = project(&far, world);
            let p: Vec4 = folded.cam_from_world * world.extend(1.0);
            let [a, b, c, d] = cell.depth_from_distance;
            let layer_x = layer.focal[0] * p.x + layer.principal[0];
            let layer_y = layer.focal[1] * p.y + layer.principal[1];
            assert!(
                (layer_x - (x + rect[0] as f32)).abs() < 2e-3,
                "{layer_x} vs {x}"
            );
            assert!(
                (layer_y - (y + rect[1] as f32)).abs() < 2e-3,
                "{layer_y} vs {y}"
            );
            assert!(((a * p.z + b) / (c * p.z + d) - depth).abs() < 1e-5);
        }
        // Its near plane is the layer's: the preprocess's cull and depth keys hold.
        let on_near = far.cam_from_world.inverse() * Vec4::new(0.3, -0.2, far.near, 1.0);
        let p = folded.cam_from_world * on_near;
        assert!((p.z - layer.near).abs() < 1e-4);
        // The first cascade folds into itself.
        let (same, _) = fold(&layer, &layer, layout.cells[0]).expect("folds");
        assert!(same.cam_from_world.abs_diff_eq(layer.cam_from_world, 1e-6));
    }

    #[test]
    fn perspective_views_are_not_folded() {
        let layer = cascade(4.0, Vec3::ZERO, (-2.0, 30.0), 256);
        let clip = Mat4::perspective_infinite_reverse_rh(0.9, 1.0, 0.1);
        let spot = SplatCamera::from_view(Mat4::IDENTITY, clip, UVec2::splat(256)).expect("a view");
        assert!(fold(&spot, &layer, [256, 0, 256, 256]).is_none());
    }

    #[test]
    fn cells_start_on_bins_and_the_layer_fits_the_device() {
        let layout = CellLayout::grid(3, UVec2::new(100, 60), 4096).expect("fits");
        assert_eq!(layout.layer, UVec2::new(112 + 100, 64 + 60));
        assert_eq!(
            layout.cells,
            vec![[0, 0, 100, 60], [112, 0, 100, 60], [0, 64, 100, 60]]
        );
        assert!(CellLayout::grid(4, UVec2::splat(4100), 8192).is_none());
        assert!(CellLayout::grid(5, UVec2::splat(16), 8192).is_none());
        let one = CellLayout::grid(1, UVec2::splat(64), 64).expect("fits");
        assert_eq!(
            (one.layer, one.cells),
            (UVec2::splat(64), vec![[0, 0, 64, 64]])
        );
    }
}
