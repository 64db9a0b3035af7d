"""The angel-grid scene and camera that the CUDA races (`gsplat_race.py`, `higs_race.py`)
hand to their renderers, kept in one place so that every renderer is given the very
same tensors and the very same camera as `examples/bench.rs` draws:

* K×K copies of one PLY, copy (i, j) moved by ((i − (K−1)/2)·1.8, 0, (j − (K−1)/2)·1.8);
* seen from (0, 0.5·G, −1.2·G), G = 1.8·K, looking at the origin with +Y up
  (Bevy's `Transform::looking_at`), 50° vertical field of view, principal point at
  the image centre;
* splats activated the way Inria's trainer stores them: unit quaternions (w, x, y, z
  as rot_0..3), scales exp(scale_i), opacities sigmoid(opacity), colours as SH
  coefficients (degree 0 from f_dc, or degree 3 with f_rest).

Only numpy is needed here; `grid_tensors` imports torch when it is called.
"""

import math
import struct
import sys
import zlib

import numpy as np

GRID_SPACING = 1.8
FOV_Y_DEGREES = 50.0


def read_ply(path):
    """The vertex table of a binary little-endian PLY of float properties, by name."""
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


def load_splats(path, sh3=False):
    """One cloud's activated splats as float32 arrays: means [N,3], quats [N,4] (wxyz,
    unit), scales [N,3], opacities [N], sh [N,1,3] (or [N,16,3] with `sh3`), and the
    SH degree."""
    v = read_ply(path)
    means = np.stack([v["x"], v["y"], v["z"]], axis=1)
    quats = np.stack([v[f"rot_{i}"] for i in range(4)], axis=1)
    quats = quats / np.linalg.norm(quats, axis=1, keepdims=True)
    scales = np.exp(np.stack([v[f"scale_{i}"] for i in range(3)], axis=1))
    opacities = 1.0 / (1.0 + np.exp(-v["opacity"]))
    sh = np.stack([v[f"f_dc_{i}"] for i in range(3)], axis=1)[:, None, :]
    degree = 0
    if sh3:
        # Inria's f_rest is channel-major: all of R's 15 coefficients, then G's, B's.
        rest = np.stack([v[f"f_rest_{i}"] for i in range(45)], axis=1).reshape(-1, 3, 15)
        sh = np.concatenate([sh, rest.transpose(0, 2, 1)], axis=1)
        degree = 3
    return {"means": means, "quats": quats, "scales": scales, "opacities": opacities,
            "sh": sh, "degree": degree}


def grid_offsets(k):
    """Where the K×K copies go (x, y, z), row by row as the bench lays them out."""
    half = (k - 1) / 2
    return [((i - half) * GRID_SPACING, 0.0, (j - half) * GRID_SPACING) for i in range(k) for j in range(k)]


def grid_arrays(splats, offsets):
    """The splats once per offset, moved by it; the other attributes repeated."""
    n_copies = len(offsets)
    means = np.concatenate([splats["means"] + np.asarray(o, dtype=np.float32) for o in offsets])
    out = {"means": means}
    for key in ("quats", "scales", "opacities", "sh"):
        out[key] = np.concatenate([splats[key]] * n_copies)
    return out


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


def grid_viewmat(k):
    """The K×K grid's camera as a 4×4 world-to-camera matrix (float64)."""
    g = GRID_SPACING * k
    return bevy_looking_at((0.0, 0.5 * g, -1.2 * g), (0.0, 0.0, 0.0), np.array([0.0, 1.0, 0.0]))


def intrinsics(width, height):
    """Pinhole K for a 50° vertical field of view, principal point at the centre."""
    focal = (height / 2) / math.tan(math.radians(FOV_Y_DEGREES) / 2)
    return np.array([[focal, 0, width / 2], [0, focal, height / 2], [0, 0, 1]], dtype=np.float64)


def scene_name(k, degree):
    return f"SH3_K{k}" if degree == 3 else f"K{k}"


def grid_tensors(splats, k, single_cloud, device):
    """float32 CUDA tensors of the K grid (or of the one cloud, with `single_cloud`),
    plus its camera: (tensors dict, viewmat [4,4])."""
    import torch

    offsets = [(0.0, 0.0, 0.0)] if single_cloud else grid_offsets(k)
    arrays = grid_arrays(splats, offsets)
    tensors = {key: torch.tensor(a, dtype=torch.float32, device=device) for key, a in arrays.items()}
    viewmat = torch.tensor(grid_viewmat(k), dtype=torch.float32, device=device)
    return tensors, viewmat


def write_png(path, rgb):
    """An 8-bit RGB PNG (zlib and the standard library only), values as given."""
    height, width, _ = rgb.shape
    rows = np.concatenate([np.zeros((height, 1), dtype=np.uint8), rgb.reshape(height, width * 3)], axis=1)

    def chunk(kind, payload):
        body = kind + payload
        return struct.pack(">I", len(payload)) + body + struct.pack(">I", zlib.crc32(body))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)))
        f.write(chunk(b"IEND", b""))


def write_image(stem, rgb, fmt="ppm"):
    """Writes an [H, W, 3] uint8 image to STEM.ppm (binary P6) or STEM.png; its path."""
    path = f"{stem}.{fmt}"
    if fmt == "png":
        write_png(path, rgb)
    else:
        height, width, _ = rgb.shape
        with open(path, "wb") as f:
            f.write(b"P6 %d %d 255\n" % (width, height))
            f.write(np.ascontiguousarray(rgb).tobytes())
    return path


def cuda_event_times(render, runs):
    """Milliseconds of each of `runs` calls of `render`, each between two CUDA events
    and synchronised after (the caller warms up first)."""
    import torch

    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        render()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return times
