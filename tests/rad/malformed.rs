//! Broken `.rad` files: each gives an error that names its problem, and none panics,
//! hangs or allocates what its numbers claim before the data is there.

use crate::common::*;
use bevy_splat::asset::formats::rad::{self, RadEncoding, RadError};

/// The file with its header JSON changed by `edit` (chunk offsets count from the
/// header's end, so they stay right).
fn with_header(bytes: &[u8], edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let len = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
    let mut json: serde_json::Value = serde_json::from_slice(&bytes[8..8 + len]).unwrap();
    edit(&mut json);
    let mut out = framed(b"RAD0", &json);
    out.extend_from_slice(&bytes[8 + len.div_ceil(8) * 8..]);
    out
}

/// `magic`, the JSON's length, the JSON, zero padding to 8 bytes: how `.rad` frames
/// its header and each chunk's JSON.
fn framed(magic: &[u8; 4], json: &serde_json::Value) -> Vec<u8> {
    let text = serde_json::to_vec(json).unwrap();
    let mut out = magic.to_vec();
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(&text);
    out.resize(out.len().div_ceil(8) * 8, 0);
    out
}

fn fruit() -> Vec<u8> {
    read("rad/fruit_drops_sh3-lod.rad")
}

#[test]
fn broken_headers_are_named() {
    let bytes = fruit();
    assert_eq!(rad::decode(b"RAD1....").unwrap_err(), RadError::BadMagic);
    let version = with_header(&bytes, |h| h["version"] = 2.into());
    assert_eq!(
        rad::decode(&version).unwrap_err().to_string(),
        "the header's version is 2; this reader knows 1"
    );
    let count = with_header(&bytes, |h| h["count"] = 6_045.into());
    assert_eq!(
        rad::decode(&count).unwrap_err().to_string(),
        "the header says 6045 splats, its chunks hold 6044"
    );
    let degree = with_header(&bytes, |h| h["maxSh"] = 4.into());
    assert_eq!(rad::decode(&degree).unwrap_err(), RadError::ShDegree(4));
    let json = with_header(&bytes, |h| h["chunks"] = "none".into());
    assert!(matches!(rad::decode(&json), Err(RadError::Json { .. })));
    let far = with_header(&bytes, |h| h["chunks"][0]["offset"] = u64::MAX.into());
    assert!(matches!(rad::decode(&far), Err(RadError::Truncated { .. })));
    // A header that claims more than its chunks: nothing is allocated for the claim.
    let huge = with_header(&bytes, |h| h["count"] = (1u64 << 40).into());
    assert!(matches!(
        rad::decode(&huge),
        Err(RadError::CountMismatch { .. })
    ));
}

#[test]
fn a_tree_that_is_not_one_tree_is_refused() {
    let source = source("train_3pts_sh3.ply");
    for (children, message) in [
        (
            [[1, 3], [0, 0], [0, 0]],
            "level-of-detail tree: node 0's children 1..4 pass the last node, 2",
        ),
        (
            [[1, 1], [2, 1], [1, 1]],
            "level-of-detail tree: node 1 is a child twice (or the root is a child)",
        ),
        (
            [[1, 1], [0, 0], [0, 0]],
            "level-of-detail tree: 1 of 3 nodes are not reached from the root",
        ),
    ] {
        let bytes = rad::write(&source, Some(&children), RadEncoding::Exact).unwrap();
        assert_eq!(rad::decode(&bytes).unwrap_err().to_string(), message);
    }
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = fruit();
    let mut cut = 0;
    while cut < bytes.len() {
        assert!(rad::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        cut += if cut < 4096 { 7 } else { 1_013 };
    }
}

#[test]
fn random_damage_never_panics() {
    let bytes = fruit();
    let mut state = 0x2545_f491u32;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as usize
    };
    let mut failures = 0;
    for _ in 0..400 {
        let mut damaged = bytes.clone();
        for _ in 0..1 + next() % 4 {
            // Mostly the JSON and the blobs' first bytes, where the structure is.
            let at = match next() % 3 {
                0 => next() % 1_500,
                _ => next() % damaged.len(),
            };
            damaged[at] = next() as u8;
        }
        if rad::decode(&damaged).is_err() {
            failures += 1;
        }
    }
    assert!(failures > 0, "some damage must be noticed");
}

/// A one-chunk file with its chunk's JSON changed by `edit` (the header's byte counts
/// follow).
fn with_chunk_json(bytes: &[u8], edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let chunk_at = 8 + word(4).div_ceil(8) * 8;
    let json_len = word(chunk_at + 4);
    let mut json: serde_json::Value =
        serde_json::from_slice(&bytes[chunk_at + 8..chunk_at + 8 + json_len]).unwrap();
    edit(&mut json);
    let mut chunk = framed(b"RADC", &json);
    chunk.extend_from_slice(&bytes[chunk_at + 8 + json_len.div_ceil(8) * 8..]);
    let mut file = bytes[..chunk_at].to_vec();
    file.extend_from_slice(&chunk);
    let count = json["count"].clone();
    with_header(&file, |h| {
        h["count"] = count.clone();
        h["chunks"][0]["bytes"] = (chunk.len() as u64).into();
        h["allChunkBytes"] = (chunk.len() as u64).into();
    })
}

#[test]
fn a_chunk_that_claims_more_than_its_data_holds_is_refused() {
    let three = source("train_3pts_sh3.ply");
    let bytes = rad::write(&three, None, RadEncoding::Exact).unwrap();
    // More than a deflate stream of that size can hold: refused before inflating.
    let claim = with_chunk_json(&bytes, |c| c["count"] = 999_999.into());
    let error = rad::decode(&claim).unwrap_err();
    assert!(matches!(error, RadError::Unexpandable { .. }), "{error}");
    // Within what it could hold but more than it does: found when inflated.
    let claim = with_chunk_json(&bytes, |c| c["count"] = 4.into());
    let error = rad::decode(&claim).unwrap_err();
    assert!(matches!(error, RadError::PropertySize { .. }), "{error}");
    // Past the chunk limit.
    let claim = with_chunk_json(&bytes, |c| c["count"] = (1u64 << 21).into());
    assert!(matches!(
        rad::decode(&claim),
        Err(RadError::ChunkTooLarge { .. })
    ));
    // A chunk that does not start where the splats before it end.
    let claim = with_chunk_json(&bytes, |c| c["base"] = 5.into());
    assert!(matches!(
        rad::decode(&claim),
        Err(RadError::ChunkBase { .. })
    ));
}
