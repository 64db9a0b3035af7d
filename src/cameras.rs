//! Cameras from the Inria 3DGS `cameras.json` files that trainers write, as Bevy
//! cameras: view a trained scene from the poses it was trained on.

use bevy::camera::PerspectiveProjection;
use bevy::math::{Mat3, Quat, Vec3};
use bevy::transform::components::Transform;
use serde::Deserialize;

/// One camera of an Inria `cameras.json`: the pose and pinhole intrinsics of a
/// training image (OpenCV axes: x right, y down, z forward).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct InriaCamera {
    /// The camera's number in the file (0 where it has none).
    #[serde(default)]
    pub id: i64,
    /// The training image's name: a plain file name, no folder.
    pub img_name: String,
    /// The image's width in pixels.
    pub width: u32,
    /// The image's height in pixels.
    pub height: u32,
    /// Camera centre in world space.
    pub position: [f64; 3],
    /// Camera-to-world rotation, rows of a 3×3 matrix.
    pub rotation: [[f64; 3]; 3],
    /// Horizontal focal length, in pixels.
    pub fx: f64,
    /// Vertical focal length, in pixels.
    pub fy: f64,
}

/// Why a cameras file was refused.
#[derive(Debug, thiserror::Error)]
pub enum CameraFileError {
    /// Not JSON, or not an array of cameras.
    #[error("malformed cameras JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// An empty array.
    #[error("the cameras file holds no camera")]
    Empty,
    /// A camera whose values make no camera (a zero size, a non-finite pose, …).
    #[error("camera {name:?}: {problem}")]
    Invalid {
        /// Its `img_name`.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// Relative difference of fx and fy below which pixels count as square.
const SQUARE_PIXELS: f64 = 1e-4;

impl InriaCamera {
    /// Parses and checks every camera of a `cameras.json` document.
    pub fn parse_all(json: &str) -> Result<Vec<InriaCamera>, CameraFileError> {
        let cameras: Vec<InriaCamera> = serde_json::from_str(json)?;
        if cameras.is_empty() {
            return Err(CameraFileError::Empty);
        }
        for camera in &cameras {
            camera.check()?;
        }
        Ok(cameras)
    }

    fn check(&self) -> Result<(), CameraFileError> {
        let fail = |problem: String| {
            Err(CameraFileError::Invalid {
                name: self.img_name.clone(),
                problem,
            })
        };
        let plain_name = !self.img_name.is_empty()
            && self.img_name != ".."
            && !self.img_name.contains(['/', '\\', '\0']);
        if !plain_name {
            return fail("img_name must be a plain file name".into());
        }
        if self.width == 0 || self.height == 0 {
            return fail(format!("zero-size image {}×{}", self.width, self.height));
        }
        if self.width > 16_384 || self.height > 16_384 {
            return fail(format!(
                "image {}×{} is larger than 16384",
                self.width, self.height
            ));
        }
        let numbers = self.position.iter().chain(self.rotation.iter().flatten());
        if !numbers.chain([&self.fx, &self.fy]).all(|v| v.is_finite()) {
            return fail("non-finite position, rotation or focal length".into());
        }
        if self.fx <= 0.0 || self.fy <= 0.0 {
            return fail(format!(
                "focal lengths must be positive, got fx {} fy {}",
                self.fx, self.fy
            ));
        }
        if ((self.fx - self.fy) / self.fy).abs() > SQUARE_PIXELS {
            return fail(format!(
                "fx {} and fy {} differ: only square pixels are supported",
                self.fx, self.fy
            ));
        }
        let r = self.rotation_matrix();
        let orthonormal = (r * r.transpose()).abs_diff_eq(Mat3::IDENTITY, 1e-3);
        if !orthonormal || (r.determinant() - 1.0).abs() > 1e-3 {
            return fail("rotation is not a proper rotation matrix".into());
        }
        Ok(())
    }

    fn rotation_matrix(&self) -> Mat3 {
        let rows = self.rotation.map(|row| row.map(|v| v as f32));
        Mat3::from_cols_array_2d(&rows).transpose()
    }

    /// The Bevy camera transform: OpenCV's camera looks down +Z with +Y down, Bevy's
    /// down −Z with +Y up, so the rotation is R·diag(1, −1, −1).
    pub fn transform(&self) -> Transform {
        let r = self.rotation_matrix() * Mat3::from_diagonal(Vec3::new(1.0, -1.0, -1.0));
        Transform {
            translation: Vec3::from_array(self.position.map(|v| v as f32)),
            rotation: Quat::from_mat3(&r).normalize(),
            scale: Vec3::ONE,
        }
    }

    /// A perspective projection with the camera's field of view and aspect, principal
    /// point at the image centre, and the given near plane.
    pub fn projection(&self, near: f32) -> PerspectiveProjection {
        let fov = 2.0 * (f64::from(self.height) / (2.0 * self.fy)).atan();
        PerspectiveProjection {
            fov: fov as f32,
            aspect_ratio: self.width as f32 / self.height as f32,
            near,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn camera_json(width: u32, fx: f64, rotation: &str) -> String {
        format!(
            r#"[{{"id":0,"img_name":"v","width":{width},"height":10,"position":[1,2,3],
            "rotation":{rotation},"fx":{fx},"fy":10.0}}]"#
        )
    }

    const IDENTITY: &str = "[[1,0,0],[0,1,0],[0,0,1]]";

    #[test]
    fn opencv_axes_map_to_bevy_axes() {
        let cameras = InriaCamera::parse_all(&camera_json(10, 10.0, IDENTITY)).unwrap();
        let t = cameras[0].transform();
        assert_eq!(t.translation, Vec3::new(1.0, 2.0, 3.0));
        // OpenCV forward (+Z) is Bevy's −Z of the camera; OpenCV down (+Y) is Bevy's −Y.
        assert!(t.forward().abs_diff_eq(Vec3::Z, 1e-6));
        assert!(t.up().abs_diff_eq(-Vec3::Y, 1e-6));
        let fov = cameras[0].projection(0.01).fov;
        assert!((fov - 2.0 * 0.5f32.atan()).abs() < 1e-6);
    }

    #[test]
    fn bad_cameras_are_named() {
        let zero = InriaCamera::parse_all(&camera_json(0, 10.0, IDENTITY)).unwrap_err();
        assert!(zero.to_string().contains("zero-size"), "{zero}");
        let skew = InriaCamera::parse_all(&camera_json(10, 12.0, IDENTITY)).unwrap_err();
        assert!(skew.to_string().contains("square pixels"), "{skew}");
        let bad = InriaCamera::parse_all(&camera_json(10, 10.0, "[[2,0,0],[0,1,0],[0,0,1]]"))
            .unwrap_err();
        assert!(bad.to_string().contains("rotation"), "{bad}");
        assert!(matches!(
            InriaCamera::parse_all("[]"),
            Err(CameraFileError::Empty)
        ));
        assert!(matches!(
            InriaCamera::parse_all("{"),
            Err(CameraFileError::Json(_))
        ));
    }
}
