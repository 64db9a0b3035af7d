"""PSNR between two 8-bit RGB images (PNG or PPM), and how many pixels differ by more
than 2 % (the root mean square of a pixel's three channel differences above 2 % of
255), as BENCHMARKS.md reports them. Needs numpy and Pillow.

    python3 bench/image_diff.py ours.png gsplat.ppm [more pairs ...]
"""

import math
import sys

import numpy as np
from PIL import Image


def load(path):
    return np.asarray(Image.open(path).convert("RGB"), dtype=np.float64)


def compare(a_path, b_path):
    a, b = load(a_path), load(b_path)
    if a.shape != b.shape:
        raise SystemExit(f"{a_path} is {a.shape}, {b_path} is {b.shape}")
    diff = (a - b) / 255.0
    mse = float(np.mean(diff * diff))
    psnr = math.inf if mse == 0.0 else 10.0 * math.log10(1.0 / mse)
    per_pixel = np.sqrt(np.mean(diff * diff, axis=2))
    off = int(np.count_nonzero(per_pixel > 0.02))
    return psnr, off, a.shape[0] * a.shape[1]


def main():
    paths = sys.argv[1:]
    if not paths or len(paths) % 2:
        raise SystemExit(__doc__)
    for a_path, b_path in zip(paths[::2], paths[1::2]):
        psnr, off, pixels = compare(a_path, b_path)
        print(f"{a_path} vs {b_path}: {psnr:.2f} dB, {off} of {pixels:,} pixels off by more than 2 %")


if __name__ == "__main__":
    main()
