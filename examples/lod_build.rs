//! How long a cloud's level-of-detail tree takes to build, on one core: the number in
//! BENCHMARKS.md's "Level of detail" section.
//!
//! ```sh
//! cargo run --release --example lod_build [-- FILE] [--grid K]
//! ```
//!
//! Reads FILE (default: the shipped angel), repeats it K × K times side by side (as
//! the bench's angel grid does), builds the tree on this thread and prints the time
//! per million splats, the interior nodes and the tree's bytes beside the splats'.

use std::path::PathBuf;
use std::time::Instant;

use bevy_splat::GaussianSplats;
use bevy_splat::asset::SplatGeometry;
use bevy_splat::headless::scene;
use bevy_splat::lod::SplatLodTree;

fn main() {
    let mut path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/angel.ply");
    let mut grid = 1u32;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--grid", Some(k)) => match k.parse() {
                Ok(k) if (1..=64).contains(&k) => grid = k,
                _ => return usage(),
            },
            (file, None) if !file.starts_with("--") => path = file.into(),
            _ => return usage(),
        }
    }
    let clouds = match scene::load(&path) {
        Ok(clouds) => clouds,
        Err(error) => {
            eprintln!("error: {}: {error}", path.display());
            std::process::exit(1);
        }
    };
    for (cloud, _) in clouds {
        let cloud = repeated(&cloud, grid);
        let started = Instant::now();
        let tree = SplatLodTree::build(&cloud);
        let seconds = started.elapsed().as_secs_f64();
        let millions = cloud.len() as f64 / 1e6;
        let leaf_bytes = cloud.len() * (size_of::<SplatGeometry>() + 4 * cloud.sh_stride());
        println!(
            "{} splats (SH degree {}): tree built in {seconds:.3} s on one core, {:.3} s per \
             million; {} interior nodes ({:.3} per splat); tree {:.1} MiB, {:.3}× the \
             splats' {:.1} MiB",
            cloud.len(),
            cloud.sh_degree(),
            seconds / millions.max(1e-9),
            tree.interior().len(),
            tree.interior().len() as f64 / cloud.len().max(1) as f64,
            tree.heap_bytes() as f64 / 1048576.0,
            tree.heap_bytes() as f64 / leaf_bytes.max(1) as f64,
            leaf_bytes as f64 / 1048576.0,
        );
    }
}

fn usage() {
    eprintln!("usage: lod_build [FILE] [--grid K]");
    std::process::exit(2);
}

/// `cloud` repeated `k` × `k` times on a grid of 2-unit steps in x and z.
fn repeated(cloud: &GaussianSplats, k: u32) -> GaussianSplats {
    if k == 1 {
        return cloud.clone();
    }
    let mut geometry = Vec::with_capacity(cloud.len() * (k * k) as usize);
    let mut sh = Vec::with_capacity(cloud.sh().len() * (k * k) as usize);
    for i in 0..k {
        for j in 0..k {
            geometry.extend(cloud.geometry().iter().map(|g| SplatGeometry {
                position: [
                    g.position[0] + 2.0 * i as f32,
                    g.position[1],
                    g.position[2] + 2.0 * j as f32,
                ],
                ..*g
            }));
            sh.extend_from_slice(cloud.sh());
        }
    }
    GaussianSplats::new(geometry, sh, cloud.sh_degree()).unwrap_or_else(|| cloud.clone())
}
