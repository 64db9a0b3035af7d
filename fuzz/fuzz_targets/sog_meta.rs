//! Structure-aware SOG: a fuzzed meta.json over the angel bundle's real images, so the
//! input reaches the dequantisation with counts, ranges, codebooks and band settings
//! that no writer produces.
#![no_main]

use std::collections::HashMap;
use std::io::Read;
use std::sync::OnceLock;

use bevy_splat_fuzz::asset::formats::sog;

/// The images of `tests/data/formats/angel.sog`, read once.
fn images() -> &'static HashMap<String, Vec<u8>> {
    static IMAGES: OnceLock<HashMap<String, Vec<u8>>> = OnceLock::new();
    IMAGES.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/formats/angel.sog");
        let bytes = std::fs::read(path).expect("the angel bundle");
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
        let mut out = HashMap::new();
        for i in 0..zip.len() {
            let mut entry = zip.by_index(i).expect("an entry");
            let mut data = Vec::new();
            entry.read_to_end(&mut data).expect("inflates");
            let name = entry.name().expect("a UTF-8 name").into_owned();
            out.insert(name, data);
        }
        out
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let images = images();
    if let Ok(meta) = sog::parse_meta(data) {
        if let Ok(splats) = sog::decode_images(&meta, |name| images.get(name).map(Vec::as_slice)) {
            assert!(splats.sh_degree <= 3);
            assert_eq!(splats.sh.len(), splats.len() * splats.sh_stride());
        }
    }
});
