"""Times gsplat main's inference renderer (`gsplat.experimental.GaussianInferenceRenderer`,
"HiGS") on the angel-grid scenes that `gsplat_race.py` gives gsplat 1.5.3: the same
splat tensors and the same camera, both from `race_scene.py`, so that BENCHMARKS.md can
set ours, gsplat 1.5.3 and HiGS side by side from one run.

    python3 bench/higs_race.py assets/angel.ply --grid 4 7 9 --out DIR
    python3 bench/higs_race.py assets/angel.ply --grid 9 --width 3840 --height 2160 --out DIR
    python3 bench/higs_race.py sh3_K9.ply --sh3-grid 9 --out DIR
    python3 bench/higs_race.py --build-only          # compile the two extensions, then stop

What is timed: per K, the splats go once through `GaussianInferenceScene.from_gaussian_tensors`
(activated values, as `gsplat_race.py` hands them to `rasterization`: unit wxyz
quaternions, exp'd scales, sigmoid'd opacities, SH coefficients) and into a
`GaussianInferenceRenderer(scene, tile_size=8)`. That packing and the renderer's
buffer set-up happen once per scene, outside the timed region (their wall time is
reported as `pack_ms`). Then `renderer.render(viewmat=, K=, width=, height=)`, the
call a viewer makes each frame, runs 3 times to warm up and 30 times under CUDA events
(one start/end pair around each call, synchronised after each); the median, p10 and
p90 of those 30 are reported. The call includes the renderer's own per-frame work on
the host (it reads two counts back mid-frame), as a caller would see it.

The sources come from gsplat main (bench/higs_pack.sh carries them to the H200 in
.higs/gsplat.tar.xz, unpacked under /tmp/higs when `--gsplat-src` is not there).
Only two extensions are compiled, with torch.utils.cpp_extension: gsplat's scene
packer and the HiGS renderer, for this GPU's architecture (TORCH_CUDA_ARCH_LIST), -O3.
gsplat's own package (`gsplat/__init__.py`, whose import would JIT-build all of the
classic rasterizer) is never executed: `gsplat` is registered as a bare package over
the carried sources, and the two compiled modules are put where gsplat's lazy loaders
look first (`gsplat_scene_cuda`, `gsplat.experimental.render.kernels.csrc`), so
gsplat's own Python wrappers run unchanged on top of them.

Writes DIR/higs_K<k>.ppm (`--image-format png`: .png), the RGB of the renderer's RGBT
frame on its default black background, clamped to [0, 1] like gsplat_race.py's, and
DIR/higs.json (higs_sh3.json with --sh3-grid). The renderer exposes no intersection
counts, so `tile_pairs` and `visible` are null there.
"""

import argparse
import importlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from race_scene import (  # noqa: E402
    cuda_event_times, grid_tensors, intrinsics, load_splats, scene_name, write_image,
)

RENDER_DIR = "experimental/render/kernels/cuda"
HIGS_DIR = RENDER_DIR + "/csrc/gaussian_inference"
# The HiGS render extension: its pybind/torch-op entry point and the kernels it links.
RENDER_SOURCES = [RENDER_DIR + "/ext.cpp"] + [
    f"{HIGS_DIR}/{name}.cu"
    for name in ("GaussianRenderInferenceScene", "IntersectCommon", "IntersectMTFused", "MacroTileIntersect",
                 "MacroTileRasterize", "Projection", "SegmentedSort", "SHCompression", "SphericalHarmonics")
]
# The scene packer (host code calling ATen on CUDA tensors; no kernels of its own).
SCENE_SOURCES = ["scene/kernels/cuda/ext.cpp", "scene/kernels/cuda/csrc/gaussian_scene_pack.cpp"]
GLM_DIR = "cuda/csrc/third_party/glm"


def locate_sources(src, unpack_to):
    """The gsplat package directory to build from: `src` itself, or, when it is missing
    and `src`.tar.xz exists (bench/higs_pack.sh's archive), that archive unpacked under
    `unpack_to` (kept when it already holds the same commit, so builds are reused)."""
    if os.path.isdir(src):
        return os.path.abspath(src)
    archive = src.rstrip("/") + ".tar.xz"
    if not os.path.isfile(archive):
        sys.exit(f"no gsplat sources at {src} (nor {archive}); run bench/higs_pack.sh")
    with tarfile.open(archive) as tar:
        commit = tar.extractfile("COMMIT").read().decode().strip()
    stamp = os.path.join(unpack_to, "COMMIT")
    if not (os.path.isfile(stamp) and open(stamp).read().strip() == commit):
        shutil.rmtree(os.path.join(unpack_to, "gsplat"), ignore_errors=True)
        os.makedirs(unpack_to, exist_ok=True)
        with tarfile.open(archive) as tar:
            tar.extractall(unpack_to, filter="data")
    return os.path.join(unpack_to, "gsplat")


def gsplat_commit(src):
    path = os.path.join(os.path.dirname(os.path.abspath(src)), "COMMIT")
    return open(path).read().strip() if os.path.isfile(path) else "unknown"


def cuda_include_extras():
    """CUDA's per-target include folders (and CCCL's inside them) where they exist, as
    gsplat's own build adds them for toolkits laid out that way."""
    from torch.utils.cpp_extension import CUDA_HOME

    extras = []
    targets = os.path.join(CUDA_HOME or "", "targets")
    if CUDA_HOME and os.path.isdir(targets):
        for arch in sorted(os.listdir(targets)):
            include = os.path.join(targets, arch, "include")
            if os.path.isdir(include):
                extras.append(include)
                if os.path.isdir(os.path.join(include, "cccl")):
                    extras.append(os.path.join(include, "cccl"))
    return extras


def build_extensions(src, verbose):
    """Compiles (or reuses, from TORCH_EXTENSIONS_DIR) the scene packer and the HiGS
    renderer; returns (scene module, render module, build facts)."""
    from torch.utils import cpp_extension

    if not os.environ.get("TORCH_CUDA_ARCH_LIST"):
        major, minor = torch.cuda.get_device_capability()
        os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"
    os.environ.setdefault("MAX_JOBS", str(os.cpu_count() or 1))
    for path in RENDER_SOURCES + SCENE_SOURCES:
        if not os.path.isfile(os.path.join(src, path)):
            sys.exit(f"{src} lacks {path}")
    glm = os.path.join(src, GLM_DIR)
    if not os.path.isfile(os.path.join(glm, "glm", "glm.hpp")):
        sys.exit(f"no glm headers under {glm}")

    host_flags = ["-O3", "-DNDEBUG", "-std=c++20", "-Wno-attributes", "-Wno-unknown-pragmas"]
    cuda_flags = ["-O3", "-DNDEBUG", "-std=c++20", "--use_fast_math", "--expt-relaxed-constexpr",
                  "--diag-suppress=20012,186"]
    includes = [os.path.join(src, "cuda", "include"), os.path.join(src, "cuda", "csrc"),
                os.path.join(src, HIGS_DIR), glm] + cuda_include_extras()

    cache = os.environ.get("TORCH_EXTENSIONS_DIR", "torch's extension cache")
    print(f"higs: compiling gsplat's scene packer and HiGS renderer for sm_"
          f"{os.environ['TORCH_CUDA_ARCH_LIST'].replace('.', '')} with MAX_JOBS={os.environ['MAX_JOBS']} "
          f"(minutes the first time; kept in {cache})",
          flush=True)
    tic = time.perf_counter()
    # Two independent builds: the packer's two host files compile beside the renderer's ten.
    with ThreadPoolExecutor(max_workers=2) as pool:
        scene_job = pool.submit(
            cpp_extension.load,
            name="higs_race_scene_pack",
            sources=[os.path.join(src, p) for p in SCENE_SOURCES],
            extra_cflags=host_flags,
            with_cuda=True,
            verbose=verbose,
        )
        render_job = pool.submit(
            cpp_extension.load,
            name="higs_race_render",
            sources=[os.path.join(src, p) for p in RENDER_SOURCES],
            extra_cflags=host_flags,
            extra_cuda_cflags=cuda_flags,
            extra_include_paths=includes,
            with_cuda=True,
            verbose=verbose,
        )
        scene_ext, render_ext = scene_job.result(), render_job.result()
    seconds = time.perf_counter() - tic
    print(f"higs: extensions ready in {seconds:.1f} s", flush=True)
    facts = {"seconds": round(seconds, 1), "arch": os.environ["TORCH_CUDA_ARCH_LIST"],
             "cuda_flags": cuda_flags, "host_flags": host_flags,
             "scene_sources": SCENE_SOURCES, "render_sources": RENDER_SOURCES}
    return scene_ext, render_ext, facts


def import_higs(src, scene_ext, render_ext):
    """gsplat's GaussianInferenceScene and GaussianInferenceRenderer classes, from the
    carried sources, running on the two modules just built."""
    if "gsplat" in sys.modules:
        sys.exit("gsplat is already imported; higs_race.py must register its own")
    # A bare package over the carried sources: gsplat/__init__.py (and with it the
    # classic backend) never runs, whatever gsplat is installed elsewhere.
    spec = importlib.machinery.ModuleSpec("gsplat", None, is_package=True)
    spec.submodule_search_locations = [src]
    sys.modules["gsplat"] = importlib.util.module_from_spec(spec)

    # gsplat.scene's lazy loader imports `gsplat_scene_cuda` before trying to build it;
    # the HiGS loader does `from . import csrc` in gsplat.experimental.render.kernels.
    sys.modules["gsplat_scene_cuda"] = scene_ext
    kernels = importlib.import_module("gsplat.experimental.render.kernels")
    sys.modules[kernels.__name__ + ".csrc"] = render_ext
    kernels.csrc = render_ext

    scene_mod = importlib.import_module("gsplat.scene")
    renderer_mod = importlib.import_module("gsplat.experimental.render.components.gaussian_inference_renderer")
    render_backend = importlib.import_module("gsplat.experimental.render.kernels._backend")
    scene_backend = importlib.import_module("gsplat.scene.kernels._backend")
    if render_backend._C is not render_ext or scene_backend._SCENE_CUDA is not scene_ext:
        sys.exit("gsplat did not pick up the extensions built here")
    classic = [m for m in sys.modules if m in ("gsplat.csrc", "gsplat.cuda._backend", "gsplat.cuda._wrapper")]
    if classic:
        sys.exit(f"gsplat's classic backend was imported: {classic}")
    return scene_mod.GaussianInferenceScene, renderer_mod.GaussianInferenceRenderer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ply", nargs="?", default="assets/angel.ply")
    parser.add_argument("--grid", type=int, nargs="+", default=[4, 7, 9])
    parser.add_argument("--sh3-grid", type=int, default=None)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--out", default=".")
    parser.add_argument("--width", type=int, default=1920)
    parser.add_argument("--height", type=int, default=1080)
    parser.add_argument("--tile-size", type=int, choices=[8, 16], default=8)
    parser.add_argument("--image-format", choices=["ppm", "png"], default="ppm")
    parser.add_argument("--gsplat-src", default=".higs/gsplat",
                        help="gsplat main's package folder (or DIR.tar.xz from bench/higs_pack.sh)")
    parser.add_argument("--unpack-to", default="/tmp/higs", help="where DIR.tar.xz is unpacked")
    parser.add_argument("--build-only", action="store_true", help="compile and load the extensions, then stop")
    parser.add_argument("--verbose-build", action="store_true")
    args = parser.parse_args()

    device = torch.device("cuda")
    src = locate_sources(args.gsplat_src, args.unpack_to)
    commit = gsplat_commit(src)
    scene_ext, render_ext, build = build_extensions(src, args.verbose_build)
    Scene, Renderer = import_higs(src, scene_ext, render_ext)
    print(f"higs: gsplat {commit}", flush=True)
    if args.build_only:
        return

    splats = load_splats(args.ply, sh3=args.sh3_grid is not None)
    degree = splats["degree"]
    width, height = args.width, args.height
    K = torch.tensor(intrinsics(width, height), dtype=torch.float32, device=device)

    results = {"renderer": "gsplat GaussianInferenceRenderer (HiGS)", "gsplat_commit": commit,
               "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
               "width": width, "height": height, "tile_size": args.tile_size,
               "warmup": args.warmup, "runs": args.runs,
               "timed": "renderer.render(viewmat, K, width, height) per frame; scene packing and renderer "
                        "creation once per scene, outside the timing (pack_ms)",
               "build": build, "scenes": {}}
    # The renderer refuses to run with autograd recording.
    with torch.inference_mode():
        for k in [args.sh3_grid] if args.sh3_grid is not None else args.grid:
            name = scene_name(k, degree)
            t, viewmat = grid_tensors(splats, k, args.sh3_grid is not None, device)
            splat_count = int(t["means"].shape[0])
            torch.cuda.synchronize()
            tic = time.perf_counter()
            scene = Scene.from_gaussian_tensors(t["means"], t["quats"], t["scales"], t["opacities"], t["sh"],
                                                sh_degree=degree, sh_compression="none", id=name)
            renderer = Renderer(scene, tile_size=args.tile_size)
            torch.cuda.synchronize()
            pack_ms = (time.perf_counter() - tic) * 1e3
            del t

            def render():
                return renderer.render(viewmat=viewmat, K=K, width=width, height=height)

            for _ in range(args.warmup):
                render()
            torch.cuda.synchronize()
            times = cuda_event_times(render, args.runs)
            frame = render().frame  # [1, H, W, 4] half: R, G, B, transmittance
            torch.cuda.synchronize()

            median = float(np.median(times))
            p10, p90 = float(np.percentile(times, 10)), float(np.percentile(times, 90))
            print(f"{name}: {splat_count} splats, higs median {median:.3f} ms "
                  f"(p10 {p10:.3f}, p90 {p90:.3f}, {args.runs} runs); tile {args.tile_size}, "
                  f"{width}x{height}; scene packed once outside the timing in {pack_ms:.0f} ms", flush=True)
            results["scenes"][name] = {"splats": splat_count, "median_ms": median, "p10_ms": p10, "p90_ms": p90,
                                       "pack_ms": pack_ms, "visible": None, "tile_pairs": None}
            pixels = (frame[0, :, :, :3].float().clamp(0, 1) * 255).round().to(torch.uint8).cpu().numpy()
            write_image(f"{args.out}/higs_{name}", pixels, args.image_format)

            renderer.release()
            scene.release()
            del renderer, scene, frame
            torch.cuda.empty_cache()
    summary = "higs_sh3.json" if degree == 3 else "higs.json"
    with open(f"{args.out}/{summary}", "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
