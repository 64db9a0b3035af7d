//! Raw bytes into the PLY decoder: it must return `Ok` or `Err`, never panic, hang or
//! over-allocate, and an `Ok` result must be self-consistent.
#![no_main]

use bevy_splat_fuzz::asset::formats::ply;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(splats) = ply::decode(data) {
        check(&splats);
    }
});

fn check(splats: &bevy_splat_fuzz::asset::decoded::DecodedSplats) {
    assert!(splats.sh_degree <= 3);
    assert_eq!(splats.sh.len(), splats.len() * splats.sh_stride());
    assert!(splats.non_finite <= splats.len());
    assert!(splats.geometry.iter().all(|g| g._pad == 0.0));
    assert_eq!(splats.is_empty(), splats.geometry.is_empty());
}
