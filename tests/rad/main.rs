//! Spark's `.rad`: files written by Spark's own `build-lod`, compared with Spark's own
//! decoding of them and with the scans they were made from; files this crate writes,
//! read back; malformed input.
#![cfg(feature = "rad")]

mod common;
mod malformed;
mod spark_files;
mod tree;
mod written;
