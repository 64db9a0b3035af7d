//! PlayCanvas's streamed SOG: a `lod-meta.json` whose tree of bounding boxes ends in
//! leaves that name, for each level of detail (0 the finest), a range of rows in one
//! of several chunk files, each an ordinary SOG folder (`0_0/meta.json`, ...). Its
//! writer (`splat-transform`'s `write-lod.ts`) fills each level's chunks leaf by leaf;
//! PlayCanvas's engine (`gsplat-octree*.js`) loads chunks as a camera needs them.
//!
//! Here a level is read whole: its leaves' ranges, in the tree's order, from the chunks
//! that hold them (and the `environment` SOG, which every level shows).

use serde::Deserialize;
use serde_json::Value;

use super::error::SogError;
use super::meta_parse::check_file_name;
use crate::asset::decoded::DecodedSplats;

/// A parsed and checked `lod-meta.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct SogLodMeta {
    levels: usize,
    filenames: Vec<String>,
    environment: Option<String>,
    /// The tree's leaves, depth first, each with a range per level (if it has one).
    leaves: Vec<Vec<Option<LodRange>>>,
}

/// Rows `offset..offset + count` of chunk file `file`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LodRange {
    file: usize,
    offset: usize,
    count: usize,
}

#[derive(Deserialize)]
struct RawLodMeta {
    version: Option<Value>,
    #[serde(rename = "lodLevels")]
    lod_levels: Option<u64>,
    filenames: Option<Vec<String>>,
    environment: Option<String>,
    tree: Option<Value>,
}

/// The most levels a file may have (splat-transform's tags are small integers).
const MAX_LEVELS: u64 = 64;

/// Whether `json` is a streamed SOG's `lod-meta.json`: an object with `lodLevels`,
/// `filenames` and a `tree` (its `asset` key would otherwise pass it for glTF).
pub fn is_sog_lod_meta(json: &[u8]) -> bool {
    let Ok(Value::Object(root)) = serde_json::from_slice::<Value>(json) else {
        return false;
    };
    root.get("lodLevels").is_some_and(Value::is_number)
        && root.get("filenames").is_some_and(Value::is_array)
        && root.get("tree").is_some_and(Value::is_object)
}

/// Parses and checks a `lod-meta.json`: every range names a listed file, every file
/// name is a plain relative path.
pub fn parse_lod_meta(json: &[u8]) -> Result<SogLodMeta, SogError> {
    let raw: RawLodMeta = serde_json::from_slice(json)?;
    match raw.version.as_ref().and_then(Value::as_u64) {
        Some(1) => {}
        _ => {
            return Err(SogError::UnsupportedVersion(format!(
                "{} of lod-meta.json",
                raw.version.unwrap_or(Value::Null)
            )));
        }
    }
    let levels = raw.lod_levels.ok_or(SogError::MissingKey("lodLevels"))?;
    if levels == 0 || levels > MAX_LEVELS {
        return Err(SogError::InvalidMeta {
            key: "lodLevels",
            reason: format!("{levels} levels; 1 to {MAX_LEVELS} are read"),
        });
    }
    let filenames = raw.filenames.ok_or(SogError::MissingKey("filenames"))?;
    for name in filenames.iter().chain(&raw.environment) {
        check_file_name(name, "filenames")?;
    }
    let tree = raw.tree.ok_or(SogError::MissingKey("tree"))?;
    let mut meta = SogLodMeta {
        levels: levels as usize,
        filenames,
        environment: raw.environment,
        leaves: Vec::new(),
    };
    meta.collect_leaves(&tree)?;
    Ok(meta)
}

impl SogLodMeta {
    /// Levels of detail, 0 the finest.
    pub fn levels(&self) -> usize {
        self.levels
    }

    /// The tree's leaves.
    pub fn leaf_count(&self) -> usize {
        self.leaves.len()
    }

    /// The SOG `meta.json` files (relative to `lod-meta.json`) that `level` reads, each
    /// once, in the order their rows are drawn; the environment's last.
    pub fn level_files(&self, level: usize) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        let ranges = self
            .leaves
            .iter()
            .filter_map(|leaf| leaf.get(level).copied().flatten());
        for range in ranges {
            let name = self.filenames[range.file].as_str();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names.extend(self.environment.as_deref());
        names
    }

    /// Splats `level` draws.
    pub fn level_count(&self, level: usize) -> usize {
        self.leaves
            .iter()
            .filter_map(|leaf| leaf.get(level).copied().flatten())
            .map(|r| r.count)
            .sum()
    }

    /// Walks the tree depth first, children in order, as the writer laid it out.
    fn collect_leaves(&mut self, node: &Value) -> Result<(), SogError> {
        // An explicit stack: a hostile tree's depth costs heap, not the call stack.
        let mut stack = vec![node];
        while let Some(node) = stack.pop() {
            if let Some(children) = node.get("children").and_then(Value::as_array) {
                stack.extend(children.iter().rev());
                continue;
            }
            let lods = node.get("lods").and_then(Value::as_object).ok_or_else(|| {
                SogError::InvalidMeta {
                    key: "tree",
                    reason: format!("node {} has neither children nor lods", self.leaves.len()),
                }
            })?;
            let mut ranges = vec![None; self.levels];
            for (level, range) in lods {
                let Some(slot) = level.parse::<usize>().ok().and_then(|l| ranges.get_mut(l)) else {
                    return Err(SogError::InvalidMeta {
                        key: "tree",
                        reason: format!(
                            "a leaf names level {level:?}, the file has {}",
                            self.levels
                        ),
                    });
                };
                let field = |key: &str| range.get(key).and_then(Value::as_u64);
                let (Some(file), Some(offset), Some(count)) =
                    (field("file"), field("offset"), field("count"))
                else {
                    return Err(SogError::InvalidMeta {
                        key: "tree",
                        reason: format!(
                            "leaf {}'s level {level} lacks file, offset or count",
                            self.leaves.len()
                        ),
                    });
                };
                if file >= self.filenames.len() as u64 {
                    return Err(SogError::InvalidMeta {
                        key: "tree",
                        reason: format!(
                            "leaf {}'s level {level} is in file {file}; {} are listed",
                            self.leaves.len(),
                            self.filenames.len()
                        ),
                    });
                }
                *slot = (count > 0).then_some(LodRange {
                    file: file as usize,
                    offset: usize::try_from(offset).unwrap_or(usize::MAX),
                    count: usize::try_from(count).unwrap_or(usize::MAX),
                });
            }
            self.leaves.push(ranges);
        }
        Ok(())
    }
}

/// The path of `file`, named by the chunk `meta.json` at `chunk`, relative to the
/// `lod-meta.json`: chunks name their images beside themselves.
pub fn beside_chunk(chunk: &str, file: &str) -> String {
    match chunk.rfind('/') {
        Some(slash) => format!("{}{file}", &chunk[..=slash]),
        None => file.to_owned(),
    }
}

/// Level `level` of a streamed SOG, from its chunks decoded (`chunk` returns the
/// decoding of a name [`SogLodMeta::level_files`] lists): the leaves' ranges in the
/// tree's order, then the environment.
pub fn decode_lod_level<'a>(
    meta: &SogLodMeta,
    level: usize,
    chunk: impl Fn(&str) -> Option<&'a DecodedSplats>,
) -> Result<DecodedSplats, SogError> {
    if level >= meta.levels {
        return Err(SogError::InvalidMeta {
            key: "lodLevels",
            reason: format!("level {level} asked of {} levels", meta.levels),
        });
    }
    let get = |name: &str| chunk(name).ok_or_else(|| SogError::MissingImage(name.to_owned()));
    let ranges = meta.leaves.iter().filter_map(|leaf| leaf[level]);
    // Every chunk of a scene has one SH degree; the first decoded one sets it.
    let first = meta.level_files(level);
    let degree = match first.first() {
        Some(name) => get(name)?.sh_degree,
        None => 0,
    };
    let stride = crate::asset::decoded::sh_stride(degree);
    let mut geometry = Vec::new();
    let mut sh = Vec::new();
    let mut antialiased = false;
    let mut append = |splats: &DecodedSplats, rows: std::ops::Range<usize>, name: &str| {
        if splats.sh_degree != degree {
            return Err(SogError::InvalidMeta {
                key: "filenames",
                reason: format!(
                    "{name} has SH degree {}, the scene {degree}",
                    splats.sh_degree
                ),
            });
        }
        let Some(rows_geometry) = splats.geometry.get(rows.clone()) else {
            return Err(SogError::InvalidMeta {
                key: "tree",
                reason: format!(
                    "rows {}..{} of {name}, which holds {}",
                    rows.start,
                    rows.end,
                    splats.len()
                ),
            });
        };
        geometry.extend_from_slice(rows_geometry);
        sh.extend_from_slice(&splats.sh[rows.start * stride..rows.end * stride]);
        antialiased |= splats.antialiased;
        Ok(())
    };
    for range in ranges {
        let name = meta.filenames[range.file].as_str();
        let end = range.offset.saturating_add(range.count);
        append(get(name)?, range.offset..end, name)?;
    }
    if let Some(name) = &meta.environment {
        let splats = get(name)?;
        append(splats, 0..splats.len(), name)?;
    }
    Ok(DecodedSplats::from_parts(geometry, sh, degree, antialiased))
}
