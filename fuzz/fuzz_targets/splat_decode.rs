//! Raw bytes into the `.splat` decoder: `Ok` or `Err`, never a panic, and an `Ok`
//! result self-consistent.
#![no_main]

use bevy_splat_fuzz::asset::formats::splat;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(splats) = splat::decode(data) {
        assert_eq!(splats.len() * 32, data.len());
        assert_eq!(splats.sh.len(), splats.len() * 3);
    }
});
