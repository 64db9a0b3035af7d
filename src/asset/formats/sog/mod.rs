//! PlayCanvas SOG ("Spatially Ordered Gaussians"), versions 1 and 2: a meta.json plus
//! lossless WebP images holding quantised splat properties, either side by side in a
//! folder or zipped into one `.sog` bundle.
//!
//! Learned from playcanvas/splat-transform (`src/lib/writers/write-sog.ts`,
//! `src/lib/readers/read-sog.ts`, `read-sog-v1.ts`, and the v1 writer before commit
//! 66dc153) and playcanvas/engine (`src/scene/gsplat/gsplat-sog-data.js`,
//! `src/framework/parsers/sog.js`, `sog-bundle.js`). A streamed SOG's
//! `lod-meta.json` (`lod.rs`) names levels of detail in chunks of SOG folders.

mod attributes;
mod bundle;
mod decode;
mod error;
mod images;
mod lod;
mod meta;
mod meta_parse;
mod meta_raw;
mod options;
mod parallel;
mod sniff;
mod splats;

pub use bundle::{META_JSON, decode_bundle, decode_bundle_with, is_sog_bundle};
pub use decode::{decode_images, decode_images_with};
pub use error::SogError;
pub use lod::{SogLodMeta, beside_chunk, decode_lod_level, is_sog_lod_meta, parse_lod_meta};
pub use meta::{SogMeta, SogVersion};
pub use meta_parse::parse_meta;
pub use options::DecodeOptions;
pub use sniff::is_sog_meta;
