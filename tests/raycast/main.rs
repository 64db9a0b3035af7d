//! The CPU ray cast: the BVH walk against brute force and an independent f64 model
//! (`tree_vs_brute_force`, `against_reference`, on random clouds from
//! `random_clouds`), `SplatRaycast` over the clouds of a Bevy app (`clouds`), and camera
//! rays against the reference rasterizer's median depth on a real scan (`pixels`).

mod against_reference;
mod clouds;
mod pixels;
mod random_clouds;
#[path = "../reference_raster/mod.rs"]
mod reference_raster;
mod tree_vs_brute_force;
