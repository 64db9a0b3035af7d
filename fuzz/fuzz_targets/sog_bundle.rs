//! Raw bytes into the SOG bundle decoder (zip, meta.json, WebP images): `Ok` or `Err`,
//! never a panic, a hang or an allocation the input cannot justify.
#![no_main]

use bevy_splat_fuzz::asset::formats::sog;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(splats) = sog::decode_bundle(data) {
        assert!(splats.sh_degree <= 3);
        assert_eq!(splats.sh.len(), splats.len() * splats.sh_stride());
    }
});
