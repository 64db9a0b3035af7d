//! Resource limits and threading for one decode.

/// Limits that keep a hostile or broken file from exhausting memory, and how many
/// threads decode the WebP images. The defaults admit every scene PlayCanvas's tools
/// write as a single SOG (they advise streamed SOG well below these sizes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Most splats a scene may claim (`count`); checked before any image is touched.
    pub max_splats: usize,
    /// Most texels one image may have, checked from the WebP header before decoding.
    /// An image may also hold at most `4 * count + 2^20` texels: writers pad to a
    /// multiple of 4 or 16 (or a power of two), so anything larger is a decompression
    /// bomb hiding behind a small `count`.
    pub max_image_pixels: u64,
    /// Most bytes one zip entry may inflate to.
    pub max_entry_bytes: u64,
    /// Most bytes all zip entries of a bundle may inflate to together.
    pub max_total_inflated: u64,
    /// Threads: 1 decodes everything in the calling thread; n uses up to n threads;
    /// 0 (the default) decodes each WebP image on its own thread and dequantises large
    /// scenes on one thread per core. Ignored on wasm32, which is always sequential.
    pub threads: usize,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        Self {
            max_splats: 1 << 24,
            max_image_pixels: 1 << 26,
            max_entry_bytes: 256 << 20,
            max_total_inflated: 1 << 30,
            threads: 0,
        }
    }
}

impl DecodeOptions {
    /// Texel budget for one per-splat image of a scene of `count` splats.
    pub(crate) fn image_pixel_limit(&self, count: usize) -> u64 {
        let by_count = (count as u64).saturating_mul(4).saturating_add(1 << 20);
        by_count.min(self.max_image_pixels)
    }
}
