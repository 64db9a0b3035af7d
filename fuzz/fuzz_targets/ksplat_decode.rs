//! Raw bytes into the `.ksplat` decoder: `Ok` or `Err`, never a panic; `is_ksplat`
//! agrees with it, and an `Ok` result is self-consistent.
#![no_main]

use bevy_splat_fuzz::asset::formats::ksplat;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let result = ksplat::decode(data);
    assert_eq!(ksplat::is_ksplat(data), result.is_ok());
    if let Ok(splats) = result {
        assert_eq!(splats.sh.len(), splats.len() * splats.sh_stride());
        assert!(splats.non_finite <= splats.len());
    }
});
