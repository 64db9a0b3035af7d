//! The viewer in a browser page (`web/index.html`): settings from the query, a check
//! for WebGPU before anything starts, files dropped onto the page, and the page title
//! and message box as the viewer's status (`bevy_splat: ready`,
//! `bevy_splat: error: …`), which the browser test waits for.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use bevy::asset::AssetPath;
use bevy::asset::io::AssetSourceBuilder;
use bevy::asset::io::memory::{Dir, MemoryAssetReader};
use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::platform::time::Instant;
use bevy::prelude::*;
use bevy::render::error_handler::{RenderErrorHandler, RenderErrorPolicy};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use super::options::ViewerOptions;
use super::{DROPPED_SOURCE, SAMPLE, ViewerStatus};
use bevy_splat::render::PASS_NAMES;
use bevy_splat::streaming::SplatStreamingStats;
use bevy_splat::{GaussianCloud, GaussianSplats, SplatPassTimes, SplatStats};

/// The canvas Bevy draws into.
pub const CANVAS: &str = "#bevy";

const NO_WEBGPU: &str = "This browser has no WebGPU, which bevy_splat needs: its rasterizer is \
                         made of compute shaders, which WebGL lacks. Try a current Chrome or Edge, \
                         or a browser with WebGPU turned on.";

/// Reads the query, checks for WebGPU and starts the app (asynchronously: the browser
/// answers the adapter request later).
pub fn start() {
    let options = match query_options() {
        Ok(options) => options,
        Err(message) => return fail(&message),
    };
    let scene = match &options.scene {
        Some(url) => match url_asset_path(url) {
            Ok(path) => path,
            Err(message) => return fail(&message),
        },
        None => AssetPath::from(SAMPLE),
    };
    wasm_bindgen_futures::spawn_local(async move {
        if !wgpu::util::is_browser_webgpu_supported().await {
            show_message(NO_WEBGPU);
            set_title("bevy_splat: error: this browser has no WebGPU");
            return;
        }
        run(&options, scene);
    });
}

fn run(options: &ViewerOptions, scene: AssetPath<'static>) {
    let dropped = Dir::default();
    let reader_root = dropped.clone();
    let mut app = App::new();
    app.register_asset_source(
        DROPPED_SOURCE,
        AssetSourceBuilder::new(move || {
            Box::new(MemoryAssetReader {
                root: reader_root.clone(),
            })
        }),
    );
    super::viewer_app(&mut app, options, "assets".into(), scene);
    let queue = DropQueue::default();
    listen_for_drops(queue.clone());
    app.insert_resource(queue)
        .insert_resource(DroppedFiles {
            dir: dropped,
            next: 0,
        })
        // A GPU error (a validation error is a bug) stops drawing and says so on the
        // page instead of leaving the last frame standing.
        .insert_resource(RenderErrorHandler(|error, main_world, _| {
            let message = format!("{:?} error: {}", error.ty, error.description);
            main_world.insert_resource(ViewerStatus::Failed(super::one_line(&message)));
            RenderErrorPolicy::StopRendering
        }))
        .add_systems(
            Update,
            (
                open_dropped_files.before(super::settle_scene),
                show_status.after(super::update_status),
                publish_frame_stats.after(super::update_status),
                time_passes,
                publish_start_up,
            ),
        );
    // After the plugins: Bevy's log plugin installs its own hook, which still runs.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload_as_str().unwrap_or("the viewer panicked");
        fail(&super::one_line(message));
        previous(info);
    }));
    app.run();
}

/// The viewer's settings from the page's query (`?url=…&eye=…`).
fn query_options() -> Result<ViewerOptions, String> {
    let search = web_sys::window()
        .ok_or("no window")?
        .location()
        .search()
        .map_err(|_| "the page's address cannot be read")?;
    let query = web_sys::UrlSearchParams::new_with_str(&search)
        .map_err(|_| "the page's query cannot be read")?;
    let mut options = ViewerOptions::default();
    let entries = js_sys::try_iter(&query)
        .ok()
        .flatten()
        .ok_or("the page's query cannot be read")?;
    for entry in entries {
        let pair: js_sys::Array = entry.map_err(|_| "bad query")?.unchecked_into();
        let key = pair.get(0).as_string().unwrap_or_default();
        let value = pair.get(1).as_string().unwrap_or_default();
        options.set(&key, &value)?;
    }
    Ok(options)
}

/// `url` (absolute, or relative to the page) as a path in Bevy's `http`/`https` asset
/// sources.
fn url_asset_path(url: &str) -> Result<AssetPath<'static>, String> {
    let page = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .ok_or("the page's address cannot be read")?;
    let parsed =
        web_sys::Url::new_with_base(url, &page).map_err(|_| format!("{url:?} is not a URL"))?;
    // `#` would name a sub-asset in Bevy's paths.
    parsed.set_hash("");
    let protocol = parsed.protocol();
    if protocol != "http:" && protocol != "https:" {
        return Err(format!(
            "{url:?}: only http and https addresses can be loaded"
        ));
    }
    Ok(AssetPath::from(parsed.href()))
}

/// Files dropped onto the page, read by the browser, waiting for the next frame.
#[derive(Resource, Clone, Default)]
struct DropQueue(Arc<Mutex<Vec<(String, Vec<u8>)>>>);

impl DropQueue {
    fn push(&self, name: String, bytes: Vec<u8>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((name, bytes));
    }

    fn take(&self) -> Vec<(String, Vec<u8>)> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The memory folder behind the `dropped` asset source.
#[derive(Resource)]
struct DroppedFiles {
    dir: Dir,
    /// Each drop gets its own folder, so a file dropped twice is read again.
    next: u32,
}

fn listen_for_drops(queue: DropQueue) {
    let Some(window) = web_sys::window() else {
        return;
    };
    // The browser opens a dropped file itself unless the page takes the drag.
    let over = Closure::<dyn FnMut(web_sys::DragEvent)>::new(|event: web_sys::DragEvent| {
        event.prevent_default();
    });
    let drop = Closure::<dyn FnMut(web_sys::DragEvent)>::new(move |event: web_sys::DragEvent| {
        event.prevent_default();
        let Some(files) = event.data_transfer().and_then(|d| d.files()) else {
            return;
        };
        for file in (0..files.length()).filter_map(|i| files.get(i)) {
            let queue = queue.clone();
            wasm_bindgen_futures::spawn_local(async move {
                match wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await {
                    Ok(buffer) => {
                        queue.push(file.name(), js_sys::Uint8Array::new(&buffer).to_vec())
                    }
                    Err(_) => warn!("the browser could not read {}", file.name()),
                }
            });
        }
    });
    for (name, listener) in [("dragover", over), ("drop", drop)] {
        let _ = window.add_event_listener_with_callback(name, listener.as_ref().unchecked_ref());
        // The page lives as long as the app: the listeners stay.
        listener.forget();
    }
}

fn open_dropped_files(
    queue: Res<DropQueue>,
    mut dropped: ResMut<DroppedFiles>,
    mut switch: super::SceneSwitch,
) {
    for (name, bytes) in queue.take() {
        let path = format!("{}/{name}", dropped.next);
        dropped.next += 1;
        dropped.dir.insert_asset(Path::new(&path), bytes);
        switch.open(AssetPath::from(path).with_source(DROPPED_SOURCE));
    }
}

/// The status as the page's title, and a failure in the page's message box.
fn show_status(status: Res<ViewerStatus>, mut shown: Local<Option<ViewerStatus>>) {
    if shown.as_ref() == Some(&*status) {
        return;
    }
    match &*status {
        ViewerStatus::Loading => {
            hide_message();
            set_title("bevy_splat: loading");
        }
        ViewerStatus::Ready => set_title("bevy_splat: ready"),
        ViewerStatus::Failed(message) => fail(message),
    }
    *shown = Some(status.clone());
}

fn fail(message: &str) {
    show_message(&format!("bevy_splat could not show the scene: {message}"));
    set_title(&format!("bevy_splat: error: {message}"));
}

fn set_title(title: &str) {
    if let Some(document) = web_sys::window().and_then(|w| w.document()) {
        document.set_title(title);
    }
}

/// The page's message box (`#message` in `index.html`).
fn message_box() -> Option<web_sys::Element> {
    web_sys::window()?.document()?.get_element_by_id("message")
}

fn show_message(text: &str) {
    if let Some(element) = message_box() {
        element.set_text_content(Some(text));
        let _ = element.remove_attribute("hidden");
    }
}

fn hide_message() {
    if let Some(element) = message_box() {
        let _ = element.set_attribute("hidden", "");
    }
}

/// When the page drew its first frame and its first frame with splats, in the page's
/// milliseconds (`performance.now()`, from the navigation's start), as the body's
/// `data-first-frame-ms` and `data-first-splat-frame-ms`: the README's start-up times.
fn publish_start_up(
    stats: Res<SplatStats>,
    cameras: Query<Entity, With<Camera3d>>,
    mut published: Local<(bool, bool)>,
) {
    if published.1 {
        return;
    }
    let Some(window) = web_sys::window() else {
        return;
    };
    let (Some(body), Some(performance)) = (
        window.document().and_then(|d| d.body()),
        window.performance(),
    ) else {
        return;
    };
    let now = format!("{:.0}", performance.now());
    if !published.0 {
        published.0 = true;
        let _ = body.dataset().set("firstFrameMs", &now);
    }
    let drawn = cameras
        .iter()
        .any(|camera| stats.get(camera).is_some_and(|view| view.frames > 0));
    if drawn {
        published.1 = true;
        let _ = body.dataset().set("firstSplatFrameMs", &now);
    }
}

/// Since the scene became ready: frames drawn and when the count started.
#[derive(Default)]
struct FramesSinceReady {
    frames: u32,
    since: Option<Instant>,
    published: Option<Instant>,
    logged: Option<Instant>,
}

/// The page shows each pass's GPU time (`gpu-ms`, and in the log): the cameras time
/// their passes.
fn time_passes(
    mut commands: Commands,
    cameras: Query<Entity, (With<Camera3d>, Without<SplatPassTimes>)>,
) {
    for camera in &cameras {
        commands.entity(camera).insert(SplatPassTimes);
    }
}

/// Twice a second, the frame times and the splat counts as `data-*` attributes of the
/// page's body (`frames`, `splats`, `frame-ms`, `mean-frame-ms`, `bands`,
/// `visible-splats`, `gpu-ms`, and with a budget `lod-threshold`, `leaves-in-view`), for
/// the browser test and for anyone measuring the page.
fn publish_frame_stats(
    status: Res<ViewerStatus>,
    diagnostics: Res<DiagnosticsStore>,
    stats: Res<SplatStats>,
    cameras: Query<Entity, With<Camera3d>>,
    clouds: Query<&GaussianCloud>,
    splats: Res<Assets<GaussianSplats>>,
    streaming: Res<SplatStreamingStats>,
    mut count: Local<FramesSinceReady>,
) {
    if *status != ViewerStatus::Ready {
        *count = FramesSinceReady::default();
        return;
    }
    let now = Instant::now();
    let since = *count.since.get_or_insert(now);
    count.frames += 1;
    if count
        .published
        .is_some_and(|at| now.duration_since(at).as_secs_f32() < 0.5)
    {
        return;
    }
    count.published = Some(now);
    let Some(body) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.body())
    else {
        return;
    };
    let data = body.dataset();
    let set = |key: &str, value: String| {
        let _ = data.set(key, &value);
    };
    set("frames", count.frames.to_string());
    let loaded: usize = clouds
        .iter()
        .filter_map(|c| splats.get(&c.0))
        .map(|s| s.len())
        .sum();
    set("splats", loaded.to_string());
    if streaming.streams > 0 {
        set("streamTotalNodes", streaming.total_nodes.to_string());
        set("streamResidentNodes", streaming.resident_nodes.to_string());
        set(
            "streamResidentChunks",
            streaming.resident_chunks.to_string(),
        );
        set("streamTotalChunks", streaming.total_chunks.to_string());
        set("streamGpuBytes", streaming.gpu_bytes.to_string());
        set("streamBytesRead", streaming.bytes_read.to_string());
        set("streamInFlight", streaming.in_flight.to_string());
    }
    if count.frames > 1 {
        let mean = now.duration_since(since).as_secs_f64() * 1e3 / f64::from(count.frames - 1);
        set("meanFrameMs", format!("{mean:.2}"));
    }
    if let Some(ms) = diagnostics
        .get(&FrameTimeDiagnosticsPlugin::FRAME_TIME)
        .and_then(|d| d.smoothed())
    {
        set("frameMs", format!("{ms:.2}"));
    }
    let Some(view) = cameras.iter().next().and_then(|camera| stats.get(camera)) else {
        return;
    };
    set("bands", view.bands.to_string());
    set("visibleSplats", view.visible_splats.to_string());
    // With `budget=`: the cut's threshold and the splats in view without it.
    if let Some(lod) = view.lod {
        set("lodThreshold", format!("{:e}", lod.threshold));
        set("leavesInView", lod.leaves_in_view.to_string());
    }
    // Where the browser offers timestamp queries: the GPU time of each pass, logged
    // every few seconds.
    let (Some(stages), Some(total)) = (view.gpu_pass_ns, view.gpu_total_ns()) else {
        return;
    };
    set("gpuMs", format!("{:.3}", total as f64 * 1e-6));
    if count
        .logged
        .is_some_and(|at| now.duration_since(at).as_secs_f32() < 5.0)
    {
        return;
    }
    count.logged = Some(now);
    let passes: Vec<String> = PASS_NAMES
        .iter()
        .zip(stages)
        .map(|(name, ns)| format!("{name} {:.3}", ns as f64 * 1e-6))
        .collect();
    info!(
        "GPU time {:.3} ms: {} (ms)",
        total as f64 * 1e-6,
        passes.join(", ")
    );
}
