//! Random mutations (fixed-seed xorshift) of small cuts of the real files: `Ok` or a
//! typed `Err`, never a panic, `is_ksplat` agreeing, and an `Ok` self-consistent.

use std::collections::BTreeMap;

use crate::common::*;
use bevy_splat::asset::formats::ksplat::{decode, is_ksplat};

/// Values that reach the size and count checks more often than random bytes do.
const INTERESTING: [u32; 9] = [0, 1, 2, 12, 255, 256, 0x7fff_ffff, 0x8000_0000, u32::MAX];

fn mutate(rng: &mut XorShift, bytes: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(3) {
        if bytes.is_empty() {
            bytes.push(rng.next() as u8);
        }
        // Half the edits land in the headers and bucket tables.
        let span = if rng.below(2) == 0 {
            bytes.len().min(at::DATA + 64)
        } else {
            bytes.len()
        };
        let at = rng.below(span);
        match rng.below(12) {
            0 => bytes.insert(at, rng.next() as u8),
            1 => {
                bytes.remove(at);
            }
            2 if rng.below(4) == 0 => bytes.truncate(at),
            3..=5 => {
                let word = at & !3;
                if word + 4 <= bytes.len() {
                    let value = INTERESTING[rng.below(INTERESTING.len())];
                    set_u32(bytes, word, value);
                }
            }
            _ => bytes[at] = rng.next() as u8,
        }
    }
}

#[test]
fn mutated_files_never_panic() {
    let sources: Vec<Vec<u8>> = vec![
        cut(&FIXTURES[1].bytes(), 64),
        cut(&FIXTURES[0].bytes(), 256),
        cut(&FIXTURES[3].bytes(), 256),
        cut(&FIXTURES[4].bytes(), 256),
        cut(&FIXTURES[5].bytes(), 256),
    ];
    for s in &sources {
        assert!(is_ksplat(s), "a cut decodes");
    }
    let mut rng = XorShift(0x6b73_706c_6174);
    let mut outcomes = BTreeMap::new();
    let tries = 6000;
    for i in 0..tries {
        let mut bytes = sources[i % sources.len()].clone();
        mutate(&mut rng, &mut bytes);
        let result = decode(&bytes);
        assert_eq!(is_ksplat(&bytes), result.is_ok(), "try {i}: {result:?}");
        if let Ok(d) = &result {
            assert_eq!(d.len() as u32, u32_at(&bytes, at::MAX_SPLATS));
            assert_eq!(d.sh.len(), d.len() * d.sh_stride());
            assert!(d.non_finite <= d.len());
        }
        *outcomes.entry(outcome(&result)).or_insert(0usize) += 1;
    }
    println!("{outcomes:?}");
    let decoded = outcomes.get("ok").copied().unwrap_or(0);
    assert!(
        tries - decoded >= tries / 10,
        "too few rejected: {outcomes:?}"
    );
    assert!(decoded > 0, "nothing decoded: {outcomes:?}");
    // Every kind of header problem came up.
    assert!(outcomes.len() >= 8, "{outcomes:?}");
}
