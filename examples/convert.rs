//! Converts a splat file to an Inria PLY, a glTF binary (`KHR_gaussian_splatting`) or
//! Spark's `.rad` with a level-of-detail tree:
//!
//! ```text
//! cargo run --release --example convert -- IN OUT [--compact] [--no-lod]
//! ```
//!
//! IN is any file the plugin reads (`.ply`, compressed `.ply`, `.splat`, `.spz`, `.sog`,
//! a SOG `meta.json` or `lod-meta.json`, `.rad`, `.ksplat`, or a `.gltf`/`.glb` holding
//! one cloud); OUT's extension
//! picks the writer: `.ply` (float, SH degree kept), `.glb`, or `.rad` (the cloud's
//! level-of-detail tree built and written with it; `--no-lod` writes the splats alone,
//! `--compact` Spark's 8-bit encodings instead of f32). Values are written as loaded.

use std::path::Path;
use std::process::ExitCode;

use bevy_splat::asset::formats::{self, Format, gltf, ply, rad};
use bevy_splat::asset::{DecodedSplats, GaussianSplats};
use bevy_splat::lod::SplatLodTree;

fn read(input: &Path) -> Result<DecodedSplats, String> {
    let shown = input.display();
    if Format::of_path(&input.to_string_lossy()) != Some(Format::Gltf) {
        return formats::decode_path(input).map_err(|e| e.to_string());
    }
    let scene = formats::decode_gltf_path(input).map_err(|e| e.to_string())?;
    let moved = scene.nodes.iter().any(|n| {
        !n.splats.is_empty()
            && (n.translation != [0.0; 3]
                || n.rotation != [0.0, 0.0, 0.0, 1.0]
                || n.scale != [1.0; 3])
    });
    let mut clouds: Vec<_> = scene.nodes.into_iter().flat_map(|n| n.splats).collect();
    match clouds.len() {
        1 => {
            if moved {
                eprintln!("note: {shown}'s node transform is not applied to the splats");
            }
            Ok(clouds.remove(0))
        }
        n => Err(format!(
            "{shown} holds {n} clouds; convert writes one (load the scene in Bevy instead)"
        )),
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let [input, output] = paths.as_slice() else {
        return Err(
            "usage: convert IN OUT [--compact] [--no-lod] (OUT: .ply, .glb or .rad)".into(),
        );
    };
    let splats = read(Path::new(input))?;
    let bytes = match Path::new(output).extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("ply") => ply::write(&splats),
        Some(e) if e.eq_ignore_ascii_case("glb") => gltf::write_glb(&splats),
        Some(e) if e.eq_ignore_ascii_case("rad") => {
            let encoding = match flag("--compact") {
                true => rad::RadEncoding::Compact,
                false => rad::RadEncoding::Exact,
            };
            write_rad(splats.clone(), !flag("--no-lod"), encoding)?
        }
        _ => return Err(format!("{output}: write .ply, .glb or .rad")),
    };
    std::fs::write(output, &bytes).map_err(|e| format!("cannot write {output}: {e}"))?;
    println!(
        "{input} -> {output}: {} splats, SH degree {}, {} bytes",
        splats.len(),
        splats.sh_degree,
        bytes.len()
    );
    Ok(())
}

/// The splats as a `.rad`, with their level-of-detail tree when `lod`.
fn write_rad(
    splats: DecodedSplats,
    lod: bool,
    encoding: rad::RadEncoding,
) -> Result<Vec<u8>, String> {
    if !lod {
        return rad::write(&splats, None, encoding).map_err(|e| e.to_string());
    }
    let asset = GaussianSplats::from(splats);
    let started = std::time::Instant::now();
    let tree = SplatLodTree::build(&asset);
    // Chunks of 65,536 nodes (what `rad::write` writes), each a region's detail, so a
    // streaming reader fetches what its camera looks at.
    let (nodes, children) = tree
        .in_chunks(&asset, 65_536)
        .ok_or("the level-of-detail tree has no single root (an empty cloud?)")?;
    println!(
        "level-of-detail tree: {} nodes over {} splats, built in {:.2} s",
        nodes.len(),
        asset.len(),
        started.elapsed().as_secs_f64()
    );
    rad::write(&nodes, Some(&children), encoding).map_err(|e| e.to_string())
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
