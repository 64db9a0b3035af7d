//! Crop volumes: boxes and spheres in a cloud's frame that keep or cut away the splats
//! whose centres they contain.

use bevy::ecs::prelude::*;
use bevy::math::{Mat4, Quat, Vec3};
use bevy::reflect::prelude::*;

/// At most this many volumes of a [`SplatCrop`] act (the rest are ignored with a
/// warning): each is tested for every splat of every frame.
pub const MAX_CROP_VOLUMES: usize = crate::render::passes::preprocess::MAX_CROP_VOLUMES_GPU;

/// Cuts a cloud to the parts that matter, per splat centre in the cloud's own frame,
/// in the preprocess (no re-upload; changing it every frame is cheap). A splat is kept
/// when it lies inside at least one [`SplatCropMode::Keep`] volume (if there are any) and
/// inside no [`SplatCropMode::Cut`] volume. Drawing and ray casts apply it alike.
///
/// A volume with a zero, negative or non-finite size contains nothing: as the only
/// keep volume it keeps nothing; as a cut volume it cuts nothing.
#[derive(Component, Clone, Debug, Default, PartialEq, Reflect)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
pub struct SplatCrop {
    /// The volumes, in any order; only the first [`MAX_CROP_VOLUMES`] act.
    pub volumes: Vec<SplatCropVolume>,
}

/// One box or sphere and what it does to the splats inside it.
#[derive(Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Debug, Clone, PartialEq)]
pub struct SplatCropVolume {
    /// Where the volume is, in the cloud's frame.
    pub shape: SplatCropShape,
    /// Whether it keeps or cuts the splats inside it.
    pub mode: SplatCropMode,
}

/// The shape of a [`SplatCropVolume`], in the cloud's frame.
#[derive(Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Debug, Clone, PartialEq)]
pub enum SplatCropShape {
    /// A box of `half_size` about `centre`, turned by `rotation`.
    Box {
        /// The box's centre.
        centre: Vec3,
        /// Half its extent along each of its own axes.
        half_size: Vec3,
        /// Its axes' rotation from the cloud's.
        rotation: Quat,
    },
    /// A ball of `radius` about `centre`.
    Sphere {
        /// The ball's centre.
        centre: Vec3,
        /// Its radius.
        radius: f32,
    },
}

/// What a [`SplatCropVolume`] does to the splats inside it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Reflect)]
#[reflect(Default, Debug, Clone, PartialEq, Hash)]
pub enum SplatCropMode {
    /// Keep what is inside (and, with any keep volume, cut everything outside them).
    #[default]
    Keep,
    /// Cut away what is inside.
    Cut,
}

impl SplatCropVolume {
    /// Keeps what lies in the axis-aligned box of `half_size` about `centre`.
    pub fn keep_box(centre: Vec3, half_size: Vec3) -> Self {
        Self::axis_box(centre, half_size, SplatCropMode::Keep)
    }

    /// Cuts what lies in the axis-aligned box of `half_size` about `centre`.
    pub fn cut_box(centre: Vec3, half_size: Vec3) -> Self {
        Self::axis_box(centre, half_size, SplatCropMode::Cut)
    }

    /// Keeps what lies in the ball of `radius` about `centre`.
    pub fn keep_sphere(centre: Vec3, radius: f32) -> Self {
        Self {
            shape: SplatCropShape::Sphere { centre, radius },
            mode: SplatCropMode::Keep,
        }
    }

    /// Cuts what lies in the ball of `radius` about `centre`.
    pub fn cut_sphere(centre: Vec3, radius: f32) -> Self {
        Self {
            shape: SplatCropShape::Sphere { centre, radius },
            mode: SplatCropMode::Cut,
        }
    }

    fn axis_box(centre: Vec3, half_size: Vec3, mode: SplatCropMode) -> Self {
        Self {
            shape: SplatCropShape::Box {
                centre,
                half_size,
                rotation: Quat::IDENTITY,
            },
            mode,
        }
    }

    /// The map from the cloud's frame into the volume's unit shape (the cube
    /// `[-1, 1]³` or the unit ball); `None` when the volume contains nothing.
    pub fn unit_from_cloud(&self) -> Option<Mat4> {
        let (centre, half_size, rotation) = match self.shape {
            SplatCropShape::Box {
                centre,
                half_size,
                rotation,
            } => (centre, half_size, rotation),
            SplatCropShape::Sphere { centre, radius } => {
                (centre, Vec3::splat(radius), Quat::IDENTITY)
            }
        };
        let usable = centre.is_finite()
            && half_size.is_finite()
            && half_size.min_element() > 0.0
            && rotation.is_finite()
            && rotation.length_squared() > 0.0;
        if !usable {
            return None;
        }
        let cloud_from_unit =
            Mat4::from_scale_rotation_translation(half_size, rotation.normalize(), centre);
        let unit_from_cloud = cloud_from_unit.inverse();
        unit_from_cloud.is_finite().then_some(unit_from_cloud)
    }

    /// Whether the volume contains `point` (cloud frame), as the GPU decides it.
    pub fn contains(&self, point: Vec3) -> bool {
        let Some(unit_from_cloud) = self.unit_from_cloud() else {
            return false;
        };
        let q = unit_from_cloud.transform_point3(point);
        match self.shape {
            SplatCropShape::Box { .. } => q.abs().max_element() <= 1.0,
            SplatCropShape::Sphere { .. } => q.length_squared() <= 1.0,
        }
    }
}

impl SplatCrop {
    /// Whether a splat centred at `point` (cloud frame) survives the crop. Only the
    /// first [`MAX_CROP_VOLUMES`] volumes count, as on the GPU.
    pub fn keeps(&self, point: Vec3) -> bool {
        let volumes = &self.volumes[..self.volumes.len().min(MAX_CROP_VOLUMES)];
        let mut any_keep = false;
        let mut inside_keep = false;
        for volume in volumes {
            let inside = volume.contains(point);
            match volume.mode {
                SplatCropMode::Keep => {
                    any_keep = true;
                    inside_keep |= inside;
                }
                SplatCropMode::Cut if inside => return false,
                SplatCropMode::Cut => {}
            }
        }
        !any_keep || inside_keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_and_cut_volumes_combine() {
        let crop = SplatCrop {
            volumes: vec![
                SplatCropVolume::keep_box(Vec3::ZERO, Vec3::ONE),
                SplatCropVolume::cut_sphere(Vec3::new(1.0, 0.0, 0.0), 0.5),
            ],
        };
        assert!(crop.keeps(Vec3::new(-0.5, 0.5, 0.9)));
        assert!(
            !crop.keeps(Vec3::new(0.0, 1.5, 0.0)),
            "outside the keep box"
        );
        assert!(
            !crop.keeps(Vec3::new(0.8, 0.0, 0.0)),
            "inside the cut sphere"
        );
        assert!(
            SplatCrop::default().keeps(Vec3::splat(1e9)),
            "no volumes: all kept"
        );
    }

    #[test]
    fn rotated_boxes_turn_with_their_rotation() {
        let turned = SplatCropVolume {
            shape: SplatCropShape::Box {
                centre: Vec3::ZERO,
                half_size: Vec3::new(2.0, 0.1, 0.1),
                rotation: Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            },
            mode: SplatCropMode::Keep,
        };
        assert!(turned.contains(Vec3::new(0.0, 1.9, 0.0)));
        assert!(!turned.contains(Vec3::new(1.9, 0.0, 0.0)));
    }

    #[test]
    fn empty_volumes_contain_nothing() {
        for volume in [
            SplatCropVolume::keep_box(Vec3::ZERO, Vec3::ZERO),
            SplatCropVolume::keep_box(Vec3::ZERO, Vec3::new(1.0, -1.0, 1.0)),
            SplatCropVolume::keep_sphere(Vec3::ZERO, -2.0),
            SplatCropVolume::keep_sphere(Vec3::NAN, 1.0),
            SplatCropVolume::keep_sphere(Vec3::ZERO, f32::INFINITY),
        ] {
            assert_eq!(volume.unit_from_cloud(), None, "{volume:?}");
            assert!(!volume.contains(Vec3::ZERO));
            let only = SplatCrop {
                volumes: vec![volume],
            };
            assert!(
                !only.keeps(Vec3::ZERO),
                "an empty keep volume keeps nothing"
            );
            let cut = SplatCrop {
                volumes: vec![SplatCropVolume {
                    mode: SplatCropMode::Cut,
                    ..volume
                }],
            };
            assert!(cut.keeps(Vec3::ZERO), "an empty cut volume cuts nothing");
        }
    }

    #[test]
    fn volumes_past_the_gpu_limit_are_ignored() {
        let mut volumes =
            vec![SplatCropVolume::keep_sphere(Vec3::splat(100.0), 1.0); MAX_CROP_VOLUMES];
        volumes.push(SplatCropVolume::keep_sphere(Vec3::ZERO, 1.0));
        let crop = SplatCrop { volumes };
        assert!(!crop.keeps(Vec3::ZERO));
    }
}
