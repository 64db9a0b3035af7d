//! A static file server on 127.0.0.1 for the test pages: a thread per connection,
//! GET only, paths kept inside the site folder, single `Range: bytes=a-b` requests
//! answered with the part (206). Every request is logged, for tests to see what a page
//! fetched.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// One request as served: its path, the range it asked for, the bytes sent.
#[derive(Clone, Debug)]
pub struct Served {
    pub path: String,
    pub range: Option<(u64, u64)>,
    pub bytes: u64,
}

static LOG: Mutex<Vec<Served>> = Mutex::new(Vec::new());

/// Every request served so far.
pub fn log() -> Vec<Served> {
    LOG.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Serves each folder under its URL prefix (`("/", site)`, `("/data/", data)`; the
/// longest prefix wins) on a free port until the process ends; returns
/// `http://127.0.0.1:PORT`.
pub fn serve(mounts: Vec<(&'static str, PathBuf)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
    let address = listener.local_addr().expect("the bound address");
    let mut mounts = mounts;
    mounts.sort_by_key(|(prefix, _)| std::cmp::Reverse(prefix.len()));
    let mounts = std::sync::Arc::new(mounts);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mounts = mounts.clone();
            std::thread::spawn(move || {
                let _ = answer(stream, &mounts);
            });
        }
    });
    format!("http://{address}")
}

fn answer(mut stream: TcpStream, mounts: &[(&str, PathBuf)]) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // Of the headers only Range matters; all are read so the browser sees its request
    // taken.
    let mut line = String::new();
    let mut range = None;
    while reader.read_line(&mut line)? > 2 {
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("range")
        {
            range = byte_range(value.trim());
        }
        line.clear();
    }
    let mut words = request.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or("/"));
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let local = mounts.iter().find_map(|(prefix, root)| {
        let rest = path.strip_prefix(prefix)?;
        local_path(root, rest)
    });
    let file = match (method, local) {
        ("GET", Some(file)) => std::fs::read(&file).ok().map(|body| (file, body)),
        _ => None,
    };
    match file {
        Some((file, body)) => {
            let len = body.len() as u64;
            let (status, part, extra) = match range {
                Some((first, last)) if first < len => {
                    let last = last.min(len - 1);
                    (
                        "206 Partial Content",
                        &body[first as usize..=last as usize],
                        format!("Content-Range: bytes {first}-{last}/{len}\r\n"),
                    )
                }
                Some(_) => {
                    let header = format!(
                        "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\n\
                         Content-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                    return stream.write_all(header.as_bytes());
                }
                None => ("200 OK", &body[..], String::new()),
            };
            LOG.lock().unwrap_or_else(|e| e.into_inner()).push(Served {
                path: path.to_owned(),
                range,
                bytes: part.len() as u64,
            });
            let header = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{extra}\
                 Accept-Ranges: bytes\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
                content_type(&file),
                part.len()
            );
            stream.write_all(header.as_bytes())?;
            stream.write_all(part)
        }
        None => stream
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    }
}

/// `bytes=a-b` (or `bytes=a-`) as first and last byte.
fn byte_range(value: &str) -> Option<(u64, u64)> {
    let (first, last) = value.strip_prefix("bytes=")?.split_once('-')?;
    let first = first.trim().parse().ok()?;
    let last = match last.trim() {
        "" => u64::MAX,
        last => last.parse().ok()?,
    };
    (first <= last).then_some((first, last))
}

/// `url_path` under `root`, refusing `..`; a folder means its `index.html`.
fn local_path(root: &Path, url_path: &str) -> Option<PathBuf> {
    let relative = Path::new(url_path.trim_start_matches('/'));
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let path = root.join(relative);
    Some(if path.is_dir() {
        path.join("index.html")
    } else {
        path
    })
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}
