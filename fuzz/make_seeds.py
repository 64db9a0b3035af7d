#!/usr/bin/env python3
"""Writes small seed inputs for the fuzz targets into fuzz/seeds/, from tests/data/.

Run from the repository root: python3 fuzz/make_seeds.py
"""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "tests", "data")
OUT = os.path.join(ROOT, "fuzz", "seeds")


def split(path):
    data = open(os.path.join(DATA, path), "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    lines = data[:end].decode().splitlines()
    props = [l.split()[2] for l in lines if l.startswith("property")]
    count = next(int(l.split()[2]) for l in lines if l.startswith("element vertex"))
    return lines, props, count, data[end:]


def records(props, body, n):
    size = 4 * len(props)
    return [struct.unpack_from("<%df" % len(props), body, i * size) for i in range(n)]


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def header(lines, fmt, count, before="", after="", eol="\n"):
    out = []
    for l in lines:
        if l.startswith("format"):
            l = "format %s 1.0" % fmt
        if l.startswith("element vertex"):
            out.append(before.rstrip("\n")) if before else None
            l = "element vertex %d" % count
        if l == "end_header" and after:
            out.append(after.rstrip("\n"))
        out.append(l)
    return (eol.join(out) + eol).encode()


os.makedirs(OUT, exist_ok=True)
face = "element face 2\nproperty list uchar int vertex_indices\n"
for source, n in [("train_3pts_sh3.ply", 3), ("fruit_drops_sh3.ply", 2), ("angel_sh0.ply", 2)]:
    lines, props, count, body = split(source)
    stem = source.split("_")[0]
    rows = records(props, body, n)
    fmt = "<%df" % len(props)
    le = b"".join(struct.pack(fmt, *r) for r in rows)
    be = b"".join(struct.pack(">%df" % len(props), *r) for r in rows)
    ascii_body = "".join(" ".join(repr(v) for v in r) + "\n" for r in rows).encode()
    faces_le = bytes([3]) + struct.pack("<3i", 0, 1, 2) + bytes([0])
    faces_be = bytes([3]) + struct.pack(">3i", 0, 1, 2) + bytes([0])
    write(stem + "_le.ply", header(lines, "binary_little_endian", n) + le)
    write(stem + "_be.ply", header(lines, "binary_big_endian", n) + be)
    write(stem + "_ascii.ply", header(lines, "ascii", n) + ascii_body)
    write(stem + "_ascii_crlf.ply", header(lines, "ascii", n, eol="\r\n") + ascii_body)
    write(stem + "_face_le.ply", header(lines, "binary_little_endian", n, before=face) + faces_le + le)
    write(stem + "_face_be.ply", header(lines, "binary_big_endian", n, after=face) + be + faces_be)
    write(stem + "_face_ascii.ply", header(lines, "ascii", n, before=face) + b"3 0 1 2\n0\n" + ascii_body)
    full = header(lines, "binary_little_endian", n) + le
    write(stem + "_truncated.ply", full[: len(full) - 7])
    write(stem + "_header_only.ply", header(lines, "binary_little_endian", n))
