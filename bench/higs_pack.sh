#!/usr/bin/env bash
# Prepares .higs/ for `HIGS=1 bench/h200_run.sh` (the lent H200 machine reaches nothing,
# so gsplat main's sources travel with the tree):
#   .higs/gsplat.tar.xz  only what bench/higs_race.py needs from gsplat main: the Python
#                        files it imports (gsplat.scene, gsplat.experimental.render and
#                        gsplat/_lazy_backend.py), the sources of the scene-packing and
#                        HiGS render extensions with the headers they include, glm's
#                        headers at the submodule's place, the two licences, COMMIT
#   .higs/COMMIT         the gsplat commit they come from (GLM_COMMIT: glm's)
#   .higs/FILES          what the archive holds
# Sources: git repositories (bare mirrors do) named by GSPLAT_GIT and GLM_GIT, else found
# under /work/.mirror; GSPLAT_REV picks the gsplat revision (HEAD). Without them this
# says so and leaves .higs as it is. Kept out of git through .git/info/exclude.
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p .git/info
grep -qx "/.higs/" .git/info/exclude 2>/dev/null || echo "/.higs/" >>.git/info/exclude

first_dir() { for d in "$@"; do [ -d "$d" ] && { echo "$d"; return; }; done; }
gsplat_git=${GSPLAT_GIT:-$(first_dir /work/.mirror/nerfstudio-project+gsplat/repo /work/.mirror/*gsplat*/repo)}
glm_git=${GLM_GIT:-$(first_dir /work/.mirror/g-truc+glm/repo /work/.mirror/*glm*/repo)}
rev=${GSPLAT_REV:-HEAD}
renderer=gsplat/experimental/render/components/gaussian_inference_renderer.py

if [ -z "$gsplat_git" ] || ! git -C "$gsplat_git" cat-file -e "$rev:$renderer" 2>/dev/null; then
    echo "higs_pack: no gsplat sources with $renderer at ${gsplat_git:-(none found)} $rev;" \
        "set GSPLAT_GIT to a clone or mirror of nerfstudio-project/gsplat. .higs not prepared." >&2
    exit 0
fi
commit=$(git -C "$gsplat_git" rev-parse "$rev^{commit}")
# glm is a submodule of gsplat: its pinned commit is the tree entry's object name.
glm_pin=$(git -C "$gsplat_git" ls-tree "$commit" gsplat/cuda/csrc/third_party/glm | awk '$2 == "commit" {print $3}')
if [ -z "$glm_git" ] || ! git -C "$glm_git" rev-parse -q --verify HEAD >/dev/null 2>&1; then
    echo "higs_pack: no glm repository (set GLM_GIT to a clone or mirror of g-truc/glm). .higs not prepared." >&2
    exit 0
fi
glm_rev=$glm_pin
if [ -z "$glm_rev" ] || ! git -C "$glm_git" cat-file -e "$glm_rev^{commit}" 2>/dev/null; then
    glm_rev=$(git -C "$glm_git" rev-parse HEAD)
    echo "higs_pack: glm's pinned commit ${glm_pin:-(none)} is not in $glm_git; taking its HEAD $glm_rev" >&2
fi

kernels=gsplat/experimental/render/kernels
paths=(
    LICENSE
    gsplat/_lazy_backend.py
    gsplat/scene/__init__.py
    gsplat/scene/sh_compression.py
    gsplat/scene/components/__init__.py
    gsplat/scene/components/base.py
    gsplat/scene/components/gaussian_scene.py
    gsplat/scene/components/gaussian_inference_scene.py
    gsplat/scene/kernels/__init__.py
    gsplat/scene/kernels/_backend.py
    gsplat/scene/kernels/gaussian_inference_ops.py
    gsplat/scene/kernels/cuda/ext.cpp
    gsplat/scene/kernels/cuda/csrc
    gsplat/experimental/__init__.py
    gsplat/experimental/render/__init__.py
    gsplat/experimental/render/_common.py
    gsplat/experimental/render/types.py
    gsplat/experimental/render/components/__init__.py
    gsplat/experimental/render/components/gaussian_inference_renderer.py
    $kernels/__init__.py
    $kernels/_backend.py
    $kernels/gaussian_inference_ops.py
    $kernels/cuda/ext.cpp
    $kernels/cuda/csrc/gaussian_inference
    gsplat/cuda/csrc/Config.h
    gsplat/cuda/include/Common.h
    gsplat/cuda/include/Utils.cuh
    gsplat/cuda/include/Utils.h
)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# A mirror may lack blobs it does not need here, and git archive then complains about
# them on stderr: its messages are shown only when it fails.
archive() { # REPO REV DEST PATHS...
    local repo=$1 rev=$2 dest=$3
    shift 3
    git -C "$repo" archive --format=tar "$rev" -- "$@" >"$stage/part.tar" 2>"$stage/err" ||
        { cat "$stage/err" >&2; exit 1; }
    tar -x -C "$dest" -f "$stage/part.tar" && rm "$stage/part.tar"
    for p in "$@"; do
        [ -e "$dest/$p" ] || { echo "higs_pack: $p missing from $repo $rev" >&2; exit 1; }
    done
}
archive "$gsplat_git" "$commit" "$stage" "${paths[@]}"
mv "$stage/LICENSE" "$stage/LICENSE.gsplat"
glm_dst=$stage/gsplat/cuda/csrc/third_party/glm
mkdir -p "$glm_dst"
archive "$glm_git" "$glm_rev" "$glm_dst" glm copying.txt
rm -f "$stage/err"
# Headers only (glm's folder also holds a CMakeLists.txt, a .cpp and a C++ module file).
find "$glm_dst/glm" -type f ! -name '*.hpp' ! -name '*.inl' ! -name '*.h' -delete
echo "$commit" >"$stage/COMMIT"
echo "$glm_rev" >"$stage/GLM_COMMIT"

mkdir -p .higs
rm -rf .higs/gsplat .higs/gsplat.tar.xz
(cd "$stage" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) >.higs/FILES
(cd "$stage" && XZ_OPT=-9 tar --owner=0 --group=0 --numeric-owner --mtime=@946684800 -cJf - -T "$OLDPWD/.higs/FILES") \
    >.higs/gsplat.tar.xz
cp "$stage/COMMIT" "$stage/GLM_COMMIT" .higs/
echo "higs_pack: gsplat $commit, glm $glm_rev: $(wc -l <.higs/FILES) files," \
    "$(du -cb "$stage" | tail -1 | cut -f1) bytes unpacked, $(du -cb .higs | tail -1 | cut -f1) bytes in .higs"
