//! Raw bytes into the `.rad` decoder (header, chunks, every encoding, SH codebooks,
//! the tree's check): `Ok` or `Err`, never a panic; an `Ok` result is self-consistent.
#![no_main]

use bevy_splat_fuzz::asset::formats::rad;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(file) = rad::decode_nodes(data) {
        let nodes = &file.nodes;
        assert_eq!(nodes.sh.len(), nodes.len() * nodes.sh_stride());
        if let Some(children) = &file.children {
            assert_eq!(children.len(), nodes.len());
        }
        let leaves = file.leaves();
        assert!(leaves.len() <= nodes.len());
        assert_eq!(leaves.sh.len(), leaves.len() * leaves.sh_stride());
    }
});
