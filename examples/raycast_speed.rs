//! How fast the CPU ray cast builds its tree and answers rays on a real scan:
//!
//! ```text
//! cargo run --release --example raycast_speed -- [--ply FILE] [--grid K] [--rays N]
//! ```
//!
//! `--grid K` repeats the scan K×K times, 1.8 apart, in ONE cloud (K = 4 makes the
//! shipped angel 1.14 M splats), seen from the camera of `bench --angel-grid K`; rays
//! go through an even grid of that camera's pixels (45° vertical, 16:9), so most of
//! them hit. Prints the build time, rays per second and the share that hit.

use std::path::PathBuf;
use std::time::Instant;

use bevy::math::{Quat, Vec3};
use bevy_splat::asset::formats;
use bevy_splat::raycast::bvh_cache::shape_of;
use bevy_splat::raycast::{CastSettings, SplatBvh, SplatShape};

struct Args {
    file: PathBuf,
    grid: u32,
    rays: u32,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        file: PathBuf::from("assets/angel.ply"),
        grid: 1,
        rays: 20_000,
    };
    let mut raw = std::env::args().skip(1);
    while let Some(flag) = raw.next() {
        let value = raw.next().ok_or(format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<u32>()
                .map_err(|_| format!("{flag} {value:?}"))
        };
        match flag.as_str() {
            "--ply" => args.file = PathBuf::from(&value),
            "--grid" => args.grid = number()?.clamp(1, 64),
            "--rays" => args.rays = number()?.max(1),
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    Ok(args)
}

fn main() {
    if let Err(message) = run() {
        eprintln!("raycast_speed: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args = parse()?;
    let splats = formats::decode_path(&args.file).map_err(|e| e.to_string())?;
    let one: Vec<SplatShape> = splats.geometry.iter().map(shape_of).collect();
    let k = args.grid;
    let offset = |n: u32| (n as f32 - (k as f32 - 1.0) / 2.0) * 1.8;
    let mut shapes = Vec::with_capacity(one.len() * (k * k) as usize);
    for i in 0..k {
        for j in 0..k {
            let shift = Vec3::new(offset(i), 0.0, offset(j));
            shapes.extend(one.iter().map(|s| SplatShape {
                centre: s.centre + shift,
                ..*s
            }));
        }
    }

    let start = Instant::now();
    let bvh = SplatBvh::from_shapes(&shapes);
    let build = start.elapsed();

    // The bench camera: above and behind the grid, looking at its centre.
    let g = 1.8 * k as f32;
    let eye = Vec3::new(0.0, 0.5 * g, -1.2 * g);
    let forward = (Vec3::ZERO - eye).normalize();
    let rotation = Quat::from_rotation_arc(Vec3::NEG_Z, forward);
    let (right, up) = (rotation * Vec3::X, rotation * Vec3::Y);
    let half_height = (45f32.to_radians() / 2.0).tan();
    let half_width = half_height * 16.0 / 9.0;
    let columns = ((args.rays as f32 * 16.0 / 9.0).sqrt().ceil() as u32).max(1);
    let rows = args.rays.div_ceil(columns);

    let settings = CastSettings::default();
    let (mut hits, mut cast) = (0u32, 0u32);
    let start = Instant::now();
    for row in 0..rows {
        for column in 0..columns {
            let x = ((column as f32 + 0.5) / columns as f32 * 2.0 - 1.0) * half_width;
            let y = (1.0 - (row as f32 + 0.5) / rows as f32 * 2.0) * half_height;
            let direction = forward + right * x + up * y;
            hits += u32::from(bvh.cast(eye, direction, &settings).is_some());
            cast += 1;
        }
    }
    let casting = start.elapsed();
    println!(
        "{}: {} splats ({}×{} copies): BVH built in {:.0} ms; {cast} rays in {:.0} ms = {:.0} rays/s, {:.0} % hit",
        args.file.display(),
        bvh.len(),
        k,
        k,
        build.as_secs_f64() * 1e3,
        casting.as_secs_f64() * 1e3,
        f64::from(cast) / casting.as_secs_f64(),
        100.0 * f64::from(hits) / f64::from(cast)
    );
    Ok(())
}
