"""Renders gsplat's reference images for the parity tests (tests/reference/), as
`shared/reference/README.md` describes them: every camera of an Inria cameras.json,
black background (or `--background R,G,B`, sRGB display values in [0, 1], which
gsplat blends as C + (1 - A) b), values clamped to [0, 1] and written as 8-bit PNG
unconverted.

    python3 bench/gsplat_reference.py SCENE.ply CAMERAS.json --mode antialiased --out DIR

Needs torch with CUDA and gsplat 1.5.3. Writes DIR/<scene>_<img_name>.png per camera.
"""

import argparse
import json
import os
import sys

import numpy as np
import torch
from gsplat import rasterization

sys.path.insert(0, os.path.dirname(__file__))
from gsplat_race import read_ply  # noqa: E402


def write_png(path, rgb):
    """An 8-bit RGB PNG with no colour conversion (zlib and the standard library only)."""
    import struct
    import zlib

    height, width, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(height))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9))
    png += chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ply")
    parser.add_argument("cameras")
    parser.add_argument("--mode", default="classic", choices=["classic", "antialiased"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--background", default=None, help="R,G,B in [0, 1]")
    args = parser.parse_args()

    columns = read_ply(args.ply)
    device = torch.device("cuda")
    t = lambda a: torch.tensor(np.stack(a, axis=-1), dtype=torch.float32, device=device)
    means = t([columns["x"], columns["y"], columns["z"]])
    quats = t([columns[f"rot_{i}"] for i in range(4)])
    quats = quats / quats.norm(dim=-1, keepdim=True)
    scales = torch.exp(t([columns[f"scale_{i}"] for i in range(3)]))
    opacities = torch.sigmoid(torch.tensor(columns["opacity"], device=device))
    rest = sorted((k for k in columns if k.startswith("f_rest_")), key=lambda k: int(k[7:]))
    per_channel = len(rest) // 3
    degree = {0: 0, 3: 1, 8: 2, 15: 3}[per_channel]
    dc = t([columns[f"f_dc_{c}"] for c in range(3)])[:, None, :]
    if per_channel:
        # f_rest is channel-major: all of R, then G, then B.
        rest_values = t([columns[k] for k in rest]).reshape(-1, 3, per_channel)
        sh = torch.cat([dc, rest_values.transpose(1, 2)], dim=1)
    else:
        sh = dc
    backgrounds = None
    if args.background:
        rgb = [float(v) for v in args.background.split(",")]
        backgrounds = torch.tensor([rgb], dtype=torch.float32, device=device)
    scene = os.path.splitext(os.path.basename(args.ply))[0]
    os.makedirs(args.out, exist_ok=True)
    for camera in json.load(open(args.cameras)):
        width, height = camera["width"], camera["height"]
        c2w = np.eye(4)
        c2w[:3, :3] = np.array(camera["rotation"])
        c2w[:3, 3] = np.array(camera["position"])
        viewmat = torch.tensor(np.linalg.inv(c2w), dtype=torch.float32, device=device)
        K = torch.tensor(
            [[camera["fx"], 0, width / 2], [0, camera["fy"], height / 2], [0, 0, 1]],
            dtype=torch.float32,
            device=device,
        )
        colors, _, _ = rasterization(
            means, quats, scales, opacities, sh, viewmat[None], K[None], width, height,
            sh_degree=degree, packed=False, rasterize_mode=args.mode, eps2d=0.3,
            near_plane=0.01, backgrounds=backgrounds,
        )
        image = (colors[0].clamp(0, 1) * 255).round().to(torch.uint8).cpu().numpy()
        path = os.path.join(args.out, f"{scene}_{camera['img_name']}.png")
        write_png(path, image)
        print(path, flush=True)


if __name__ == "__main__":
    main()
