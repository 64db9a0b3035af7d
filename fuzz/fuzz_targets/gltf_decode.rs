//! Raw bytes into the glTF decoder (GLB container or JSON, accessors, SPZ blobs, node
//! graphs): `Ok` or `Err`, never a panic, a hang or an allocation the input cannot
//! justify; every cloud of an `Ok` scene self-consistent.
#![no_main]

use bevy_splat_fuzz::asset::formats::gltf;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(scene) = gltf::decode_bytes(data) {
        for node in &scene.nodes {
            assert!(node.children.iter().all(|&c| c < scene.nodes.len()));
            for splats in &node.splats {
                assert!(splats.sh_degree <= 3);
                assert_eq!(splats.sh.len(), splats.len() * splats.sh_stride());
            }
        }
    }
});
