//! The SOG decoder: the real v1 and v2 files, the same angel as its PLY, PlayCanvas's
//! own reader's output, synthetic layouts, malformed input and random mutations.
#![cfg(feature = "sog")]

mod angel_vs_ply;
mod common;
mod fixtures;
mod fuzz;
mod layout;
mod lod;
mod malformed;
mod splat_transform;
