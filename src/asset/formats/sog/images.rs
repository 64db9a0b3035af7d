//! WebP images to texel arrays: header checks before any large allocation, and the
//! images of one scene decoded side by side where threads exist.

use std::io::Cursor;

use image_webp::WebPDecoder;

use super::error::SogError;

/// A decoded image, row-major from the top-left, 3 or 4 bytes per texel. Encoders
/// drop the alpha channel of an image whose alpha is all 255 (the means images), so
/// a 3-channel image reads as alpha 255.
#[derive(Debug)]
pub(crate) struct Image {
    pub file: String,
    pub width: u32,
    pub height: u32,
    pub channels: usize,
    pub data: Vec<u8>,
}

impl Image {
    pub fn texels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// `len` texels from texel `start` on, as RGBA. The caller has checked the image
    /// holds them; a shorter image just yields fewer.
    pub fn rgba(&self, start: usize, len: usize) -> impl Iterator<Item = [u8; 4]> + '_ {
        let four = self.channels == 4;
        let from = start.saturating_mul(self.channels).min(self.data.len());
        self.data[from..]
            .chunks_exact(self.channels)
            .take(len)
            .map(move |t| match t {
                [r, g, b, a] if four => [*r, *g, *b, *a],
                [r, g, b, ..] => [*r, *g, *b, 255],
                _ => [0, 0, 0, 255],
            })
    }

    /// Refuses an image with fewer texels than `count` splats need.
    pub fn require(&self, count: usize) -> Result<(), SogError> {
        if self.texels() < count as u64 {
            return Err(SogError::ImageTooSmall {
                file: self.file.clone(),
                width: self.width,
                height: self.height,
                count,
            });
        }
        Ok(())
    }
}

/// One image to decode: its name (for errors), its bytes, and its texel budget.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Job<'a> {
    pub file: &'a str,
    pub bytes: &'a [u8],
    pub pixel_limit: u64,
    /// Width the image must have, checked from the header (the SH centroid palette).
    pub widths: &'a [u32],
}

/// Decodes one WebP, reading its header first so that a small file claiming a huge
/// canvas is refused before its buffer is allocated.
pub(crate) fn decode(job: Job<'_>) -> Result<Image, SogError> {
    let webp_err = |message: String| SogError::WebP {
        file: job.file.to_owned(),
        message,
    };
    let mut decoder =
        WebPDecoder::new(Cursor::new(job.bytes)).map_err(|e| webp_err(e.to_string()))?;
    if decoder.is_animated() {
        return Err(webp_err("animated WebP is not a SOG image".into()));
    }
    let (width, height) = decoder.dimensions();
    let texels = u64::from(width) * u64::from(height);
    if texels > job.pixel_limit {
        return Err(SogError::ImageTooLarge {
            file: job.file.to_owned(),
            width,
            height,
            limit: job.pixel_limit,
        });
    }
    if !job.widths.is_empty() && !job.widths.contains(&width) {
        let expected: Vec<String> = job.widths.iter().map(u32::to_string).collect();
        return Err(SogError::CentroidWidth {
            file: job.file.to_owned(),
            width,
            expected: expected.join(" or "),
        });
    }
    // Metadata chunks (ICC, EXIF) are bounded by the same budget as the pixels.
    decoder
        .set_memory_limit(usize::try_from(job.pixel_limit.saturating_mul(4)).unwrap_or(usize::MAX));
    let channels = if decoder.has_alpha() { 4 } else { 3 };
    let size = decoder
        .output_buffer_size()
        .ok_or_else(|| webp_err("image size overflows".into()))?;
    let mut data = vec![0u8; size];
    decoder
        .read_image(&mut data)
        .map_err(|e| webp_err(e.to_string()))?;
    Ok(Image {
        file: job.file.to_owned(),
        width,
        height,
        channels,
        data,
    })
}

/// Decodes every job, results in job order. SOG decoding time is almost all WebP, and
/// the images are independent, so they are spread over up to `threads` workers.
pub(crate) fn decode_all(jobs: &[Job<'_>], threads: usize) -> Vec<Result<Image, SogError>> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        // Automatic: one thread per image, which measured at least as fast as one per
        // core on a busy 2-core machine (the OS keeps both cores fed to the end, where a
        // 2-worker queue can leave one idle behind the last image). See FIXTURES.md.
        let workers = match threads {
            0 => jobs.len(),
            n => n.min(jobs.len()),
        };
        if workers > 1 {
            return decode_parallel(jobs, workers);
        }
    }
    #[cfg(target_arch = "wasm32")]
    let _ = threads;
    jobs.iter().map(|job| decode(*job)).collect()
}

#[cfg(not(target_arch = "wasm32"))]
fn decode_parallel(jobs: &[Job<'_>], workers: usize) -> Vec<Result<Image, SogError>> {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};

    // Workers pull the next job, so a large image does not hold up a queue of small
    // ones behind it. Each result lands in its own slot as soon as it is done, so a
    // decoder that panics loses only the image it was working on.
    let next = AtomicUsize::new(0);
    let slots: Vec<OnceLock<Result<Image, SogError>>> =
        jobs.iter().map(|_| OnceLock::new()).collect();
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let (Some(job), Some(slot)) = (jobs.get(i), slots.get(i)) else {
                break;
            };
            let _ = slot.set(decode(*job));
        }
    };
    std::thread::scope(|scope| {
        // The calling thread only waits, so that a decoder panic stays inside a
        // worker; it decodes by itself only if no worker could be spawned.
        let handles: Vec<_> = (0..workers)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        if handles.is_empty() {
            work();
        }
        for handle in handles {
            // A panic is reported through the empty slot it leaves.
            let _ = handle.join();
        }
    });
    slots
        .into_iter()
        .zip(jobs)
        .map(|(slot, job)| {
            slot.into_inner().unwrap_or_else(|| {
                Err(SogError::WebP {
                    file: job.file.to_owned(),
                    message: "decoder panicked".into(),
                })
            })
        })
        .collect()
}
