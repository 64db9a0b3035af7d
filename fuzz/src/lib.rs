//! The crate's decoders, included by path and re-exported in the module tree they have
//! in `bevy_splat` (`crate::asset::decoded`, `crate::asset::formats::*`): they have no
//! Bevy dependency, so the fuzz targets build in seconds, sanitizers and all.

#[path = "../../src/asset/decoded.rs"]
#[doc(hidden)]
pub mod decoded;
#[path = "../../src/asset/formats/gltf/mod.rs"]
#[doc(hidden)]
pub mod gltf;
#[path = "../../src/asset/formats/ksplat/mod.rs"]
#[doc(hidden)]
pub mod ksplat;
#[path = "../../src/asset/formats/ply/mod.rs"]
#[doc(hidden)]
pub mod ply;
#[path = "../../src/asset/formats/rad/mod.rs"]
#[doc(hidden)]
pub mod rad;
#[path = "../../src/asset/formats/sog/mod.rs"]
#[doc(hidden)]
pub mod sog;
#[path = "../../src/asset/formats/splat.rs"]
#[doc(hidden)]
pub mod splat;
#[path = "../../src/asset/formats/spz/mod.rs"]
#[doc(hidden)]
pub mod spz;

pub mod asset {
    pub use crate::decoded;

    pub mod formats {
        pub use crate::{gltf, ksplat, ply, rad, sog, splat, spz};
    }
}
