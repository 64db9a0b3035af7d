//! An asset source for the web that reads files over HTTP with Range requests, so
//! that a loader which seeks (a streamed `.rad`: its header, then its first chunk)
//! and a stream fetching one chunk at a time download only what they read, not the
//! whole file as Bevy's own web source does.
//!
//! [`register_http_range_sources`] registers it as the `http` and `https` sources
//! (Bevy's `WebAssetPlugin`, which registers the same names, must be disabled). A
//! reader asks for nothing until it is read; it holds one block of the file at a
//! time, and a read past it fetches what the read asks for, at least
//! [`MIN_FETCH_BYTES`], twice as much as the last block when reading straight on (so
//! reading a whole file takes a few requests, not one per small read). A server that
//! ignores Range and sends the whole file still works: the reader keeps that body and
//! serves every read from it.

use std::future::Future;
use std::io::SeekFrom;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

use bevy::app::App;
use bevy::asset::AssetApp;
use bevy::asset::io::{
    AssetReader, AssetReaderError, AssetSourceBuilder, AssetSourceId, PathStream, Reader,
    ReaderNotSeekableError, SeekableReader,
};
use bevy::tasks::futures_lite::{AsyncRead, AsyncSeek};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// The least a read past the held block fetches.
pub const MIN_FETCH_BYTES: u64 = 64 << 10;
/// The most a block grows to while a file is read straight through.
const MAX_BLOCK_BYTES: u64 = 32 << 20;

/// Registers [`HttpRangeReader`] as the `http` and `https` asset sources. Call it
/// before adding `DefaultPlugins`, and disable Bevy's `WebAssetPlugin` there.
pub fn register_http_range_sources(app: &mut App) {
    for scheme in ["http", "https"] {
        app.register_asset_source(
            AssetSourceId::Name(scheme.into()),
            AssetSourceBuilder::new(move || Box::new(HttpRangeReader { scheme })),
        );
    }
}

/// Reads `scheme://path` with HTTP Range requests.
pub struct HttpRangeReader {
    scheme: &'static str,
}

impl AssetReader for HttpRangeReader {
    async fn read<'a>(&'a self, path: &'a Path) -> Result<impl Reader + 'a, AssetReaderError> {
        // Nothing is asked for until something is read: a seek first costs nothing.
        Ok(RangeReader {
            url: format!("{}://{}", self.scheme, path.to_string_lossy()),
            position: 0,
            length: None,
            block: Vec::new(),
            block_start: 0,
            straight_on: MIN_FETCH_BYTES,
            pending: None,
        })
    }

    async fn read_meta<'a>(&'a self, path: &'a Path) -> Result<impl Reader + 'a, AssetReaderError> {
        Err::<RangeReader, _>(AssetReaderError::NotFound(path.to_path_buf()))
    }

    async fn read_directory<'a>(
        &'a self,
        path: &'a Path,
    ) -> Result<Box<PathStream>, AssetReaderError> {
        Err(AssetReaderError::NotFound(path.to_path_buf()))
    }

    async fn is_directory<'a>(&'a self, _path: &'a Path) -> Result<bool, AssetReaderError> {
        Ok(false)
    }
}

/// Bytes the server sent for one request.
struct Block {
    start: u64,
    bytes: Vec<u8>,
    /// The file's length, where the answer says it.
    total: Option<u64>,
}

/// Why a request brought nothing.
enum Fetched {
    Missing,
    Status(u16),
    Failed(String),
}

type BlockFuture = Pin<Box<dyn Future<Output = Result<Block, Fetched>>>>;

/// A browser future, which is not `Send`, where Bevy's readers must be.
struct Local<F>(F);

// SAFETY: a wasm32 build without the `atomics` target feature has one thread, so the
// future is never sent to or shared with another.
#[cfg(not(target_feature = "atomics"))]
unsafe impl<F> Send for Local<F> {}
// SAFETY: as for `Send`.
#[cfg(not(target_feature = "atomics"))]
unsafe impl<F> Sync for Local<F> {}

impl<F: Future + Unpin> Future for Local<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

/// A file read a block at a time.
pub struct RangeReader {
    url: String,
    position: u64,
    /// Known once an answer said it (or the file's end was met).
    length: Option<u64>,
    block: Vec<u8>,
    block_start: u64,
    /// What a read just past the held block fetches.
    straight_on: u64,
    pending: Option<Local<BlockFuture>>,
}

impl RangeReader {
    fn take(&mut self, block: Block) {
        if let Some(total) = block.total {
            self.length = Some(total);
        }
        if block.bytes.is_empty() {
            // Asked past the end: the end is here.
            self.length = Some(self.length.unwrap_or(block.start).min(block.start));
        }
        self.block_start = block.start;
        self.block = block.bytes;
    }

    /// Copies what the held block has at the position into `out`.
    fn read_block(&mut self, out: &mut [u8]) -> Option<usize> {
        let offset = self.position.checked_sub(self.block_start)?;
        let held = self.block.get(usize::try_from(offset).ok()?..)?;
        if held.is_empty() {
            return None;
        }
        let n = held.len().min(out.len());
        out[..n].copy_from_slice(&held[..n]);
        self.position += n as u64;
        Some(n)
    }
}

impl AsyncRead for RangeReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        loop {
            if out.is_empty() {
                return Poll::Ready(Ok(0));
            }
            if let Some(n) = this.read_block(out) {
                return Poll::Ready(Ok(n));
            }
            if this.length.is_some_and(|length| this.position >= length) {
                return Poll::Ready(Ok(0));
            }
            let (url, start) = (this.url.clone(), this.position);
            let block_end = this.block_start + this.block.len() as u64;
            let at_least = if start == block_end && !this.block.is_empty() {
                this.straight_on = (this.straight_on * 2).min(MAX_BLOCK_BYTES);
                this.straight_on
            } else {
                MIN_FETCH_BYTES
            };
            let wanted = (out.len() as u64).max(at_least);
            let pending = this
                .pending
                .get_or_insert_with(|| Local(Box::pin(fetch(url, start, wanted))));
            let answer = match Pin::new(pending).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(answer) => answer,
            };
            this.pending = None;
            match answer {
                Ok(block) => this.take(block),
                Err(Fetched::Missing) => {
                    return Poll::Ready(Err(std::io::ErrorKind::NotFound.into()));
                }
                Err(Fetched::Status(status)) => {
                    return Poll::Ready(Err(std::io::Error::other(format!("HTTP {status}"))));
                }
                Err(Fetched::Failed(message)) => {
                    return Poll::Ready(Err(std::io::Error::other(message)));
                }
            }
        }
    }
}

impl AsyncSeek for RangeReader {
    fn poll_seek(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        to: SeekFrom,
    ) -> Poll<std::io::Result<u64>> {
        let this = self.get_mut();
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::Current(by) => this.position.checked_add_signed(by),
            SeekFrom::End(by) => match this.length {
                Some(length) => length.checked_add_signed(by),
                None => {
                    return Poll::Ready(Err(std::io::Error::other(
                        "the server did not say the file's length",
                    )));
                }
            },
        };
        match target {
            Some(at) => {
                this.position = at;
                Poll::Ready(Ok(at))
            }
            None => Poll::Ready(Err(std::io::ErrorKind::InvalidInput.into())),
        }
    }
}

impl Reader for RangeReader {
    fn seekable(&mut self) -> Result<&mut dyn SeekableReader, ReaderNotSeekableError> {
        Ok(self)
    }
}

/// Bytes `start..start + len` of `url` (fewer at the file's end; the whole file from a
/// server that ignores Range).
async fn fetch(url: String, start: u64, len: u64) -> Result<Block, Fetched> {
    let failed = |what: &str| {
        let what = what.to_owned();
        move |e: wasm_bindgen::JsValue| Fetched::Failed(format!("{what}: {e:?}"))
    };
    let init = web_sys::RequestInit::new();
    init.set_method("GET");
    let request =
        web_sys::Request::new_with_str_and_init(&url, &init).map_err(failed("the request"))?;
    let last = start.saturating_add(len.max(1)) - 1;
    request
        .headers()
        .set("Range", &format!("bytes={start}-{last}"))
        .map_err(failed("the Range header"))?;
    let window = web_sys::window().ok_or(Fetched::Failed("no window to fetch from".into()))?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(failed(&url))?
        .dyn_into()
        .map_err(failed("the response"))?;
    let status = response.status();
    let (block_start, total) = match status {
        206 => {
            let range = response
                .headers()
                .get("Content-Range")
                .ok()
                .flatten()
                .unwrap_or_default();
            (start, content_range_total(&range))
        }
        200 => (0, None),
        416 => {
            return Ok(Block {
                start,
                bytes: Vec::new(),
                total: None,
            });
        }
        403 | 404 => return Err(Fetched::Missing),
        status => return Err(Fetched::Status(status)),
    };
    let buffer = JsFuture::from(response.array_buffer().map_err(failed("the body"))?)
        .await
        .map_err(failed("the body"))?;
    let bytes = js_sys::Uint8Array::new(&buffer).to_vec();
    let total = match status {
        // The whole file.
        200 => Some(bytes.len() as u64),
        _ => total,
    };
    Ok(Block {
        start: block_start,
        bytes,
        total,
    })
}

/// The length in a `Content-Range: bytes a-b/total` header.
fn content_range_total(header: &str) -> Option<u64> {
    header.rsplit('/').next()?.trim().parse().ok()
}
