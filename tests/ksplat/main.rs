//! The `.ksplat` decoder: real files written by GaussianSplats3D 0.4.7 compared with
//! the library's own decoding, with splat-transform's, and with the PLYs they were
//! made from; then broken and randomly mutated input. `tests/data/ksplat/README.md`
//! says where each fixture comes from.

mod common;
mod library;
mod malformed;
mod mutations;
mod source_ply;
mod splat_transform;
