//! Converts a splat file to an Inria PLY or a glTF binary (`KHR_gaussian_splatting`):
//!
//! ```text
//! cargo run --release --example convert -- IN OUT
//! ```
//!
//! IN is any file the plugin reads (`.ply`, compressed `.ply`, `.splat`, `.spz`, `.sog`,
//! a SOG `meta.json`, or a `.gltf`/`.glb` holding one cloud); OUT's extension picks the
//! writer: `.ply` (float, SH degree kept) or `.glb`. Values are written as loaded.

use std::path::Path;
use std::process::ExitCode;

use bevy_splat::asset::DecodedSplats;
use bevy_splat::asset::formats::{self, Format, gltf, ply};

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
    let [input, output] = args.as_slice() else {
        return Err("usage: convert IN OUT (OUT: .ply or .glb)".into());
    };
    let splats = read(Path::new(input))?;
    let bytes = match Path::new(output).extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("ply") => ply::write(&splats),
        Some(e) if e.eq_ignore_ascii_case("glb") => gltf::write_glb(&splats),
        _ => return Err(format!("{output}: write .ply or .glb")),
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

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
