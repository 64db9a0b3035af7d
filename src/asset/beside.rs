//! Reading the files a splat file names (a SOG meta.json's images, a glTF's buffers)
//! from beside it, through the asset server, so they come from wherever the file came
//! from (disk, the web, an embedded source).

use bevy::asset::LoadContext;

/// A file that could not be read: the path as resolved (or as named) and why.
#[derive(Debug)]
pub(crate) struct BesideError {
    pub path: String,
    pub message: String,
}

/// The bytes of `name`, relative to the folder of the file being loaded.
pub(crate) async fn read_beside(
    load_context: &mut LoadContext<'_>,
    name: &str,
) -> Result<Vec<u8>, BesideError> {
    let path = load_context
        .path()
        .resolve_embed_str(name)
        .map_err(|e| BesideError {
            path: name.to_owned(),
            message: e.to_string(),
        })?;
    load_context
        .read_asset_bytes(path.clone())
        .await
        .map_err(|e| BesideError {
            path: path.to_string(),
            message: e.to_string(),
        })
}
