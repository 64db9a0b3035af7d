//! The `render` example's command line: arguments in, images out, one-line errors.

use std::path::{Path, PathBuf};

use bevy::math::UVec2;
use bevy::prelude::{DefaultPlugins, PluginGroup};
use bevy::winit::WinitPlugin;
use bevy_splat::cameras::InriaCamera;
use bevy_splat::headless::{Headless, quiet_log, scene};
use bevy_splat::{SplatRasterMode, SplatStorage};

/// Near plane of the parity renders: the reference's `near_plane`.
const NEAR: f32 = 0.01;

struct Args {
    ply: PathBuf,
    cameras: PathBuf,
    out: PathBuf,
    storage: SplatStorage,
    raster_mode: Option<SplatRasterMode>,
    /// Render as a window shows it (`--display`): an sRGB image, the default
    /// composite, over `background` (sRGB values).
    display: Option<[f32; 3]>,
}

const USAGE: &str = "usage: render --ply FILE --cameras CAMERAS.json --out DIR [--full | --half-sh | --compact] \
                     [--raster-mode classic|antialiased] [--display [--background R,G,B]] (FILE: .ply, .splat, .spz, .sog, a SOG meta.json or lod-meta.json, .rad, .ksplat, .gltf or .glb)";

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut ply = None;
    let mut cameras = None;
    let mut out = None;
    let mut storage = SplatStorage::default();
    let mut raster_mode = None;
    let mut display = false;
    let mut background = [0.0; 3];
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        let slot = match flag.as_str() {
            "--full" => {
                storage = SplatStorage::Full;
                continue;
            }
            "--half-sh" => {
                storage = SplatStorage::HalfSh;
                continue;
            }
            "--compact" => {
                storage = SplatStorage::Compact;
                continue;
            }
            "--raster-mode" => {
                raster_mode = Some(match args.next().as_deref() {
                    Some("classic") => SplatRasterMode::Classic,
                    Some("antialiased") => SplatRasterMode::Antialiased,
                    _ => {
                        return Err(format!(
                            "--raster-mode takes classic or antialiased; {USAGE}"
                        ));
                    }
                });
                continue;
            }
            "--display" => {
                display = true;
                continue;
            }
            "--background" => {
                background = args
                    .next()
                    .as_deref()
                    .and_then(parse_rgb)
                    .ok_or(format!("--background takes R,G,B in [0, 1]; {USAGE}"))?;
                continue;
            }
            "--ply" => &mut ply,
            "--cameras" => &mut cameras,
            "--out" => &mut out,
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other:?}; {USAGE}")),
        };
        let value = args
            .next()
            .ok_or(format!("{flag} needs a value; {USAGE}"))?;
        *slot = Some(PathBuf::from(value));
    }
    Ok(Args {
        ply: ply.ok_or(format!("missing --ply; {USAGE}"))?,
        cameras: cameras.ok_or(format!("missing --cameras; {USAGE}"))?,
        out: out.ok_or(format!("missing --out; {USAGE}"))?,
        storage,
        raster_mode,
        display: display.then_some(background),
    })
}

/// `R,G,B`, each in [0, 1].
fn parse_rgb(text: &str) -> Option<[f32; 3]> {
    let values: Vec<f32> = text
        .split(',')
        .map(|v| v.trim().parse().ok())
        .collect::<Option<_>>()?;
    let rgb: [f32; 3] = values.try_into().ok()?;
    rgb.iter().all(|v| (0.0..=1.0).contains(v)).then_some(rgb)
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Renders every camera of the files named in `args` (the command line without the
/// program name) and returns the images written. Errors are one line each.
pub fn run(args: impl IntoIterator<Item = String>) -> Result<Vec<PathBuf>, String> {
    run_inner(args).map_err(|message| one_line(&message))
}

/// Folds a multi-line message (some parser errors span lines) into one line.
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn run_inner(args: impl IntoIterator<Item = String>) -> Result<Vec<PathBuf>, String> {
    let args = parse_args(args)?;
    let clouds = scene::load(&args.ply).map_err(|e| e.to_string())?;
    let json = read(&args.cameras)?;
    let json = String::from_utf8(json)
        .map_err(|_| format!("{}: not UTF-8 text", args.cameras.display()))?;
    let cameras =
        InriaCamera::parse_all(&json).map_err(|e| format!("{}: {e}", args.cameras.display()))?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;

    let mut headless = Headless::new(DefaultPlugins.set(quiet_log()).disable::<WinitPlugin>());
    for (splats, transform) in clouds {
        let handle = headless.add_splats(splats.with_storage(args.storage));
        let cloud = headless.spawn_cloud(handle, transform);
        if let Some(mode) = args.raster_mode {
            headless.app.world_mut().entity_mut(cloud).insert(mode);
        }
    }
    let views: Vec<_> = cameras
        .iter()
        .map(|camera| {
            let (transform, size) = (camera.transform(), UVec2::new(camera.width, camera.height));
            match args.display {
                Some([r, g, b]) => headless.spawn_display_camera(
                    transform,
                    camera.projection(NEAR),
                    size,
                    bevy::color::Color::srgb(r, g, b),
                ),
                None => headless.spawn_camera(transform, camera.projection(NEAR), size, None),
            }
        })
        .collect();
    let images = headless.render(&views).map_err(|e| e.to_string())?;
    let mut written = Vec::new();
    for (camera, image) in cameras.iter().zip(images) {
        let path = args.out.join(format!("{}.png", camera.img_name));
        image.save_png(&path).map_err(|e| e.to_string())?;
        written.push(path);
    }
    Ok(written)
}
