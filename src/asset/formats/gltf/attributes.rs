//! Attribute semantics of splat primitives: the ratified `KHR_gaussian_splatting:` names,
//! the `_`-prefixed names of the drafts before 2025-07, and bevy_splat's own exact
//! values that make a written GLB read back bit for bit.

use std::collections::BTreeMap;

pub(crate) const POSITION: &str = "POSITION";
pub(crate) const COLOR_0: &str = "COLOR_0";
const KHR_PREFIX: &str = "KHR_gaussian_splatting:";
/// The drafts (CesiumGS's 2024 `KHR_gaussian_splatting`, 2025-06 SPZ split) used
/// application-specific names: `_ROTATION`, `_SCALE`, `_SH_DEGREE_l_COEF_n`, and the
/// first SPZ draft listed `_OPACITY`.
const LEGACY_PREFIX: &str = "_";

/// The splat quantities that have a KHR name and a legacy name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Splat {
    Rotation,
    Scale,
    Opacity,
}

impl Splat {
    fn stem(self) -> &'static str {
        match self {
            Splat::Rotation => "ROTATION",
            Splat::Scale => "SCALE",
            Splat::Opacity => "OPACITY",
        }
    }
}

/// The KHR name of a quantity, for messages and the writer.
pub(crate) fn khr_name(splat: Splat) -> String {
    format!("{KHR_PREFIX}{}", splat.stem())
}

/// The KHR name of SH coefficient `n` of `degree`.
pub(crate) fn sh_name(degree: u8, n: u8) -> String {
    format!("{KHR_PREFIX}SH_DEGREE_{degree}_COEF_{n}")
}

/// Exact log scales (VEC3 float), written beside the spec's linear SCALE because the
/// spec's linear values cannot carry every log scale back bit for bit.
pub(crate) const EXACT_LOG_SCALE: &str = "_BEVY_SPLAT_LOG_SCALE";
/// Exact opacity logits (SCALAR float), beside the spec's linear OPACITY.
pub(crate) const EXACT_OPACITY_LOGIT: &str = "_BEVY_SPLAT_OPACITY_LOGIT";
/// Quaternions as given (VEC4 float, x y z w), beside the spec's unit ROTATION.
pub(crate) const EXACT_ROTATION: &str = "_BEVY_SPLAT_ROTATION";

/// Looks a quantity up under its KHR name, then its legacy name.
pub(crate) fn find(attributes: &BTreeMap<String, usize>, splat: Splat) -> Option<(String, usize)> {
    [KHR_PREFIX, LEGACY_PREFIX].iter().find_map(|prefix| {
        let name = format!("{prefix}{}", splat.stem());
        attributes.get(&name).map(|&a| (name, a))
    })
}

/// An SH attribute, parsed from `[KHR_gaussian_splatting:|_]SH_DEGREE_l_COEF_n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShAttribute {
    pub name: String,
    pub degree: u32,
    pub coefficient: u32,
    pub accessor: usize,
}

/// Every SH attribute of a primitive, KHR names winning over legacy ones when a file
/// carries both. `Err(name)`: a name that starts like an SH attribute but does not
/// parse, for the caller to report.
pub(crate) fn sh_attributes(
    attributes: &BTreeMap<String, usize>,
) -> Vec<Result<ShAttribute, String>> {
    let mut found: BTreeMap<(u32, u32), ShAttribute> = BTreeMap::new();
    let mut bad = Vec::new();
    for prefix in [LEGACY_PREFIX, KHR_PREFIX] {
        for (name, &accessor) in attributes {
            let Some(rest) = name
                .strip_prefix(prefix)
                .and_then(|r| r.strip_prefix("SH_DEGREE_"))
            else {
                continue;
            };
            let parsed = rest
                .split_once("_COEF_")
                .and_then(|(l, n)| Some((l.parse::<u32>().ok()?, n.parse::<u32>().ok()?)));
            match parsed {
                Some((degree, coefficient)) => {
                    found.insert(
                        (degree, coefficient),
                        ShAttribute {
                            name: name.clone(),
                            degree,
                            coefficient,
                            accessor,
                        },
                    );
                }
                None => bad.push(Err(name.clone())),
            }
        }
    }
    found.into_values().map(Ok).chain(bad).collect()
}

/// Whether decoding an uncompressed primitive reads this attribute (and so needs the
/// buffer behind it).
pub(crate) fn is_read(name: &str) -> bool {
    let stem = name
        .strip_prefix(KHR_PREFIX)
        .or_else(|| name.strip_prefix(LEGACY_PREFIX));
    name == POSITION
        || name == COLOR_0
        || [EXACT_LOG_SCALE, EXACT_OPACITY_LOGIT, EXACT_ROTATION].contains(&name)
        || stem.is_some_and(|s| {
            ["ROTATION", "SCALE", "OPACITY"].contains(&s) || s.starts_with("SH_DEGREE_")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn khr_names_win_over_legacy_names() {
        let attributes: BTreeMap<String, usize> = [
            ("_SCALE".to_string(), 1),
            ("KHR_gaussian_splatting:SCALE".to_string(), 2),
            ("_ROTATION".to_string(), 3),
        ]
        .into();
        assert_eq!(
            find(&attributes, Splat::Scale),
            Some(("KHR_gaussian_splatting:SCALE".into(), 2))
        );
        assert_eq!(
            find(&attributes, Splat::Rotation),
            Some(("_ROTATION".into(), 3))
        );
        assert_eq!(find(&attributes, Splat::Opacity), None);
    }

    #[test]
    fn sh_attributes_parse_both_spellings() {
        let attributes: BTreeMap<String, usize> = [
            ("_SH_DEGREE_1_COEF_0".to_string(), 1),
            ("KHR_gaussian_splatting:SH_DEGREE_1_COEF_0".to_string(), 2),
            ("KHR_gaussian_splatting:SH_DEGREE_0_COEF_0".to_string(), 3),
            ("KHR_gaussian_splatting:SH_DEGREE_x_COEF_0".to_string(), 4),
        ]
        .into();
        let parsed = sh_attributes(&attributes);
        assert_eq!(parsed.len(), 3);
        assert!(matches!(&parsed[0], Ok(a) if a.degree == 0 && a.accessor == 3));
        assert!(matches!(&parsed[1], Ok(a) if a.degree == 1 && a.accessor == 2));
        assert!(matches!(&parsed[2], Err(name) if name.contains("_x_")));
        assert!(is_read("_SH_DEGREE_2_COEF_4"));
        assert!(is_read(EXACT_LOG_SCALE));
        assert!(!is_read("_FEATURE_ID_0"));
    }
}
