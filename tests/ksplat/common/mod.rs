//! Shared helpers: the fixtures and what is known of each, their reference files, a
//! worst-difference tracker and a deterministic random stream.
#![allow(dead_code)]

#[path = "../../spz/common/ply.rs"]
pub mod ply;

use std::collections::BTreeMap;
use std::path::PathBuf;

use bevy_splat::asset::decoded::DecodedSplats;
use bevy_splat::asset::formats::ksplat;

/// One committed `.ksplat` and what the library's writer was asked for.
#[derive(Clone, Copy, Debug)]
pub struct Fixture {
    pub name: &'static str,
    /// `angel` or `fruit`: the source PLY and the order file.
    pub scene: &'static str,
    pub level: u8,
    pub sh_degree: u8,
    pub splats: usize,
}

pub const FIXTURES: [Fixture; 6] = [
    Fixture {
        name: "angel_l1",
        scene: "angel",
        level: 1,
        sh_degree: 0,
        splats: 71_211,
    },
    Fixture {
        name: "fruit_l0_sh2",
        scene: "fruit",
        level: 0,
        sh_degree: 2,
        splats: 4_681,
    },
    Fixture {
        name: "fruit_l1_sh1",
        scene: "fruit",
        level: 1,
        sh_degree: 1,
        splats: 4_681,
    },
    Fixture {
        name: "fruit_l1_sh2",
        scene: "fruit",
        level: 1,
        sh_degree: 2,
        splats: 4_681,
    },
    Fixture {
        name: "fruit_l2_sh1",
        scene: "fruit",
        level: 2,
        sh_degree: 1,
        splats: 4_681,
    },
    Fixture {
        name: "fruit_l2_sh2",
        scene: "fruit",
        level: 2,
        sh_degree: 2,
        splats: 4_681,
    },
];

/// A file of `tests/data/`.
pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

pub fn read(path: PathBuf) -> Vec<u8> {
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

impl Fixture {
    pub fn bytes(&self) -> Vec<u8> {
        read(data(&format!("ksplat/{}.ksplat", self.name)))
    }

    pub fn decode(&self) -> DecodedSplats {
        ksplat::decode(&self.bytes()).unwrap_or_else(|e| panic!("{}: {e}", self.name))
    }

    /// The library's own decoding of some records (`<name>.library.json`).
    pub fn library(&self) -> serde_json::Value {
        let bytes = read(data(&format!("ksplat/{}.library.json", self.name)));
        serde_json::from_slice(&bytes).expect("library JSON")
    }

    /// splat-transform's decoding, sampled, with an `index` column.
    pub fn splat_transform(&self) -> ply::Ply {
        ply::Ply::parse(&read(data(&format!(
            "ksplat/{}.splat_transform.ply",
            self.name
        ))))
    }

    /// The source PLY row of every record.
    pub fn order(&self) -> Vec<usize> {
        let bytes = read(data(&format!("ksplat/{}.order.json", self.scene)));
        let json: serde_json::Value = serde_json::from_slice(&bytes).expect("order JSON");
        let mut order = Vec::new();
        for run in json["runs"].as_array().expect("runs") {
            let [first, len, step] = [0, 1, 2].map(|k| run[k].as_i64().expect("run field"));
            order.extend((0..len).map(|i| (first + i * step) as usize));
        }
        assert_eq!(order.len() as u64, json["splats"].as_u64().unwrap());
        order
    }

    pub fn source_ply(&self) -> ply::Ply {
        let name = match self.scene {
            "angel" => "angel_sh0.ply",
            _ => "fruit_drops_sh3.ply",
        };
        ply::Ply::parse(&read(data(name)))
    }
}

/// Largest difference per field, and the splat where it occurs; printed with
/// `--nocapture`.
#[derive(Default)]
pub struct Worst(pub BTreeMap<&'static str, (f64, usize)>);

impl Worst {
    pub fn note(&mut self, field: &'static str, diff: f64, splat: usize) {
        let slot = self.0.entry(field).or_insert((0.0, 0));
        if diff > slot.0 || diff.is_nan() {
            *slot = (diff, splat);
        }
    }

    pub fn get(&self, field: &str) -> f64 {
        self.0.get(field).map_or(0.0, |w| w.0)
    }

    pub fn print(&self, label: &str, against: &str) {
        for (field, (diff, splat)) in &self.0 {
            println!(
                "{label:>13}  {field:<26} max |ours - {against}| = {diff:.3e} (splat {splat})"
            );
        }
    }
}

#[path = "../../common/mutation.rs"]
mod mutation;
pub use mutation::{XorShift, outcome};

/// The floor a zero scale decodes to.
pub fn zero_scale_log() -> f32 {
    f32::MIN_POSITIVE.ln()
}

pub fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

pub fn set_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// Offsets of the fields the tests touch: main header, then section 0's header.
pub mod at {
    pub const VERSION: usize = 0;
    pub const MAX_SECTIONS: usize = 4;
    pub const SECTIONS: usize = 8;
    pub const MAX_SPLATS: usize = 12;
    pub const SPLATS: usize = 16;
    pub const LEVEL: usize = 20;
    pub const SH_MIN: usize = 36;
    pub const SH_MAX: usize = 40;
    pub const SECTION: usize = 4096;
    pub const S_SPLATS: usize = SECTION;
    pub const S_MAX_SPLATS: usize = SECTION + 4;
    pub const S_BUCKET_SIZE: usize = SECTION + 8;
    pub const S_BUCKETS: usize = SECTION + 12;
    pub const S_BLOCK: usize = SECTION + 16;
    pub const S_ENTRY: usize = SECTION + 20;
    pub const S_RANGE: usize = SECTION + 24;
    pub const S_STORAGE: usize = SECTION + 28;
    pub const S_FULL: usize = SECTION + 32;
    pub const S_PARTIAL: usize = SECTION + 36;
    pub const S_DEGREE: usize = SECTION + 40;
    /// Where a one-section file's data starts.
    pub const DATA: usize = SECTION + 1024;
}

/// A real one-section file cut down to its first `keep` splats: at level 0 any
/// number, at levels 1 and 2 the first full bucket (`keep` = its size). Small files
/// of real data for the mutation loops.
pub fn cut(bytes: &[u8], keep: u32) -> Vec<u8> {
    let level = u16::from_le_bytes([bytes[at::LEVEL], bytes[at::LEVEL + 1]]);
    let splats = u32_at(bytes, at::MAX_SPLATS) as usize;
    let mut out = bytes[..at::DATA].to_vec();
    for field in [at::MAX_SPLATS, at::SPLATS, at::S_SPLATS, at::S_MAX_SPLATS] {
        set_u32(&mut out, field, keep);
    }
    let mut data_start = at::DATA;
    if level > 0 {
        assert_eq!(
            u32_at(bytes, at::S_BUCKET_SIZE),
            keep,
            "a level-1/2 cut keeps one full bucket"
        );
        let partial = u32_at(bytes, at::S_PARTIAL) as usize;
        let buckets = u32_at(bytes, at::S_BUCKETS) as usize;
        for (field, value) in [(at::S_BUCKETS, 1), (at::S_FULL, 1), (at::S_PARTIAL, 0)] {
            set_u32(&mut out, field, value);
        }
        let centres = at::DATA + 4 * partial;
        out.extend(&bytes[centres..centres + 12]);
        data_start = centres + 12 * buckets;
    }
    let record = (bytes.len() - data_start) / splats;
    out.extend(&bytes[data_start..data_start + record * keep as usize]);
    let storage = (out.len() - at::DATA) as u32;
    set_u32(&mut out, at::S_STORAGE, storage);
    out
}
