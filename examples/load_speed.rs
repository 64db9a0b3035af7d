//! How fast the PLY decoder runs from memory.
//!
//! Writes the angel scene (tests/data/angel_sh0.ply) replicated to about 1 GB of binary
//! little-endian PLY, reads it into memory once, then times `decode` on those bytes
//! (best of 3) and prints MB/s.
//!
//! ```text
//! cargo run --release --example load_speed [OUTPUT.ply]
//! ```
//!
//! Without an argument the file goes to the temp dir and is deleted afterwards.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bevy_splat::asset::formats::ply::decode;

const TARGET_BYTES: usize = 1_000_000_000;

fn main() -> std::io::Result<()> {
    let given = std::env::args_os().nth(1).map(PathBuf::from);
    let path = given
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("bevy_splat_load_speed.ply"));

    let source = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/angel_sh0.ply"
    ))?;
    let copies = write_replicated(&source, &path)?;
    let bytes = std::fs::read(&path)?;
    println!(
        "{}: {} copies of the angel, {:.1} MB",
        path.display(),
        copies,
        bytes.len() as f64 / 1e6
    );

    let mut best = Duration::MAX;
    for run in 1..=3 {
        let start = Instant::now();
        let splats = decode(&bytes).expect("the replicated file decodes");
        let elapsed = start.elapsed();
        println!(
            "run {run}: {} splats in {:.3} s, {:.0} MB/s",
            splats.len(),
            elapsed.as_secs_f64(),
            bytes.len() as f64 / 1e6 / elapsed.as_secs_f64()
        );
        best = best.min(elapsed);
    }
    println!(
        "best of 3: {:.0} MB/s",
        bytes.len() as f64 / 1e6 / best.as_secs_f64()
    );

    if given.is_none() {
        std::fs::remove_file(&path)?;
    }
    Ok(())
}

/// Writes `source`'s body `copies` times under a header with the vertex count scaled.
fn write_replicated(source: &[u8], path: &Path) -> std::io::Result<usize> {
    const END: &[u8] = b"end_header\n";
    let header_len = source
        .windows(END.len())
        .position(|w| w == END)
        .expect("angel has a header")
        + END.len();
    let (header, body) = source.split_at(header_len);
    let header = std::str::from_utf8(header).expect("ASCII header");
    let count_line = header
        .lines()
        .find(|l| l.starts_with("element vertex "))
        .expect("angel has a vertex element");
    let count: usize = count_line["element vertex ".len()..].parse().unwrap();
    let copies = TARGET_BYTES.div_ceil(body.len());

    let mut out = BufWriter::new(std::fs::File::create(path)?);
    let header = header.replace(count_line, &format!("element vertex {}", count * copies));
    out.write_all(header.as_bytes())?;
    for _ in 0..copies {
        out.write_all(body)?;
    }
    out.flush()?;
    Ok(copies)
}
