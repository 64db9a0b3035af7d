//! Raw bytes into the streamed SOG's `lod-meta.json` parser: `Ok` or `Err`, never a
//! panic; every level of an `Ok` result lists only files the header names.
#![no_main]

use bevy_splat_fuzz::asset::formats::sog;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(meta) = sog::parse_lod_meta(data) {
        for level in 0..meta.levels() {
            let _ = meta.level_files(level);
            let _ = meta.level_count(level);
        }
    }
});
