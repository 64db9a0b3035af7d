//! [`Rgba8`], an image read back from a camera's target, and the row unpadding that
//! turns a texture copy into one.

use bevy::math::UVec2;

/// An 8-bit RGBA image read back from a camera's target, rows top to bottom, four
/// bytes a pixel, no padding. The values are the target's bytes as stored: sRGB
/// values for an `Rgba8UnormSrgb` target, linear ones for `Rgba8Unorm`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rgba8 {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height × 4` bytes, row by row.
    pub pixels: Vec<u8>,
}

impl Rgba8 {
    /// The pixel at column `x` of row `y`, or `None` outside the image.
    pub fn get(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        let pixel = self.pixels.get(i..i + 4)?;
        pixel.try_into().ok()
    }

    /// The pixel at column `x` of row `y`.
    ///
    /// # Panics
    ///
    /// Outside the image; [`Rgba8::get`] is the checked form.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        self.get(x, y).unwrap_or_else(|| {
            panic!(
                "pixel ({x}, {y}) is outside the {}×{} image",
                self.width, self.height
            )
        })
    }

    /// Drops alpha: the RGB bytes, row by row.
    pub fn rgb(&self) -> Vec<u8> {
        self.pixels
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect()
    }

    /// Writes the RGB bytes (alpha dropped) as an 8-bit PNG at `path`.
    #[cfg(feature = "png")]
    pub fn save_png(&self, path: impl AsRef<std::path::Path>) -> Result<(), SavePngError> {
        let path = path.as_ref();
        image::save_buffer(
            path,
            &self.rgb(),
            self.width,
            self.height,
            image::ExtendedColorType::Rgb8,
        )
        .map_err(|source| SavePngError {
            path: path.to_path_buf(),
            source: Box::new(source),
        })
    }

    /// The pixels of a texture copy of `size`, whose rows are padded to 256 bytes
    /// (a copy of one row is not). Rows the data lacks come out shorter: the image
    /// then has fewer pixels than its size says.
    pub fn from_padded_rows(data: &[u8], size: UVec2) -> Rgba8 {
        let row = size.x as usize * 4;
        let padded = row.div_ceil(256) * 256;
        let stride = if size.y > 1 { padded } else { row };
        let pixels = data
            .chunks(stride.max(1))
            .take(size.y as usize)
            .flat_map(|r| &r[..row.min(r.len())])
            .copied()
            .collect();
        Rgba8 {
            width: size.x,
            height: size.y,
            pixels,
        }
    }
}

/// Why [`Rgba8::save_png`] failed: the file could not be created or written. The text
/// names the file.
#[cfg(feature = "png")]
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct SavePngError {
    /// The file that was being written.
    pub path: std::path::PathBuf,
    /// The encoder's or the file system's error.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_rows_are_cut_to_the_pixels() {
        // 3 pixels a row: 12 bytes of pixels, padded to 256.
        let size = UVec2::new(3, 2);
        let mut data = vec![0u8; 256 + 12];
        data[..12].copy_from_slice(&[1; 12]);
        data[256..].copy_from_slice(&[2; 12]);
        let image = Rgba8::from_padded_rows(&data, size);
        assert_eq!(image.pixels.len(), 24);
        assert_eq!(image.pixel(2, 0), [1; 4]);
        assert_eq!(image.pixel(0, 1), [2; 4]);
        assert_eq!(image.get(3, 0), None);
        assert_eq!(image.get(0, 2), None);
        assert_eq!(image.rgb().len(), 18);
    }

    #[test]
    fn one_row_is_not_padded_and_short_data_gives_fewer_pixels() {
        let image = Rgba8::from_padded_rows(&[7; 8], UVec2::new(2, 1));
        assert_eq!(image.pixel(1, 0), [7; 4]);
        let short = Rgba8::from_padded_rows(&[7; 6], UVec2::new(2, 1));
        assert_eq!(short.pixels.len(), 6);
        assert_eq!(short.get(1, 0), None);
    }
}
