//! What a streamed asset carries: where its file is and the file's index, so that the
//! chunks it did not load can be fetched later (`crate::streaming`).

use bevy::asset::AssetPath;

use super::formats::rad::RadStreamIndex;

/// The file a streamed [`GaussianSplats`](super::GaussianSplats) came from: a `.rad`
/// with a level-of-detail tree, of which the asset holds the first chunk (the root
/// and the coarsest levels) and `crate::streaming` fetches the rest as cameras need
/// it.
pub struct SplatStreamSource {
    /// The file, as the asset server names it (its chunk files lie beside it).
    pub path: AssetPath<'static>,
    /// Its header: where each chunk lies, and the SH codebook of the first.
    pub index: RadStreamIndex,
    /// The first chunk's child ranges (`[first child, count]` per node, in the file's
    /// numbering); its nodes are the asset's splats.
    pub head_children: Vec<[u32; 2]>,
}

impl std::fmt::Debug for SplatStreamSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplatStreamSource")
            .field("path", &self.path)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

/// Bytes `offset..offset + len` of a whole file read where its source could not seek;
/// `None` where the range passes the file's end (or any bound overflows).
pub fn byte_range(bytes: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    bytes.get(start..end)
}
