//! Randomly damaged SPZ files decode to `Ok` or `Err`, never a panic or a runaway
//! allocation.

use crate::common::encode::{arrays, gzip, legacy_header, v4_file};
use crate::common::{XorShift, data, read, read_fixture};
use bevy_splat::asset::formats::spz;

fn small_files() -> Vec<Vec<u8>> {
    let mut files = vec![
        read(data("formats/unitcube_v2.spz")),
        read(data("formats/unit_sh_legacy_gltf/UnitSH_legacy_data.bin")),
        read_fixture("fruit256_sh4_v4.spz"),
    ];
    for (version, rotation_bytes) in [(1u32, 3usize), (2, 3), (3, 4)] {
        let mut parts = arrays(40, 3, rotation_bytes);
        if version == 1 {
            parts[0].truncate(40 * 6);
        }
        let mut body = legacy_header(version, 40, 3, 12, 0);
        for p in &parts {
            body.extend_from_slice(p);
        }
        files.push(gzip(&body));
    }
    let [p, a, c, s, r, sh] = arrays(40, 3, 4);
    files.push(v4_file(40, 3, 1, &[&p, &a, &c, &s, &r, &sh], &[]));
    files
}

fn mutate(rng: &mut XorShift, original: &[u8]) -> Vec<u8> {
    // For gzip files, half the time damage the payload and re-compress, so the CRC
    // holds and the damage reaches the header and attribute decoding.
    if original.starts_with(&[0x1f, 0x8b]) && rng.below(2) == 0 {
        let inner = crate::common::gunzip(original);
        return gzip(&mutate_raw(rng, &inner));
    }
    mutate_raw(rng, original)
}

fn mutate_raw(rng: &mut XorShift, original: &[u8]) -> Vec<u8> {
    let mut bytes = original.to_vec();
    match rng.below(4) {
        // Most interesting structure (headers, gzip header, TOC) is near the start.
        0 => {
            let span = bytes.len().min(160);
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(span);
                bytes[at] = rng.next() as u8;
            }
        }
        1 => {
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(bytes.len());
                bytes[at] ^= 1 << rng.below(8);
            }
        }
        2 => bytes.truncate(rng.below(bytes.len() + 1)),
        _ => {
            let at = rng.below(bytes.len());
            let fill = rng.next() as u8;
            let len = 1 + rng.below(64);
            bytes.splice(at..at, std::iter::repeat_n(fill, len));
        }
    }
    bytes
}

#[test]
fn random_damage_never_panics() {
    let files = small_files();
    for file in &files {
        assert!(spz::decode(file).is_ok());
    }
    let mut rng = XorShift(0x2545_f491);
    let (mut ok, mut failed) = (0, 0);
    // SPZ_FUZZ_ITERATIONS raises the count for a longer one-off run.
    let iterations = std::env::var("SPZ_FUZZ_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    for i in 0..iterations {
        let bytes = mutate(&mut rng, &files[i % files.len()]);
        match spz::decode(&bytes) {
            Ok(_) => ok += 1,
            Err(_) => failed += 1,
        }
        let _ = spz::is_spz(&bytes);
    }
    println!("{ok} decoded, {failed} rejected");
    assert!(ok > 100 && failed > 1000);
}

#[test]
fn random_damage_to_real_scenes_never_panics() {
    let files = [
        read_fixture("fruit_drops_sh3_v2.spz"),
        read_fixture("fruit_drops_sh3_v3.spz"),
        read_fixture("fruit_drops_sh3_v4.spz"),
    ];
    let mut rng = XorShift(0x1234_5678);
    for i in 0..150 {
        let bytes = mutate(&mut rng, &files[i % files.len()]);
        let _ = spz::decode(&bytes);
    }
}
