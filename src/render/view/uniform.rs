//! The camera as the splat passes see it (`SplatView` in WGSL).

use bevy::math::{Mat4, UVec2, Vec3};
use bytemuck::{Pod, Zeroable};

use crate::render::passes::tile_render::tiles_for;

/// Camera space of the passes: OpenCV axes (x right, y down, z forward), the space the
/// reference's projection formulas are written in. Bevy's view space looks down −Z
/// with +Y up, so this is a flip of Y and Z.
const CV_FROM_VIEW: Mat4 = Mat4::from_cols_array(&[
    1.0, 0.0, 0.0, 0.0, //
    0.0, -1.0, 0.0, 0.0, //
    0.0, 0.0, -1.0, 0.0, //
    0.0, 0.0, 0.0, 1.0,
]);

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct SplatViewUniform {
    pub cam_from_world: [[f32; 4]; 4],
    pub world_position: [f32; 4],
    pub focal: [f32; 2],
    pub principal: [f32; 2],
    pub tan_limits: [f32; 4],
    pub viewport_size: [u32; 2],
    pub tile_count: [u32; 2],
    pub depth_from_distance: [f32; 4],
    pub viewport_origin: [u32; 2],
    pub near: f32,
    pub pair_capacity: u32,
    pub splat_capacity: u32,
    /// The band's tile rows: first, and one past the last.
    pub band_first_row: u32,
    pub band_end_row: u32,
    /// 1 for an orthographic projection, 0 for a perspective one.
    pub orthographic: u32,
    /// How many of `cells` the layer holds: 1 for a view of its own.
    pub cell_count: u32,
    /// The grid the cells lie in (`CellLayout`): its columns, how far apart the cells
    /// start and their size, in pixels. The passes compute a cell's rect from these.
    pub cell_columns: u32,
    pub cell_stride: [u32; 2],
    pub cell_size: [u32; 2],
    pub _pad_cells: [u32; 2],
    pub cells: [LayerCellUniform; MAX_LAYER_CELLS],
}

/// The most views one layer holds: a directional light's cascades (Bevy's
/// `MAX_CASCADES_PER_LIGHT`) drawn in one run of the passes, each in its own cell.
pub const MAX_LAYER_CELLS: usize = 4;

/// The cells of a layer that holds several views (a light's cascades drawn in one
/// run, `render::shadows::cells`): the grid they lie in and each one's uniform.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerCells {
    pub columns: u32,
    /// How far apart the cells start, in pixels.
    pub stride: UVec2,
    /// Each cell's size, in pixels.
    pub size: UVec2,
    /// At most [`MAX_LAYER_CELLS`] (more are not drawn).
    pub cells: Vec<LayerCellUniform>,
}

impl LayerCells {
    /// Puts them into a view's uniform, in place of its one cell.
    pub fn apply(&self, uniform: &mut SplatViewUniform) {
        let count = self.cells.len().min(MAX_LAYER_CELLS);
        uniform.cells[..count].copy_from_slice(&self.cells[..count]);
        uniform.cell_count = count as u32;
        uniform.cell_columns = self.columns;
        uniform.cell_stride = self.stride.to_array();
        uniform.cell_size = self.size.to_array();
    }
}

/// One view's cell of a layer (`LayerCell` in WGSL): what the passes cannot fold into
/// its clouds' instances.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LayerCellUniform {
    /// The view's camera space, folded into the layer's as its instances are, from the
    /// world.
    pub cam_from_world: [[f32; 4]; 4],
    /// The cell's first pixel in the layer and its size.
    pub rect: [u32; 4],
    /// The view's depth buffer value of a folded distance.
    pub depth_from_distance: [f32; 4],
}

/// What one band of a view can hold and draws: the per-band part of the uniform.
#[derive(Clone, Copy, Debug)]
pub struct BandUniform {
    pub pair_capacity: u32,
    pub splat_capacity: u32,
    pub first_row: u32,
    pub end_row: u32,
}

/// A camera, reduced to what the splat passes need.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplatCamera {
    /// Camera (OpenCV axes) from world.
    pub cam_from_world: Mat4,
    pub world_position: Vec3,
    /// Pixels per unit of x/t and y/t (perspective) or of x and y (orthographic).
    pub focal: [f32; 2],
    pub principal: [f32; 2],
    /// (a, b, c, d): the depth buffer holds (a·t + b) / (c·t + d) at view distance t.
    pub depth_from_distance: [f32; 4],
    /// The view distance where the depth buffer reaches 1 (negative for orthographic
    /// projections whose volume starts behind the camera).
    pub near: f32,
    pub orthographic: bool,
}

impl SplatCamera {
    /// Reads a Bevy view: a perspective projection (w = −z) or an orthographic one
    /// (w = 1). `None` for degenerate matrices and projections that are neither.
    pub fn from_view(world_from_view: Mat4, clip_from_view: Mat4, viewport: UVec2) -> Option<Self> {
        let m = clip_from_view;
        let orthographic =
            m.x_axis.w == 0.0 && m.y_axis.w == 0.0 && m.z_axis.w == 0.0 && m.w_axis.w == 1.0;
        let perspective =
            m.x_axis.w == 0.0 && m.y_axis.w == 0.0 && m.z_axis.w == -1.0 && m.w_axis.w == 0.0;
        if !orthographic && !perspective {
            return None;
        }
        let half = viewport.as_vec2() * 0.5;
        let focal = [m.x_axis.x * half.x, m.y_axis.y * half.y];
        // NDC x = m00·x + m20·z + m30·w over w; the offset sits in z for a perspective
        // projection (w = −z) and in w for an orthographic one (w = 1). Pixel y runs
        // down, NDC y up.
        let principal = if orthographic {
            [half.x * (1.0 + m.w_axis.x), half.y * (1.0 - m.w_axis.y)]
        } else {
            [half.x * (1.0 - m.z_axis.x), half.y * (1.0 + m.z_axis.y)]
        };
        // clip.z = m22·z + m32, clip.w = m23·z + m33, with view z = −t.
        let depth = [-m.z_axis.z, m.w_axis.z, -m.z_axis.w, m.w_axis.w];
        // The near plane is where the depth buffer reaches 1.
        let near = (depth[3] - depth[1]) / (depth[0] - depth[2]);
        let view_from_world = world_from_view.inverse();
        let camera = Self {
            cam_from_world: CV_FROM_VIEW * view_from_world,
            world_position: world_from_view.w_axis.truncate(),
            focal,
            principal,
            depth_from_distance: depth,
            near,
            orthographic,
        };
        let finite = camera.cam_from_world.is_finite()
            && focal.iter().chain(&principal).all(|v| v.is_finite())
            && focal.iter().all(|&f| f > 0.0)
            && near.is_finite()
            && (orthographic || near > 0.0);
        finite.then_some(camera)
    }

    /// The uniform for one band of a viewport of `size` at `origin` in the render target.
    pub fn uniform(&self, origin: UVec2, size: UVec2, band: BandUniform) -> SplatViewUniform {
        let [fx, fy] = self.focal;
        let [cx, cy] = self.principal;
        let (w, h) = (size.x as f32, size.y as f32);
        // The reference clamps x/z and y/z inside the Jacobian to the image's field of
        // view widened by 30% of its half-angle tangent on each side.
        let tan_x = 0.5 * w / fx;
        let tan_y = 0.5 * h / fy;
        let tan_limits = [
            (w - cx) / fx + 0.3 * tan_x,
            cx / fx + 0.3 * tan_x,
            (h - cy) / fy + 0.3 * tan_y,
            cy / fy + 0.3 * tan_y,
        ];
        SplatViewUniform {
            cam_from_world: self.cam_from_world.to_cols_array_2d(),
            world_position: self.world_position.extend(1.0).to_array(),
            focal: self.focal,
            principal: self.principal,
            tan_limits,
            viewport_size: size.to_array(),
            tile_count: tiles_for(size).to_array(),
            depth_from_distance: self.depth_from_distance,
            viewport_origin: origin.to_array(),
            near: self.near,
            pair_capacity: band.pair_capacity,
            splat_capacity: band.splat_capacity,
            band_first_row: band.first_row,
            band_end_row: band.end_row,
            orthographic: u32::from(self.orthographic),
            cell_count: 1,
            cell_columns: 1,
            cell_stride: [0; 2],
            cell_size: size.to_array(),
            _pad_cells: [0; 2],
            cells: [LayerCellUniform {
                cam_from_world: self.cam_from_world.to_cols_array_2d(),
                rect: [0, 0, size.x, size.y],
                depth_from_distance: self.depth_from_distance,
            }; MAX_LAYER_CELLS],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::Vec4;

    #[test]
    fn bevy_perspective_maps_to_pinhole_intrinsics() {
        let near = 0.01;
        let fov = 0.9f32;
        let size = UVec2::new(640, 480);
        let clip = Mat4::perspective_infinite_reverse_rh(fov, 640.0 / 480.0, near);
        let camera = SplatCamera::from_view(Mat4::IDENTITY, clip, size).unwrap();
        let fy = 240.0 / (fov / 2.0).tan();
        assert!((camera.focal[1] - fy).abs() < 1e-3);
        assert!((camera.focal[0] - fy).abs() < 1e-3);
        assert_eq!(camera.principal, [320.0, 240.0]);
        assert!((camera.near - near).abs() < 1e-7);
        // A point 2 m in front (Bevy −Z) is at OpenCV depth 2.
        let p = camera.cam_from_world * Vec4::new(0.0, 1.0, -2.0, 1.0);
        assert_eq!(p.truncate(), Vec3::new(0.0, -1.0, 2.0));
        // The depth buffer value of that point matches the projection's.
        let clip_p = clip * Vec4::new(0.0, 1.0, -2.0, 1.0);
        let [a, b, c, d] = camera.depth_from_distance;
        assert!(((a * 2.0 + b) / (c * 2.0 + d) - clip_p.z / clip_p.w).abs() < 1e-7);
    }

    #[test]
    fn bevy_orthographic_maps_to_an_affine_camera() {
        // Bevy's orthographic projections are reverse-Z: near and far swapped.
        let (near, far) = (-5.0, 20.0);
        let clip = Mat4::orthographic_rh(-2.0, 2.0, -1.0, 1.0, far, near);
        let size = UVec2::new(400, 200);
        let camera = SplatCamera::from_view(Mat4::IDENTITY, clip, size).unwrap();
        assert!(camera.orthographic);
        // 4 units across 400 px, 2 units down 200 px.
        assert_eq!(camera.focal, [100.0, 100.0]);
        assert_eq!(camera.principal, [200.0, 100.0]);
        assert!((camera.near - near).abs() < 1e-5);
        // A point 1 unit right, 0.5 up, 3 in front: pixel (300, 50), the projection's
        // depth value.
        let view_point = Vec4::new(1.0, 0.5, -3.0, 1.0);
        let p = camera.cam_from_world * view_point;
        assert_eq!(p.truncate(), Vec3::new(1.0, -0.5, 3.0));
        let pixel = [
            camera.focal[0] * p.x + camera.principal[0],
            camera.focal[1] * p.y + camera.principal[1],
        ];
        assert_eq!(pixel, [300.0, 50.0]);
        let [a, b, c, d] = camera.depth_from_distance;
        let clip_p = clip * view_point;
        assert!(((a * 3.0 + b) / (c * 3.0 + d) - clip_p.z / clip_p.w).abs() < 1e-6);
    }

    #[test]
    fn other_projections_are_refused() {
        let mut skewed = Mat4::perspective_infinite_reverse_rh(0.9, 1.0, 0.1);
        skewed.x_axis.w = 0.5;
        assert!(SplatCamera::from_view(Mat4::IDENTITY, skewed, UVec2::new(4, 4)).is_none());
    }
}
