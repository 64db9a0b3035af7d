//! The output arrays, allocated once and filled in place, one splat at a time.

use super::layout::{Slot, VertexLayout};
use crate::asset::decoded::{DecodedSplats, SplatGeometry};

pub(super) struct Output {
    geometry: Vec<SplatGeometry>,
    sh: Vec<f32>,
    stride: usize,
    sh_degree: u8,
}

/// One splat being filled.
pub(super) struct SplatMut<'a> {
    pub geometry: &'a mut [f32; 12],
    pub sh: &'a mut [f32],
}

impl SplatMut<'_> {
    #[inline(always)]
    pub(super) fn set(&mut self, slot: Slot, value: f32) {
        match slot {
            Slot::Geometry(i) => self.geometry[i] = value,
            Slot::Sh(i) => self.sh[i] = value,
        }
    }
}

impl Output {
    /// Zeroed room for `count` splats; the caller has bounded `count` by the input size.
    pub(super) fn zeroed(layout: &VertexLayout, count: usize) -> Output {
        let stride = layout.sh_stride();
        Output {
            geometry: vec![bytemuck::Zeroable::zeroed(); count],
            sh: vec![0.0; count * stride],
            stride,
            sh_degree: layout.sh_degree,
        }
    }

    /// Every splat, in order.
    pub(super) fn splats(&mut self) -> impl Iterator<Item = SplatMut<'_>> {
        self.geometry
            .iter_mut()
            .zip(self.sh.chunks_exact_mut(self.stride))
            .map(|(geometry, sh)| SplatMut {
                geometry: bytemuck::cast_mut(geometry),
                sh,
            })
    }

    pub(super) fn finish(self, non_finite: usize) -> DecodedSplats {
        DecodedSplats {
            geometry: self.geometry,
            sh_degree: self.sh_degree,
            sh: self.sh,
            non_finite,
            antialiased: false,
        }
    }
}

/// NaN or ±Inf: all exponent bits set. A bit test, so that callers can OR it into a
/// flag per splat without branching.
#[inline(always)]
pub(super) fn non_finite(value: f32) -> bool {
    value.to_bits() & 0x7f80_0000 == 0x7f80_0000
}
