"""Times gsplat (the CUDA reference rasterizer) on the angel-grid scenes of
`examples/bench.rs`, with the same camera, for the ours/gsplat ratio in BENCHMARKS.md.

    python3 bench/gsplat_race.py assets/angel.ply --grid 4 7 9 --out DIR
    python3 bench/gsplat_race.py assets/angel.ply --grid 9 --width 3840 --height 2160 --out DIR
    python3 bench/gsplat_race.py sh3_K9.ply --sh3-grid 9 --out DIR

`--sh3-grid K` renders the PLY as it is (the SH3 grid that `bench --sh3-grid K
--write-ply` wrote: one cloud, degree 3) from the K×K grid's camera. The scene and the
camera come from `race_scene.py`, shared with `higs_race.py`.

Needs torch with CUDA and gsplat 1.5.3. Prints, per K, the median of 30 timed
renders (CUDA events, after warm-up) and writes DIR/gsplat_K<k>.ppm (`--image-format
png`: .png) and a JSON summary, so the images can be compared with ours.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch
from gsplat import rasterization

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# read_ply and bevy_looking_at stay importable from here (gsplat_reference.py uses read_ply).
from race_scene import (  # noqa: E402, F401
    bevy_looking_at, cuda_event_times, grid_tensors, intrinsics, load_splats, read_ply, scene_name,
    write_image,
)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ply")
    parser.add_argument("--grid", type=int, nargs="+", default=[4, 7, 9])
    parser.add_argument("--sh3-grid", type=int, default=None)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--out", default=".")
    parser.add_argument("--width", type=int, default=1920)
    parser.add_argument("--height", type=int, default=1080)
    parser.add_argument("--image-format", choices=["ppm", "png"], default="ppm")
    args = parser.parse_args()

    device = torch.device("cuda")
    splats = load_splats(args.ply, sh3=args.sh3_grid is not None)
    degree = splats["degree"]

    width, height = args.width, args.height
    ks = torch.tensor(intrinsics(width, height), dtype=torch.float32, device=device)

    results = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "width": width, "height": height, "scenes": {}}
    for k in [args.sh3_grid] if args.sh3_grid is not None else args.grid:
        t, viewmat = grid_tensors(splats, k, args.sh3_grid is not None, device)
        t_means, t_quats, t_scales, t_opac, t_sh = t["means"], t["quats"], t["scales"], t["opacities"], t["sh"]
        viewmats = viewmat[None]
        del t

        def render():
            return rasterization(t_means, t_quats, t_scales, t_opac, t_sh, viewmats, ks[None], width, height,
                                 sh_degree=degree, packed=False)

        for _ in range(10):
            image, _, meta = render()
        torch.cuda.synchronize()
        # gsplat's own (splat, tile) pairs, to set beside ours: its intersection list.
        pairs = int(meta["flatten_ids"].numel()) if "flatten_ids" in meta else None
        radii = meta.get("radii")
        visible = int((radii > 0).reshape(radii.shape[0], radii.shape[1], -1).all(-1).sum()) \
            if radii is not None else None
        times = cuda_event_times(render, args.runs)
        median = float(np.median(times))
        name = scene_name(k, degree)
        print(f"{name}: {t_means.shape[0]} splats, gsplat median {median:.3f} ms "
              f"(p10 {np.percentile(times, 10):.3f}, p90 {np.percentile(times, 90):.3f}, {args.runs} runs); "
              f"visible {visible}, tile pairs {pairs}")
        results["scenes"][name] = {"splats": int(t_means.shape[0]), "median_ms": median,
                                      "visible": visible, "tile_pairs": pairs,
                                      "p10_ms": float(np.percentile(times, 10)),
                                      "p90_ms": float(np.percentile(times, 90))}
        pixels = (image[0].clamp(0, 1) * 255).round().to(torch.uint8).cpu().numpy()
        write_image(f"{args.out}/gsplat_{name}", pixels, args.image_format)
    summary = "gsplat_sh3.json" if degree == 3 else "gsplat.json"
    with open(f"{args.out}/{summary}", "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
