//! Shared test helpers: a small deterministic PRNG, random splat clouds and
//! random rays.

#![allow(dead_code)] // Each test binary uses a different subset.

use bevy::math::{Quat, Vec3, Vec4};
use bevy_splat::raycast::SplatShape;

/// xorshift64* — tiny, deterministic, good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        // A zero state would stay zero forever.
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn chance(&mut self, p: f32) -> bool {
        self.unit() < p
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f32 {
        let u = self.unit().max(1e-7);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }

    pub fn in_cube(&mut self, half: f32) -> Vec3 {
        Vec3::new(
            self.range(-half, half),
            self.range(-half, half),
            self.range(-half, half),
        )
    }

    pub fn unit_vector(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(self.normal(), self.normal(), self.normal());
            if v.length_squared() > 1e-6 {
                return v.normalize();
            }
        }
    }

    /// Uniformly distributed rotation (normalised 4-D Gaussian).
    pub fn rotation(&mut self) -> Quat {
        loop {
            let v = Vec4::new(self.normal(), self.normal(), self.normal(), self.normal());
            if v.length_squared() > 1e-6 {
                return Quat::from_vec4(v.normalize());
            }
        }
    }
}

/// `count` splats in the cube [-half, half]³: log-normal scales around a
/// size that makes rays meet a handful of splats, with some discs (one very
/// thin axis) and needles (two), random rotations and opacities.
pub fn random_cloud(rng: &mut Rng, count: usize, half: f32) -> Vec<SplatShape> {
    let spacing = 2.0 * half / (count as f32).cbrt();
    (0..count)
        .map(|_| {
            let base = 0.25 * spacing;
            let mut scale = Vec3::new(
                base * (0.6 * rng.normal()).exp(),
                base * (0.6 * rng.normal()).exp(),
                base * (0.6 * rng.normal()).exp(),
            );
            let shape_kind = rng.unit();
            if shape_kind < 0.15 {
                // Disc, thinness from 1e-2 down to 1e-6.
                scale.z *= 10f32.powf(rng.range(-6.0, -2.0));
            } else if shape_kind < 0.2 {
                // Needle.
                scale.y *= 10f32.powf(rng.range(-4.0, -2.0));
                scale.z *= 10f32.powf(rng.range(-4.0, -2.0));
            }
            let opacity = if rng.chance(0.3) {
                rng.range(0.9, 1.0)
            } else {
                rng.unit()
            };
            SplatShape {
                centre: rng.in_cube(half),
                scale,
                rotation: rng.rotation(),
                opacity,
            }
        })
        .collect()
}

/// The smallest and largest standard deviation of a shape, and the axis of
/// the smallest, in the cloud frame.
pub fn thinnest_axis(shape: &SplatShape) -> (Vec3, f32) {
    let s = shape.scale;
    let local = if s.x <= s.y && s.x <= s.z {
        (Vec3::X, s.x)
    } else if s.y <= s.z {
        (Vec3::Y, s.y)
    } else {
        (Vec3::Z, s.z)
    };
    (shape.rotation.normalize() * local.0, local.1)
}

/// Any unit vector perpendicular to `axis`.
pub fn perpendicular(rng: &mut Rng, axis: Vec3) -> Vec3 {
    loop {
        let v = rng.unit_vector();
        let p = v - axis * v.dot(axis);
        if p.length_squared() > 1e-4 {
            return p.normalize();
        }
    }
}
