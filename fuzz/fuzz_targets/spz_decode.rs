//! Raw bytes into the SPZ decoder (gzip v1-3 and zstd v4): `Ok` or `Err`, never a
//! panic, a hang or an allocation the input cannot justify; an `Ok` result
//! self-consistent.
#![no_main]

use bevy_splat_fuzz::asset::formats::spz;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok((splats, info)) = spz::decode_with_info(data) {
        assert!(splats.sh_degree <= 3);
        assert_eq!(splats.sh.len(), splats.len() * splats.sh_stride());
        assert_eq!(splats.len(), info.num_points as usize);
        assert!(splats.non_finite <= splats.len());
    }
});
