//! Renders every camera of an Inria `cameras.json` headless, no window:
//!
//! ```text
//! cargo run --release --example render -- --ply FILE --cameras CAMERAS.json --out DIR
//! ```
//!
//! The splats are stored as the library's default (`SplatStorage::HalfSh`: f16 SH);
//! `--full` keeps everything f32, `--compact` uses the compact layout.
//!
//! Each camera renders at its own width and height on black, with the splat layer's
//! values as rendered (no tonemapping, no colour conversion), to `DIR/<img_name>.png`
//! (8-bit RGB) — the images the reference rasterizer writes for the same cameras.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cli::run(std::env::args().skip(1)) {
        Ok(written) => {
            for path in written {
                println!("{}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
