//! Telling a SOG meta.json from any other JSON file.

use serde_json::Value;

/// Whether `json` looks like a SOG meta.json of any version: an object whose `means`
/// and `quats` are objects listing `files`. Validity is left to `parse_meta`, so that a
/// broken SOG is reported as one rather than as "not a SOG".
pub fn is_sog_meta(json: &[u8]) -> bool {
    let Ok(Value::Object(root)) = serde_json::from_slice::<Value>(json) else {
        return false;
    };
    ["means", "quats"].iter().all(|key| {
        root.get(*key)
            .and_then(|p| p.get("files"))
            .is_some_and(Value::is_array)
    })
}
