//! The CPU ray cast: the BVH walk against brute force and an independent f64 model
//! (`tree_vs_brute_force`, `against_reference`, on random clouds from
//! `random_clouds`), and `SplatRaycast` over the clouds of a Bevy app (`clouds`).

mod against_reference;
mod clouds;
mod random_clouds;
mod tree_vs_brute_force;
