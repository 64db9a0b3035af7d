//! `SplatPickingPlugin` on lavapipe: pointers over a headless camera's image get
//! `bevy_picking` hits on clouds, found by the GPU pick under the median-depth rule,
//! checked against the CPU reference rasterizer, the CPU ray cast, and the scene's
//! other parts (meshes, crops, tints, `Pickable::IGNORE`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../reference_raster/mod.rs"]
mod reference_raster;

mod against_reference;
mod pointers;
mod scene;
