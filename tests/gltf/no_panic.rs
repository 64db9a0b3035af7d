//! Randomly mutated fixtures decode to a result, never a panic or a runaway
//! allocation. GLBs get byte mutations; the .gltf gets JSON-text mutations (digits,
//! brackets, quotes), which reach deeper than random bytes in a base64 string.

use crate::common::{XorShift, read, synthetic};
use bevy_splat::asset::formats::gltf;

const ITERATIONS: usize = 3000;

fn mutate_bytes(rng: &mut XorShift, bytes: &mut [u8]) {
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(bytes.len());
        match rng.below(4) {
            0 => bytes[at] ^= 1 << rng.below(8),
            1 => bytes[at] = rng.next_u64() as u8,
            2 => bytes[at] = [0, 0xff, 0x7f, 0x80][rng.below(4)],
            _ => bytes[at] = bytes[at].wrapping_add(1),
        }
    }
}

/// Mutations that keep JSON mostly well-formed, so the decoder's checks get exercised.
fn mutate_json(rng: &mut XorShift, text: &mut Vec<u8>) {
    const PICKS: &[u8] = b"0123456789-.,:[]{}\"e";
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(text.len());
        match rng.below(4) {
            0 if text[at].is_ascii_digit() => text[at] = b'0' + rng.below(10) as u8,
            1 => text[at] = PICKS[rng.below(PICKS.len())],
            2 if text[at].is_ascii_digit() => {
                let digits = rng.below(12);
                for _ in 0..digits {
                    text.insert(at, b'9');
                }
            }
            _ => {
                text.remove(at);
            }
        }
    }
}

/// `external` stands for every external buffer the mutant asks for.
fn run(name: &str, original: &[u8], external: &[u8], json: bool, seed: u64) {
    let mut rng = XorShift(seed);
    let (mut ok, mut tried) = (0, 0);
    for _ in 0..ITERATIONS {
        tried += 1;
        let mut bytes = original.to_vec();
        if json {
            mutate_json(&mut rng, &mut bytes);
        } else {
            mutate_bytes(&mut rng, &mut bytes);
        }
        if let Ok(doc) = gltf::parse(&bytes) {
            let _ = doc.external_buffers();
            if gltf::decode(&doc, &|_| Some(external)).is_ok() {
                ok += 1;
            }
        }
    }
    eprintln!("{name}: {ok} of {ITERATIONS} mutants still decoded");
    // The harness did its work: every mutant was tried, at least a tenth were
    // rejected (a harness that stopped mutating would reject none), and some still
    // decoded (one that destroyed every input would never reach the decoder).
    assert_eq!(tried, ITERATIONS, "{name}");
    assert!(
        ok <= ITERATIONS * 9 / 10,
        "{name}: {ok} of {ITERATIONS} decoded"
    );
    assert!(ok > 0, "{name}: no mutant decoded");
}

#[test]
fn mutated_glb_fixtures_do_not_panic() {
    for (i, name) in [
        "khr_conformance_matrix.glb",
        "spz2_basic_1splat.glb",
        "unit_sh_legacy.glb",
    ]
    .iter()
    .enumerate()
    {
        let bytes = read(name);
        run(name, &bytes, &[], false, 0x9e37_79b9_7f4a_7c15 + i as u64);
    }
}

#[test]
fn mutated_gltf_json_does_not_panic() {
    run(
        "khr_extensible_fallback.gltf",
        &read("khr_extensible_fallback.gltf"),
        &[],
        true,
        0xdead_beef,
    );
    let bin = read("unit_sh_legacy_gltf/UnitSH_legacy_data.bin");
    run(
        "UnitSH_legacy.gltf",
        &read("unit_sh_legacy_gltf/UnitSH_legacy.gltf"),
        &bin,
        true,
        0xfeed_f00d,
    );
}

#[test]
fn mutated_written_glb_does_not_panic() {
    // The writer's file carries sparse-free float accessors of every kind, SH 3 and
    // the exact attributes: byte mutations in its JSON chunk reach all of them.
    let glb = gltf::write_glb(&synthetic::cloud(20, 3, 3));
    run("written SH3 GLB", &glb, &[], false, 0x1234);
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let mut rng = XorShift(99);
    for _ in 0..ITERATIONS {
        let mut bytes = glb.clone();
        let mut json = bytes[20..20 + json_len].to_vec();
        mutate_json(&mut rng, &mut json);
        json.resize(json_len, b' ');
        bytes[20..20 + json_len].copy_from_slice(&json);
        let _ = gltf::decode_bytes(&bytes);
    }
}
