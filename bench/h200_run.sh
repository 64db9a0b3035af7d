#!/usr/bin/env bash
# One measuring run on the lent H200 machine (see BENCHMARKS.md). Expects, carried:
#   .gl/   the Vulkan loader debs     .whl/  gsplat's wheel
#   .bin/bench.xz  the release `bench` example, stripped and xz-compressed
#   .bin/COMMIT    the commit it was built from (`git rev-parse --short HEAD`)
#   .higs/         gsplat main's sources for HiGS (bench/higs_pack.sh), with HIGS=1
# and writes its results under $OUT.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] && export VK_DRIVER_FILES=$icd
export WGPU_BACKEND=vulkan XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p -m 700 $XDG_RUNTIME_DIR
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $OUT/gpu.txt
# The binary's own commit (written beside it when it was built): the lent machine's
# copy of .git can be older than the working tree it carries.
echo "bench built from $(cat .bin/COMMIT 2>/dev/null || echo unknown)" | tee -a $OUT/gpu.txt
python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('.bin/bench.xz'), open('/tmp/bench','wb'))" && chmod +x /tmp/bench
# BINDING_MIB: run under storage bindings of that size (views split into bands).
limit=""; [ -n "${BINDING_MIB:-}" ] && limit="--max-binding-mib $BINDING_MIB"
for k in ${GRIDS:-4 7 9}; do
    png=""; [[ " ${PNG_GRIDS:-9} " == *" $k "* ]] && png="--png $OUT/ours_K$k.png"
    /tmp/bench --angel-grid $k --frames ${FRAMES:-200} --warmup 30 --json $OUT/ours_K$k.json $png $limit 2>&1 \
        | grep -v "^$" | tee -a $OUT/run.log
done
if [ -z "${SKIP_GSPLAT:-}" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
    PYTHONUNBUFFERED=1 python3 bench/gsplat_race.py assets/angel.ply --grid ${GRIDS:-4 7 9} --out /tmp 2>&1 \
        | grep -v Warning | tee -a $OUT/run.log
    cp /tmp/gsplat.json $OUT/ 2>/dev/null
    [ -f /tmp/gsplat_K9.ppm ] && cp /tmp/gsplat_K9.ppm $OUT/
fi
# HIGS=1: gsplat main's GaussianInferenceRenderer (HiGS, tile size 8) on the same grids
# with the same camera, built from .higs/gsplat.tar.xz (unpacked under /tmp/higs): only
# its scene packer and renderer are compiled (minutes the first time; kept in
# /tmp/torch_ext while the machine stays warm), never gsplat's classic rasterizer.
higs=""
if [ -n "${HIGS:-}" ]; then
    if [ -f .higs/gsplat.tar.xz ]; then
        higs=1
        echo "HiGS from gsplat $(cat .higs/COMMIT 2>/dev/null || echo unknown)" | tee -a $OUT/gpu.txt
    else
        echo "HIGS is set but .higs/gsplat.tar.xz was not carried (bench/higs_pack.sh): no HiGS" | tee -a $OUT/run.log
    fi
fi
# higs_race PREFIX ARGS...: bench/higs_race.py, its log lines led by PREFIX.
higs_race() {
    local prefix=$1
    shift
    TORCH_EXTENSIONS_DIR=/tmp/torch_ext MAX_JOBS=16 PYTHONUNBUFFERED=1 python3 bench/higs_race.py \
        --gsplat-src .higs/gsplat --unpack-to /tmp/higs "$@" 2>&1 | grep -v Warning | sed "s/^/$prefix/" \
        | tee -a $OUT/run.log
}
if [ -n "$higs" ]; then
    higs_race "" assets/angel.ply --grid ${GRIDS:-4 7 9} --out /tmp
    cp /tmp/higs.json $OUT/ 2>/dev/null
    [ -f /tmp/higs_K9.ppm ] && cp /tmp/higs_K9.ppm $OUT/
fi
# HIGS_4K_GRIDS: these K again at 3840×2160 (lines led by "4k: "), ours, gsplat 1.5.3 and,
# with HIGS=1, HiGS one after the other: *_4k.json, and PNG images only for the K in
# PNG_4K_GRIDS (none by default: three 4K images pass the 16 MiB a returned file may
# have, and the archive with them did not come back on 2026-12-04).
if [ -n "${HIGS_4K_GRIDS:-}" ]; then
    mkdir -p /tmp/4k
    for k in $HIGS_4K_GRIDS; do
        png=""; [[ " ${PNG_4K_GRIDS:-} " == *" $k "* ]] && png="--png $OUT/ours_K${k}_4k.png"
        /tmp/bench --angel-grid $k --width 3840 --height 2160 --frames ${FRAMES:-200} --warmup 30 \
            --json $OUT/ours_K${k}_4k.json $png $limit 2>&1 | grep -v "^$" | sed "s/^/4k: /" | tee -a $OUT/run.log
    done
    if [ -z "${SKIP_GSPLAT:-}" ]; then
        PYTHONUNBUFFERED=1 python3 bench/gsplat_race.py assets/angel.ply --grid $HIGS_4K_GRIDS \
            --width 3840 --height 2160 --image-format png --out /tmp/4k 2>&1 \
            | grep -v Warning | sed "s/^/4k: /" | tee -a $OUT/run.log
        cp /tmp/4k/gsplat.json $OUT/gsplat_4k.json 2>/dev/null
    fi
    if [ -n "$higs" ]; then
        higs_race "4k: " assets/angel.ply --grid $HIGS_4K_GRIDS --width 3840 --height 2160 \
            --image-format png --out /tmp/4k
        cp /tmp/4k/higs.json $OUT/higs_4k.json 2>/dev/null
    fi
    for k in ${PNG_4K_GRIDS:-}; do
        for who in gsplat higs; do
            [ -f /tmp/4k/${who}_K$k.png ] && cp /tmp/4k/${who}_K$k.png $OUT/${who}_K${k}_4k.png
        done
    done
fi
# COMPOSITE_GRIDS: the angel grid at these K, 1080p and 4K, with an HDR main texture
# composited by the fragment pass (--hdr) and by the compute pass
# (--hdr --compute-composite), one after the other: the composite stage of each.
for k in ${COMPOSITE_GRIDS:-}; do
    for size in "1920 1080" "3840 2160"; do
        set -- $size
        for how in "--hdr" "--hdr --compute-composite"; do
            name=$(echo "$how" | tr -d ' -')
            /tmp/bench --angel-grid $k --width $1 --height $2 $how --frames ${FRAMES:-200} --warmup 30 \
                --json $OUT/ours_K${k}_${2}p_$name.json $limit 2>&1 | grep -v "^$" \
                | sed "s/^/composite ${2}p $name: /" | tee -a $OUT/run.log
        done
    done
done
# SH3_GRIDS: the SH3 grid (one cloud of distinct degree-3 splats) at these K, both sides
# reading the very same data: bench writes it, gsplat reads that file.
for k in ${SH3_GRIDS:-}; do
    /tmp/bench --sh3-grid $k --frames ${FRAMES:-200} --warmup 30 --json $OUT/ours_SH3_K$k.json \
        --write-ply /tmp/sh3_K$k.ply --png /tmp/ours_SH3_K$k.png $limit 2>&1 \
        | grep -v "^$" | tee -a $OUT/run.log
    if [ -z "${SKIP_GSPLAT:-}" ]; then
        PYTHONUNBUFFERED=1 python3 bench/gsplat_race.py /tmp/sh3_K$k.ply --sh3-grid $k --out /tmp 2>&1 \
            | grep -v Warning | tee -a $OUT/run.log
        cp /tmp/gsplat_sh3.json $OUT/gsplat_sh3_K$k.json 2>/dev/null
    fi
    if [ -n "$higs" ]; then
        higs_race "" /tmp/sh3_K$k.ply --sh3-grid $k --out /tmp
        cp /tmp/higs_sh3.json $OUT/higs_sh3_K$k.json 2>/dev/null
    fi
done
# SH3_STORAGE: the SH3 grid at K = 9 again with these layouts (half-sh, compact), each
# with its image, for the layouts' cost in time, memory and PSNR.
for layout in ${SH3_STORAGE:-}; do
    /tmp/bench --sh3-grid 9 --$layout --frames ${FRAMES:-200} --warmup 30 \
        --json $OUT/ours_SH3_K9_$layout.json --png /tmp/ours_SH3_K9_$layout.png $limit 2>&1 \
        | grep -v "^$" | tee -a $OUT/run.log
done
# PICK_GRIDS: the angel grid at these K again, picking 16 pointer pixels every frame.
for k in ${PICK_GRIDS:-}; do
    /tmp/bench --angel-grid $k --pick 16 --frames ${FRAMES:-200} --warmup 30 \
        --json $OUT/ours_K${k}_pick.json $limit 2>&1 | grep -v "^$" | tee -a $OUT/run.log
done
# WHOLE_FRAME_GRIDS: the whole frame (wall time per App::update) at these K.
for k in ${WHOLE_FRAME_GRIDS:-}; do
    /tmp/bench --angel-grid $k --whole-frame --frames ${FRAMES:-200} --warmup 30 \
        --json $OUT/ours_K${k}_frame.json $limit 2>&1 | grep -v "^$" | tee -a $OUT/run.log
done
# WHOLE_FRAME_CLOUDS: the whole frame with this many clouds of 5,000 splats each.
for n in ${WHOLE_FRAME_CLOUDS:-}; do
    /tmp/bench --cloud-grid $n --whole-frame --frames ${FRAMES:-200} --warmup 30 \
        --json $OUT/ours_clouds${n}_frame.json $limit 2>&1 | grep -v "^$" | tee -a $OUT/run.log
done
# BASE: the same grids with .bin/bench_base.xz, a bench built from an earlier commit
# (.bin/BASE_COMMIT), run in the same lease so the two are compared on one machine.
if [ -n "${BASE:-}" ] && [ -f .bin/bench_base.xz ]; then
    python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('.bin/bench_base.xz'), open('/tmp/bench_base','wb'))" && chmod +x /tmp/bench_base
    echo "base bench built from $(cat .bin/BASE_COMMIT 2>/dev/null || echo unknown)" | tee -a $OUT/gpu.txt
    for k in ${GRIDS:-4 7 9}; do
        /tmp/bench_base --angel-grid $k --frames ${FRAMES:-200} --warmup 30 --json $OUT/base_K$k.json $limit 2>&1 \
            | grep -v "^$" | sed 's/^/base: /' | tee -a $OUT/run.log
    done
    for k in ${SH3_GRIDS:-}; do
        /tmp/bench_base --sh3-grid $k --frames ${FRAMES:-200} --warmup 30 --json $OUT/base_SH3_K$k.json $limit 2>&1 \
            | grep -v "^$" | sed 's/^/base: /' | tee -a $OUT/run.log
    done
    # And at 4K for the K in HIGS_4K_GRIDS.
    for k in ${HIGS_4K_GRIDS:-}; do
        /tmp/bench_base --angel-grid $k --width 3840 --height 2160 --frames ${FRAMES:-200} --warmup 30 \
            --json $OUT/base_K${k}_4k.json $limit 2>&1 | grep -v "^$" | sed 's/^/base 4k: /' | tee -a $OUT/run.log
    done
fi
# DISPLAY_GRIDS: the angel grid drawn as a window shows it (sRGB target, the default
# composite over a copy of the scene).
for k in ${DISPLAY_GRIDS:-}; do
    /tmp/bench --angel-grid $k --display --frames ${FRAMES:-200} --warmup 30 \
        --json $OUT/ours_K${k}_display.json $limit 2>&1 | grep -v "^$" | tee -a $OUT/run.log
done
# SORT_STRESS: the one-sweep and classic sorts against the CPU on this many key sets
# each (.bin/gpu_sort.xz, the tests/gpu_sort.rs binary).
if [ -n "${SORT_STRESS:-}" ] && [ -f .bin/gpu_sort.xz ]; then
    python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('.bin/gpu_sort.xz'), open('/tmp/gpu_sort','wb'))" && chmod +x /tmp/gpu_sort
    BEVY_SPLAT_SORT_STRESS=$SORT_STRESS BEVY_SPLAT_TEST_ONESWEEP=1 /tmp/gpu_sort --nocapture --test-threads 1 2>&1 \
        | grep -v "^$" | tee $OUT/gpu_sort.log | tail -40
fi
cp /tmp/ours_SH3_*.png /tmp/gsplat_SH3_*.ppm /tmp/higs_SH3_*.ppm $OUT/ 2>/dev/null
# LOD_GRIDS: the angel grid at these K drawn exactly and then through the level-of-detail
# trees at each of LOD_BUDGETS (splats), each image's PSNR against the exact one; with
# LOD_PATH=N each run then flies the camera N frames into the grid and reports the
# frame-to-frame image change (popping adds to it).
for k in ${LOD_GRIDS:-}; do
    /tmp/bench --angel-grid $k --frames ${FRAMES:-200} --warmup 30 \
        --json $OUT/ours_K${k}_exact.json --png /tmp/exact_K$k.png ${LOD_PATH:+--camera-path $LOD_PATH} $limit 2>&1 \
        | grep -v "^$" | tee -a $OUT/run.log
    for budget in ${LOD_BUDGETS:-1000000 2500000 5000000 10000000}; do
        /tmp/bench --angel-grid $k --budget $budget --frames ${FRAMES:-200} --warmup 30 \
            --json $OUT/ours_K${k}_lod$budget.json --psnr-against /tmp/exact_K$k.png \
            --png /tmp/lod_K${k}_$budget.png ${LOD_PATH:+--camera-path $LOD_PATH} $limit 2>&1 \
            | grep -v "^$" | tee -a $OUT/run.log
    done
    cp /tmp/exact_K$k.png /tmp/lod_K${k}_*.png $OUT/ 2>/dev/null
done
# SHADOW_GRIDS: the angel grid at these K with a light the clouds cast shadows from,
# a directional one (4 cascades of 2048²) and a point one (6 faces of 1024²): each
# shadow view's GPU time beside the camera's own.
# With SHADOW_BASE=1 and .bin/bench_shadow_base.xz, that bench (an earlier way of drawing
# the shadow views, .bin/SHADOW_BASE_COMMIT) runs the same, beside it; without that file,
# .bin/bench_base.xz (.bin/BASE_COMMIT), so one base binary need not travel twice.
shadow_base=.bin/bench_shadow_base.xz; shadow_base_commit=.bin/SHADOW_BASE_COMMIT
[ -f $shadow_base ] || { shadow_base=.bin/bench_base.xz; shadow_base_commit=.bin/BASE_COMMIT; }
if [ -n "${SHADOW_BASE:-}" ] && [ -f $shadow_base ]; then
    python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('$shadow_base'), open('/tmp/bench_shadow_base','wb'))" \
        && chmod +x /tmp/bench_shadow_base
    echo "shadow base bench: $(cat $shadow_base_commit 2>/dev/null || echo unknown)" | tee -a $OUT/gpu.txt
fi
# The scene stands still: ours draws every view anew every frame only with
# --redraw-shadows (what a moving light or camera costs, and what the base binaries,
# which keep nothing, always do); SHADOW_KEPT=1 runs it once more without, where the
# views draw from the surfaces they kept.
redraw=--redraw-shadows
# SHADOW_BASE_REDRAW=1: the base binary keeps surfaces too (d0f5889 and later), so it
# redraws as ours does. SHADOW_LIGHTS: which lights (both by default).
base_redraw=""; [ -n "${SHADOW_BASE_REDRAW:-}" ] && base_redraw=$redraw
for k in ${SHADOW_GRIDS:-}; do
    for light in ${SHADOW_LIGHTS:-directional point}; do
        /tmp/bench --angel-grid $k --shadow-light $light $redraw --frames ${FRAMES:-200} --warmup 30 \
            --json $OUT/ours_K${k}_shadow_$light.json $limit 2>&1 | grep -v "^$" | tee -a $OUT/run.log
        [ -n "${SHADOW_KEPT:-}" ] && /tmp/bench --angel-grid $k --shadow-light $light --frames ${FRAMES:-200} \
            --warmup 30 --json $OUT/ours_K${k}_shadow_${light}_kept.json $limit 2>&1 | grep -v "^$" \
            | sed 's/^/kept: /' | tee -a $OUT/run.log
        # SHADOW_LOD=TEXELS: again with SplatLod on the light (cuts down to that many texels).
        [ -n "${SHADOW_LOD:-}" ] && /tmp/bench --angel-grid $k --shadow-light $light $redraw --shadow-lod $SHADOW_LOD \
            --frames ${FRAMES:-200} --warmup 30 --json $OUT/ours_K${k}_shadow_${light}_lod.json $limit 2>&1 \
            | grep -v "^$" | sed 's/^/lod: /' | tee -a $OUT/run.log
        # SHADOW_SCALE=N: again with the splats drawn at 1/N of the maps' resolution a side
        # (SplatShadowScale), and with SHADOW_LOD so too.
        [ -n "${SHADOW_SCALE:-}" ] && /tmp/bench --angel-grid $k --shadow-light $light $redraw \
            --shadow-scale $SHADOW_SCALE --frames ${FRAMES:-200} --warmup 30 \
            --json $OUT/ours_K${k}_shadow_${light}_scale.json $limit 2>&1 | grep -v "^$" \
            | sed "s/^/scale $SHADOW_SCALE: /" | tee -a $OUT/run.log
        [ -n "${SHADOW_SCALE:-}" ] && [ -n "${SHADOW_LOD:-}" ] && /tmp/bench --angel-grid $k --shadow-light $light \
            $redraw --shadow-scale $SHADOW_SCALE --shadow-lod $SHADOW_LOD --frames ${FRAMES:-200} --warmup 30 \
            --json $OUT/ours_K${k}_shadow_${light}_scale_lod.json $limit 2>&1 | grep -v "^$" \
            | sed "s/^/scale $SHADOW_SCALE, lod: /" | tee -a $OUT/run.log
        # SHADOW_WHOLE_TILES=1: again with every shadow-map tile drawn by one workgroup
        # (no chunks of long lists), the same binary.
        [ -n "${SHADOW_WHOLE_TILES:-}" ] && /tmp/bench --angel-grid $k --shadow-light $light $redraw --whole-tiles \
            --frames ${FRAMES:-200} --warmup 30 --json $OUT/ours_K${k}_shadow_${light}_whole.json $limit 2>&1 \
            | grep -v "^$" | sed 's/^/whole tiles: /' | tee -a $OUT/run.log
        [ -n "${SHADOW_WHOLE_TILES:-}" ] && [ -n "${SHADOW_LOD:-}" ] && /tmp/bench --angel-grid $k \
            --shadow-light $light $redraw --shadow-lod $SHADOW_LOD --whole-tiles --frames ${FRAMES:-200} --warmup 30 \
            --json $OUT/ours_K${k}_shadow_${light}_lod_whole.json $limit 2>&1 \
            | grep -v "^$" | sed 's/^/lod, whole tiles: /' | tee -a $OUT/run.log
        # SHADOW_STAGES=1: again with every stage of every shadow view timed (and with
        # SHADOW_LOD, once more with the light's cuts: what a view's floor is made of).
        [ -n "${SHADOW_STAGES:-}" ] && /tmp/bench --angel-grid $k --shadow-light $light $redraw --shadow-stages \
            --frames ${FRAMES:-200} --warmup 30 --json $OUT/ours_K${k}_shadow_${light}_stages.json $limit 2>&1 \
            | grep -v "^$" | tee -a $OUT/run.log
        [ -n "${SHADOW_STAGES:-}" ] && [ -n "${SHADOW_LOD:-}" ] && /tmp/bench --angel-grid $k \
            --shadow-light $light $redraw --shadow-lod $SHADOW_LOD --shadow-stages --frames ${FRAMES:-200} --warmup 30 \
            --json $OUT/ours_K${k}_shadow_${light}_lod_stages.json $limit 2>&1 \
            | grep -v "^$" | sed 's/^/lod, stages: /' | tee -a $OUT/run.log
        [ -n "${SHADOW_STAGES:-}" ] && [ -n "${SHADOW_LOD:-}" ] && [ -n "${SHADOW_SCALE:-}" ] && /tmp/bench \
            --angel-grid $k --shadow-light $light $redraw --shadow-lod $SHADOW_LOD --shadow-scale $SHADOW_SCALE \
            --shadow-stages --frames ${FRAMES:-200} --warmup 30 \
            --json $OUT/ours_K${k}_shadow_${light}_scale_lod_stages.json $limit 2>&1 \
            | grep -v "^$" | sed "s/^/scale $SHADOW_SCALE, lod, stages: /" | tee -a $OUT/run.log
        [ -x /tmp/bench_shadow_base ] && /tmp/bench_shadow_base --angel-grid $k --shadow-light $light $base_redraw \
            --frames ${FRAMES:-200} --warmup 30 --json $OUT/shadow_base_K${k}_$light.json $limit 2>&1 \
            | grep -v "^$" | sed 's/^/shadow base: /' | tee -a $OUT/run.log
        [ -x /tmp/bench_shadow_base ] && [ -n "${SHADOW_LOD:-}" ] && /tmp/bench_shadow_base --angel-grid $k \
            --shadow-light $light $base_redraw --shadow-lod $SHADOW_LOD --frames ${FRAMES:-200} --warmup 30 \
            --json $OUT/shadow_base_K${k}_${light}_lod.json $limit 2>&1 \
            | grep -v "^$" | sed 's/^/shadow base, lod: /' | tee -a $OUT/run.log
    done
done
# LIGHTING_GRIDS: the angel grid at these K under the directional light of SHADOW_GRIDS,
# every cloud `Shadowed`, then `Lit` (`--lighting`): the camera's preprocess stage then
# holds the light pass; the same grid without lighting is SHADOW_GRIDS' run.
for k in ${LIGHTING_GRIDS:-}; do
    for mode in shadowed lit; do
        /tmp/bench --angel-grid $k --shadow-light directional --lighting $mode --frames ${FRAMES:-200} \
            --warmup 30 --json $OUT/ours_K${k}_lighting_$mode.json $limit 2>&1 | grep -v "^$" \
            | sed "s/^/lighting $mode: /" | tee -a $OUT/run.log
    done
done
# At most 8 files come back from the lent machine: gpu.txt, the logs, and everything
# else (the JSON reports, ours, gsplat's and HiGS's images, the SH3 layouts' images, the
# level-of-detail, shadow and lighting runs) in one archive, packed last (2026-12-05: a
# shadow run's ten reports written after an earlier packing did not come back);
# bench/image_diff.py compares the images.
(cd $OUT && tar czf results.tgz --remove-files $(ls | grep -vx -e gpu.txt -e run.log -e main.log -e gpu_sort.log -e results.tgz))
ls -la $OUT
