#!/usr/bin/env bash
# Prepares, on the build machine, what `bench/h200_run.sh` expects to be carried to the
# lent H200 machine (which reaches no registry):
#   .bin/bench.xz, .bin/COMMIT  the release `bench` example, stripped and xz-compressed,
#                               and the commit it was built from
#   .gl/                        the Vulkan loader and GL dispatch debs (amd64)
#   .whl/                       gsplat 1.5.3's wheel (it JIT-builds its CUDA there)
#   .higs/                      gsplat main's sources for HiGS (bench/higs_pack.sh; skipped,
#                               with a note, when the gsplat and glm repositories are not here)
# All four are kept out of git through .git/info/exclude. Together with the tracked
# tree they must stay under the device tool's 64 MiB: the tracked tree alone is about
# 55 MB (43 MB of it tests/data, which no H200 run reads), so move tests/data out of
# the working tree for the length of the call and back after it (2026-12-04).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"

mkdir -p .git/info
for dir in .bin .gl .whl .higs; do
    grep -qx "/$dir/" .git/info/exclude 2>/dev/null || echo "/$dir/" >>.git/info/exclude
done

cargo build --release --locked --example bench
mkdir -p .bin
strip -o /tmp/bench.stripped "$target/release/examples/bench"
xz -T0 -6 -c /tmp/bench.stripped >.bin/bench.xz
git rev-parse --short HEAD >.bin/COMMIT
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
    echo "note: the tree has uncommitted changes; .bin/COMMIT names only their base" >&2

if ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
    mkdir -p .gl /tmp/amd64/partial
    apt_amd64=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
    apt-get "${apt_amd64[@]}" update -qq
    (cd .gl && apt-get "${apt_amd64[@]}" download \
        libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi

if ! ls .whl/gsplat-1.5.3-*.whl >/dev/null 2>&1; then
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 -d .whl gsplat==1.5.3
fi

bash bench/higs_pack.sh

du -cb .bin .gl .whl $([ -d .higs ] && echo .higs) | tail -1
