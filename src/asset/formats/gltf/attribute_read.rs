//! One attribute of one primitive: its format checked against what the spec allows,
//! its count against the primitive's, then its floats read.

use super::accessors::{self, Component, Format, Shape};
use super::buffers::Buffers;
use super::document::Root;
use super::error::{GltfError, Site};

/// What the attributes of one primitive are read against.
pub(crate) struct Reader<'r, 'x> {
    pub root: &'r Root,
    pub buffers: &'r Buffers<'x>,
    pub site: Site,
    /// POSITION's count, which every other attribute must match.
    pub count: u64,
}

/// An allowed-format rule and its wording for the error message.
pub(crate) struct Allowed {
    pub test: fn(Format) -> bool,
    pub expected: &'static str,
}

impl Reader<'_, '_> {
    /// The format of `accessor`, refused unless `allowed` accepts it, with its count
    /// checked against POSITION's.
    pub(crate) fn check(
        &self,
        name: &str,
        accessor: usize,
        allowed: &Allowed,
    ) -> Result<Format, GltfError> {
        let (format, count) = accessors::describe(self.root, accessor)?;
        if !(allowed.test)(format) {
            return Err(GltfError::WrongAccessorFormat {
                site: self.site,
                attribute: name.to_owned(),
                accessor,
                found: format.to_string(),
                expected: allowed.expected,
            });
        }
        if count != self.count {
            return Err(GltfError::MismatchedCounts {
                site: self.site,
                attribute: name.to_owned(),
                count,
                reference: "POSITION".to_owned(),
                reference_count: self.count,
            });
        }
        Ok(format)
    }

    /// Checks and reads `accessor` as `count × components` floats.
    pub(crate) fn read(
        &self,
        name: &str,
        accessor: usize,
        allowed: &Allowed,
    ) -> Result<(Format, Vec<f32>), GltfError> {
        let format = self.check(name, accessor, allowed)?;
        Ok((format, accessors::read(self.root, self.buffers, accessor)?))
    }
}

fn is(format: Format, shape: Shape, component: Component, normalized: bool) -> bool {
    format.shape == shape && format.component == component && format.normalized == normalized
}

fn float(format: Format, shape: Shape) -> bool {
    is(format, shape, Component::F32, false)
}

/// POSITION: float VEC3, or the integer types KHR_mesh_quantization adds.
pub(crate) const POSITION: Allowed = Allowed {
    test: |f| f.shape == Shape::Vec3 && f.component != Component::U32,
    expected: "VEC3 FLOAT (or a KHR_mesh_quantization integer type)",
};

pub(crate) const ROTATION: Allowed = Allowed {
    test: |f| {
        float(f, Shape::Vec4)
            || is(f, Shape::Vec4, Component::I8, true)
            || is(f, Shape::Vec4, Component::I16, true)
    },
    expected: "VEC4 FLOAT, BYTE normalized or SHORT normalized",
};

/// SCALE: the ratified unsigned types, the 2026-01 draft's signed ones, and SCALAR
/// (one isotropic scale), which Cesium's 3d-tiles-tools wrote.
pub(crate) const SCALE: Allowed = Allowed {
    test: |f| matches!(f.shape, Shape::Vec3 | Shape::Scalar) && f.component != Component::U32,
    expected: "VEC3 (or SCALAR) FLOAT, or (UNSIGNED) BYTE or SHORT, normalized or not",
};

pub(crate) const OPACITY: Allowed = Allowed {
    test: |f| {
        float(f, Shape::Scalar)
            || is(f, Shape::Scalar, Component::U8, true)
            || is(f, Shape::Scalar, Component::U16, true)
    },
    expected: "SCALAR FLOAT, UNSIGNED_BYTE normalized or UNSIGNED_SHORT normalized",
};

/// SH coefficients: float VEC3; VEC4 too, which Cesium's tools declared (the fourth
/// value is ignored).
pub(crate) const SH: Allowed = Allowed {
    test: |f| float(f, Shape::Vec3) || float(f, Shape::Vec4),
    expected: "VEC3 FLOAT",
};

/// COLOR_0: the glTF core types, plus integers without `normalized` (read as if
/// normalized: no real colour is stored as integers 0..255 meaning 0..255).
pub(crate) const COLOR_0: Allowed = Allowed {
    test: |f| {
        matches!(f.shape, Shape::Vec3 | Shape::Vec4)
            && (float(f, f.shape) || matches!(f.component, Component::U8 | Component::U16))
    },
    expected: "VEC3/VEC4 FLOAT, UNSIGNED_BYTE normalized or UNSIGNED_SHORT normalized",
};

pub(crate) const EXACT_VEC3: Allowed = Allowed {
    test: |f| float(f, Shape::Vec3),
    expected: "VEC3 FLOAT",
};
pub(crate) const EXACT_VEC4: Allowed = Allowed {
    test: |f| float(f, Shape::Vec4),
    expected: "VEC4 FLOAT",
};
pub(crate) const EXACT_SCALAR: Allowed = Allowed {
    test: |f| float(f, Shape::Scalar),
    expected: "SCALAR FLOAT",
};
