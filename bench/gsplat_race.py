"""Times gsplat (the CUDA reference rasterizer) on the angel-grid scenes of
`examples/bench.rs`, with the same camera, for the ours/gsplat ratio in BENCHMARKS.md.

    python3 bench/gsplat_race.py assets/angel.ply --grid 4 7 9 --out DIR
    python3 bench/gsplat_race.py sh3_K9.ply --sh3-grid 9 --out DIR

`--sh3-grid K` renders the PLY as it is (the SH3 grid that `bench --sh3-grid K
--write-ply` wrote: one cloud, degree 3) from the K×K grid's camera.

Needs torch with CUDA and gsplat 1.5.3. Prints, per K, the median of 30 timed
renders (CUDA events, after warm-up) and writes DIR/gsplat_K<k>.png and a JSON
summary, so the images can be compared with ours.
"""

import argparse
import json
import math
import sys

import numpy as np
import torch
from gsplat import rasterization


def read_ply(path):
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode("ascii").splitlines()
    count = 0
    names = []
    for line in header:
        parts = line.split()
        if parts[:2] == ["element", "vertex"]:
            count = int(parts[2])
        elif parts[:1] == ["property"]:
            if parts[1] != "float":
                sys.exit(f"only float properties are handled here, got {line}")
            names.append(parts[2])
    if "format binary_little_endian 1.0" not in header:
        sys.exit("only binary little-endian PLY is handled here")
    table = np.frombuffer(data, dtype="<f4", count=count * len(names), offset=end)
    table = table.reshape(count, len(names))
    return {name: table[:, i] for i, name in enumerate(names)}


def bevy_looking_at(eye, target, up):
    """World-to-camera (OpenCV axes) for Bevy's Transform::from_translation(eye).looking_at."""
    eye = np.asarray(eye, dtype=np.float64)
    forward = np.asarray(target, dtype=np.float64) - eye
    forward /= np.linalg.norm(forward)
    back = -forward
    right = np.cross(up, back)
    right /= np.linalg.norm(right)
    true_up = np.cross(back, right)
    # OpenCV camera axes in world: x = right, y = -up, z = forward.
    rotation = np.stack([right, -true_up, forward])  # rows: camera axes
    viewmat = np.eye(4)
    viewmat[:3, :3] = rotation
    viewmat[:3, 3] = -rotation @ eye
    return viewmat


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ply")
    parser.add_argument("--grid", type=int, nargs="+", default=[4, 7, 9])
    parser.add_argument("--sh3-grid", type=int, default=None)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()

    v = read_ply(args.ply)
    device = torch.device("cuda")
    base_means = np.stack([v["x"], v["y"], v["z"]], axis=1)
    quats = np.stack([v[f"rot_{i}"] for i in range(4)], axis=1)
    quats = quats / np.linalg.norm(quats, axis=1, keepdims=True)
    scales = np.exp(np.stack([v[f"scale_{i}"] for i in range(3)], axis=1))
    opacities = 1.0 / (1.0 + np.exp(-v["opacity"]))
    sh0 = np.stack([v[f"f_dc_{i}"] for i in range(3)], axis=1)[:, None, :]
    degree = 0
    if args.sh3_grid is not None:
        # Inria's f_rest is channel-major: all of R's 15 coefficients, then G's, B's.
        rest = np.stack([v[f"f_rest_{i}"] for i in range(45)], axis=1).reshape(-1, 3, 15)
        sh0 = np.concatenate([sh0, rest.transpose(0, 2, 1)], axis=1)
        degree = 3

    width, height = 1920, 1080
    focal = (height / 2) / math.tan(math.radians(50.0) / 2)
    ks = torch.tensor([[focal, 0, width / 2], [0, focal, height / 2], [0, 0, 1]], dtype=torch.float32, device=device)

    results = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "scenes": {}}
    for k in [args.sh3_grid] if args.sh3_grid is not None else args.grid:
        offsets = [((i - (k - 1) / 2) * 1.8, 0.0, (j - (k - 1) / 2) * 1.8) for i in range(k) for j in range(k)]
        if args.sh3_grid is not None:
            offsets = [(0.0, 0.0, 0.0)]
        means = np.concatenate([base_means + np.asarray(o, dtype=np.float32) for o in offsets])
        n_copies = len(offsets)

        def to(a):
            return torch.tensor(np.concatenate([a] * n_copies), dtype=torch.float32, device=device)

        t_means = torch.tensor(means, dtype=torch.float32, device=device)
        t_quats, t_scales, t_opac, t_sh = to(quats), to(scales), to(opacities), to(sh0)
        g = 1.8 * k
        viewmat = bevy_looking_at((0.0, 0.5 * g, -1.2 * g), (0.0, 0.0, 0.0), np.array([0.0, 1.0, 0.0]))
        viewmats = torch.tensor(viewmat, dtype=torch.float32, device=device)[None]

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
        times = []
        for _ in range(args.runs):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            render()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        median = float(np.median(times))
        name = f"SH3_K{k}" if degree == 3 else f"K{k}"
        print(f"{name}: {len(means)} splats, gsplat median {median:.3f} ms "
              f"(p10 {np.percentile(times, 10):.3f}, p90 {np.percentile(times, 90):.3f}, {args.runs} runs); "
              f"visible {visible}, tile pairs {pairs}")
        results["scenes"][name] = {"splats": int(len(means)), "median_ms": median,
                                      "visible": visible, "tile_pairs": pairs,
                                      "p10_ms": float(np.percentile(times, 10)),
                                      "p90_ms": float(np.percentile(times, 90))}
        pixels = (image[0].clamp(0, 1) * 255).round().to(torch.uint8).cpu().numpy()
        with open(f"{args.out}/gsplat_{name}.ppm", "wb") as f:
            f.write(b"P6 %d %d 255\n" % (width, height))
            f.write(pixels.tobytes())
    summary = "gsplat_sh3.json" if degree == 3 else "gsplat.json"
    with open(f"{args.out}/{summary}", "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
