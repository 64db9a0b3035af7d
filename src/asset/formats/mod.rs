//! One decoder per splat file format, each from bytes to [`DecodedSplats`]: pure Rust
//! on byte slices, no Bevy, so each can be tested and fuzzed on its own.
//!
//! [`DecodedSplats`]: crate::asset::DecodedSplats

pub mod ply;
#[cfg(feature = "sog")]
pub mod sog;
pub mod splat;
#[cfg(feature = "spz")]
pub mod spz;
