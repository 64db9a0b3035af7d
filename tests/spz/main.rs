//! The SPZ and `.splat` decoders: Niantic's own files and decodings, the shared real
//! files, malformed input and random mutations. `tests/data/spz/FIXTURES.md` says where
//! each fixture comes from.
#![cfg(feature = "spz")]

mod common;
mod malformed;
mod niantic_reference;
mod no_panic;
mod real_files;
mod splat_file;
