//! The glTF decoder (`KHR_gaussian_splatting` and its drafts): real files from
//! Khronos-extension adopters, the SPZ-in-glTF axes against the plain SPZ file, accessor
//! encodings, malformed input, random mutations and the writer's round trip.
#![cfg(feature = "gltf")]

mod accessors;
mod common;
mod malformed;
mod no_panic;
mod real_files;
mod round_trip;
mod scene;
mod tower_relation;
