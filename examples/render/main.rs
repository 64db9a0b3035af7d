//! Renders every camera of an Inria `cameras.json` headless, no window:
//!
//! ```text
//! cargo run --release --example render -- --ply FILE --cameras CAMERAS.json --out DIR
//! ```
//!
//! Each camera renders at its own width and height on black, with the splat layer's
//! values as rendered (no tonemapping, no colour conversion), to `DIR/<img_name>.png`
//! (8-bit RGB) — the images the reference rasterizer writes for the same cameras.

mod headless;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bevy::math::UVec2;
use bevy::transform::components::Transform;
use bevy_splat::GaussianSplats;
use bevy_splat::asset::ply;
use bevy_splat::cameras::InriaCamera;

use headless::Headless;

/// Near plane of the parity renders: the reference's `near_plane`.
const NEAR: f32 = 0.01;

struct Args {
    ply: PathBuf,
    cameras: PathBuf,
    out: PathBuf,
}

const USAGE: &str = "usage: render --ply FILE --cameras CAMERAS.json --out DIR";

fn parse_args() -> Result<Args, String> {
    let mut ply = None;
    let mut cameras = None;
    let mut out = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let slot = match flag.as_str() {
            "--ply" => &mut ply,
            "--cameras" => &mut cameras,
            "--out" => &mut out,
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other:?}; {USAGE}")),
        };
        let value = args.next().ok_or(format!("{flag} needs a value; {USAGE}"))?;
        *slot = Some(PathBuf::from(value));
    }
    Ok(Args {
        ply: ply.ok_or(format!("missing --ply; {USAGE}"))?,
        cameras: cameras.ok_or(format!("missing --cameras; {USAGE}"))?,
        out: out.ok_or(format!("missing --out; {USAGE}"))?,
    })
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let bytes = read(&args.ply)?;
    let splats = ply::decode(&bytes).map_err(|e| format!("{}: {e}", args.ply.display()))?;
    let json = read(&args.cameras)?;
    let json = String::from_utf8(json)
        .map_err(|_| format!("{}: not UTF-8 text", args.cameras.display()))?;
    let cameras =
        InriaCamera::parse_all(&json).map_err(|e| format!("{}: {e}", args.cameras.display()))?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;

    let mut headless = Headless::new();
    let handle = headless.add_splats(GaussianSplats::from(splats));
    headless.spawn_cloud(handle, Transform::IDENTITY);
    let views: Vec<_> = cameras
        .iter()
        .map(|camera| {
            headless.spawn_camera(
                camera.transform(),
                camera.projection(NEAR),
                UVec2::new(camera.width, camera.height),
                None,
            )
        })
        .collect();
    let images = headless.render(&views)?;
    for (camera, image) in cameras.iter().zip(images) {
        let path = args.out.join(format!("{}.png", camera.img_name));
        image::save_buffer(
            &path,
            &image.rgb(),
            image.width,
            image.height,
            image::ExtendedColorType::Rgb8,
        )
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
