#!/usr/bin/env bash
# Builds the web viewer into target/web/: index.html, viewer.js, viewer_bg.wasm and the
# shipped angel in assets/ — a static site any file server can serve.
#
#   bash web/build.sh            build
#   bash web/build.sh --serve    build, then serve it on http://127.0.0.1:8080/
#   bash web/build.sh --serve 9000
set -euo pipefail
cd "$(dirname "$0")/.."

serve=""
port=8080
if [ "${1:-}" = "--serve" ]; then
    serve=1
    port="${2:-8080}"
fi

target="wasm32-unknown-unknown"
if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
fi

# wasm-bindgen's output must come from the same version as the crate in Cargo.lock.
version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $version"; then
    # Its own lock file first; a registry mirror that lacks one of the crates it pins
    # (webpki-roots 1.0.11 was missing from ours) gets the newest compatible ones.
    cargo install --locked wasm-bindgen-cli --version "$version" ||
        cargo install wasm-bindgen-cli --version "$version"
fi

cargo build --locked --release --example viewer --target "$target"

build_dir="${CARGO_TARGET_DIR:-target}/$target/release/examples"
site="target/web"
rm -rf "$site"
mkdir -p "$site/assets"
# Without the name section (a third of the file) panics still name their message.
wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$site" --out-name viewer \
    "$build_dir/viewer.wasm"
cp web/index.html "$site/"
cp assets/angel.ply "$site/assets/"

wasm="$site/viewer_bg.wasm"
raw=$(stat -c %s "$wasm")
gzipped=$(gzip -9 -c "$wasm" | wc -c)
echo "built $site: viewer_bg.wasm $((raw / 1024)) KiB, $((gzipped / 1024)) KiB gzipped"

if [ -n "$serve" ]; then
    echo "serving $site on http://127.0.0.1:$port/"
    exec python3 -m http.server --bind 127.0.0.1 --directory "$site" "$port"
fi
