#!/usr/bin/env python3
"""A roofline for every pass of a bench run: the bytes each pass must move at the
least (its compulsory traffic, counted from the buffers it reads and writes and the
run's counts), the time that takes at the GPU's measured copy rate, and the rate the
pass achieved.

    python3 bench/roofline.py ours_K9.json [more.json ...] [--copy-tbs 4.28]
        [--tile-entries-per-pair 1.5625] [--markdown]

The model, per pass (n: visible splats, N: splats, p: bin pairs, e: tile-list
entries, P: pixels of the tiles drawn, those some splat reaches (the JSON's
`tiles_drawn` × 64; every pixel of the view for runs from before it was counted,
when every tile was drawn); one pass of the radix sort per 8 key bits; the one-sweep
sort where a sort's capacity is at most 2^24 entries, else the classic one):

- preprocess: reads each splat's geometry (48 B) and SH (f16, 2 B a coefficient,
  whole words: 8 B at degree 0, 96 B at degree 3); writes per visible splat its
  32-byte record, depth key and pair count (40 B).
- depth sort (24 key bits, 3 passes): one-sweep, one histogram read of the keys (4n)
  and per pass a read and a write of keys and values (16n; the first pass reads no
  values: 12n); classic, per pass a count read of the keys (4n) and the scatter's.
- scan (and the gather): the gather reads the sorted slots and gathers the pair
  counts and writes them in order (12n); the scan reads them twice and writes once
  (12n).
- duplicate: reads each visible splat's slot, first pair slot and record (40n) and
  writes a key and a value per pair (8p).
- tile sort (one pass per 8 bits of the bin index): as the depth sort, over p.
- tile range, split, order: the range reads the sorted keys (4p), the split the
  sorted values (4p) and writes the tile lists (4e).
- tile render: reads each tile-list entry and its splat's record (36e), the scene
  depth (4P) and writes the layer and the median depth (20P).
- composite: reads the layer (16P) and blends into an 8-bit target (8P).

e is not in the bench's JSON: the tile split writes a bin pair once per tile of the
bin it reaches; 1/0.64 entries a pair is the ratio BENCHMARKS.md measured when bins
replaced tiles.
"""

import argparse
import json
import math

SH_WORDS_HALF = {0: 2, 1: 6, 2: 14, 3: 24}  # ceil(3 (d+1)^2 / 2) words
ONESWEEP_LARGEST = 1 << 24


def sort_bytes(count, key_bits, capacity):
    passes = math.ceil(key_bits / 8)
    if capacity <= ONESWEEP_LARGEST:
        return 4 * count + 12 * count + 16 * count * (passes - 1)
    return 16 * count + 20 * count * (passes - 1) + 4 * count * passes


def model(run, tile_entries_per_pair):
    scene = run["scene"]
    n, N, p = run["visible_splats"], scene["splats"], run["tile_pairs"]
    P = run.get("tiles_drawn", 0) * 64 or scene["width"] * scene["height"]
    e = p * tile_entries_per_pair
    degree = 3 if scene.get("sh3_grid") else 0
    bins = math.ceil(scene["width"] / 16) * math.ceil(scene["height"] / 16)
    bin_bits = max(1, math.ceil(math.log2(bins)))
    return {
        "preprocess": N * (48 + 4 * SH_WORDS_HALF[degree]) + 40 * n,
        "depth_sort": sort_bytes(n, 24, n * 1.25),
        "scan": 24 * n,
        "duplicate": 40 * n + 8 * p,
        "tile_sort": sort_bytes(p, bin_bits, p * 1.25),
        "tile_range": 8 * p + 4 * e,
        "tile_render": 36 * e + 24 * P,
        "composite": 24 * P,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--copy-tbs", type=float, default=4.28,
                        help="the GPU's device-to-device copy rate, TB/s moved")
    parser.add_argument("--tile-entries-per-pair", type=float, default=1 / 0.64)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rate = args.copy_tbs * 1e12
    for path in args.runs:
        run = json.load(open(path))
        bytes_by_pass = model(run, args.tile_entries_per_pair)
        name = path.rsplit("/", 1)[-1]
        if args.markdown:
            print(f"\n{name}: {run['scene']['splats']:,} splats, {run['visible_splats']:,} "
                  f"visible, {run['tile_pairs']:,} bin pairs\n")
            print("| pass | MB moved at least | floor (ms) | measured (ms) | achieved TB/s | "
                  "of the copy rate | above the floor (ms) |")
            print("|---|---|---|---|---|---|---|")
        total_bytes = total_floor = total_ms = 0.0
        rows = []
        for stage, moved in bytes_by_pass.items():
            ms = run["passes"][stage]["median_ms"]
            floor = moved / rate * 1e3
            rows.append((stage, moved, floor, ms))
            total_bytes += moved
            total_floor += floor
            total_ms += ms
        rows.append(("all passes", total_bytes, total_floor, total_ms))
        for stage, moved, floor, ms in rows:
            achieved = moved / (ms * 1e-3) / 1e12
            cells = (stage, f"{moved / 1e6:.0f}", f"{floor:.3f}", f"{ms:.3f}",
                     f"{achieved:.2f}", f"{achieved / args.copy_tbs:.0%}", f"{ms - floor:.3f}")
            if args.markdown:
                print("| " + " | ".join(cells) + " |")
            else:
                print("{:12} {:>8} MB  floor {:>7} ms  measured {:>7} ms  {:>5} TB/s  {:>4}  "
                      "+{:>6} ms".format(*cells))


if __name__ == "__main__":
    main()
