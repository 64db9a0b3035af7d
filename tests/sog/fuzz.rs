//! Random mutations (fixed-seed xorshift) of meta.json, of bundles and of images must
//! come back as `Ok` or `Err`, never as a panic.

use std::collections::{BTreeMap, HashMap};

use crate::common::*;
use bevy_splat::asset::formats::sog::{
    DecodeOptions, decode_bundle, decode_bundle_with, decode_images, parse_meta,
};

/// Overwrites, inserts, deletes or truncates a few bytes. JSON also gets digits and
/// signs, which reach the numeric checks more often than random bytes do.
fn mutate(rng: &mut XorShift, bytes: &mut Vec<u8>, json: bool) {
    for _ in 0..1 + rng.below(4) {
        if bytes.is_empty() {
            bytes.push(rng.next() as u8);
        }
        let at = rng.below(bytes.len());
        let value = if json && rng.below(2) == 0 {
            b"0123456789-.e,]}\"9"[rng.below(18)]
        } else {
            rng.next() as u8
        };
        match rng.below(10) {
            0 => bytes.insert(at, value),
            1 => {
                bytes.remove(at);
            }
            2 if rng.below(4) == 0 => bytes.truncate(at),
            _ => bytes[at] = value,
        }
    }
}

/// Prints the outcomes and checks the harness did its work: every one of `tried`
/// inputs has an outcome, at least a tenth were rejected (a harness that stopped
/// mutating would have none), and some still decoded (one that destroyed every input
/// would never reach the decoder's later stages).
fn report(name: &str, outcomes: &BTreeMap<String, usize>, tried: usize) {
    println!("{name}: {outcomes:?}");
    let total: usize = outcomes.values().sum();
    let decoded = outcomes.get("ok").copied().unwrap_or(0);
    assert_eq!(total, tried, "{name}: every input has an outcome");
    assert!(
        total - decoded >= tried / 10,
        "{name}: too few rejected: {outcomes:?}"
    );
    assert!(decoded > 0, "{name}: nothing decoded: {outcomes:?}");
}

#[test]
fn mutated_meta_json_never_panics() {
    let synthetic = Synthetic::random(100, 2, 11);
    let files = synthetic.files();
    let original = files["meta.json"].clone();
    let playbot = folder_files(&fixture("playbot_lod3_sog"));
    let playbot_meta = playbot["meta.json"].clone();
    let mut rng = XorShift(0x5eed_0001);
    let mut outcomes = BTreeMap::new();
    for i in 0..5000 {
        // Mostly the small synthetic scene (fast); every tenth the real playbot.
        let (source, images) = if i % 10 == 0 {
            (&playbot_meta, &playbot)
        } else {
            (&original, &files)
        };
        let mut meta = source.clone();
        mutate(&mut rng, &mut meta, true);
        let result =
            parse_meta(&meta).and_then(|m| decode_images(&m, |n| images.get(n).map(Vec::as_slice)));
        *outcomes.entry(outcome(&result)).or_insert(0) += 1;
    }
    report("meta.json", &outcomes, 5000);
}

#[test]
fn mutated_bundles_never_panic() {
    let synthetic = Synthetic::random(64, 1, 12).bundle();
    let angel = read(fixture("angel.sog"));
    let mut rng = XorShift(0x5eed_0002);
    let mut outcomes = BTreeMap::new();
    for i in 0..5000 {
        let mut bytes = if i % 20 == 0 {
            angel.clone()
        } else {
            synthetic.clone()
        };
        mutate(&mut rng, &mut bytes, false);
        let result = decode_bundle(&bytes);
        *outcomes.entry(outcome(&result)).or_insert(0) += 1;
    }
    report("bundle", &outcomes, 5000);
}

#[test]
fn mutated_images_never_panic() {
    // Zip CRCs stop a mutated image inside a bundle, so the decoder is reached here.
    let synthetic = Synthetic::random(100, 3, 13);
    let files = synthetic.files();
    let names: Vec<String> = files
        .keys()
        .filter(|n| n.ends_with(".webp"))
        .cloned()
        .collect();
    let mut rng = XorShift(0x5eed_0003);
    let mut outcomes = BTreeMap::new();
    let sequential = DecodeOptions {
        threads: 1,
        ..DecodeOptions::default()
    };
    for i in 0..5000 {
        let mut mutated: HashMap<String, Vec<u8>> = files.clone();
        let name = &names[rng.below(names.len())];
        let image = mutated.get_mut(name).unwrap();
        mutate(&mut rng, image, false);
        // Alternate the parallel and sequential paths.
        let options = if i % 2 == 0 {
            DecodeOptions::default()
        } else {
            sequential.clone()
        };
        let result = decode_files(&mutated, &options);
        *outcomes.entry(outcome(&result)).or_insert(0) += 1;
    }
    report("images", &outcomes, 5000);
}

#[test]
fn truncated_bundles_never_panic() {
    let bundle = Synthetic::random(64, 2, 14).bundle();
    let small = DecodeOptions {
        max_entry_bytes: 4096,
        ..DecodeOptions::default()
    };
    for len in 0..bundle.len() {
        let _ = decode_bundle(&bundle[..len]);
        let _ = decode_bundle_with(&bundle[..len], &small);
    }
}
