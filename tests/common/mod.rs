//! Helpers shared by the integration tests (each `tests/*.rs` includes `mod common;`).
#![allow(dead_code)]

pub mod gpu;
pub mod random;
