#!/usr/bin/env python3
"""Checks what gmlp-classify --features wrote, read back without numpy: .npy (with
OUT.paths.txt beside it), JSON lines or CSV (by the extension).
  features_check.py OUT [--files LIST] [--errors NAME...] [--same-as OTHER...] [--dim D]
--files: every file of LIST (one a line) once, in that order (those named by --errors
  as error rows in JSONL and CSV, absent from .npy, which has no row for them);
--same-as: the same files with the same float32 features, bit for bit;
--dim: the features per image.
Exit 1 with the first difference."""
import argparse
import csv
import json
import os
import re
import struct
import sys


def f32(x):
    """A number as the float32 it reads back to: its 4 bytes."""
    return struct.pack("<f", float(x))


def read_npy(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x93NUMPY\x01\x00", "not an npy 1.0 file"
    n = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + n].decode("latin-1")
    assert (10 + n) % 64 == 0 and header.endswith("\n"), "the header is not 64-byte aligned and ended"
    m = re.fullmatch(r"\{'descr': '<f4', 'fortran_order': False, 'shape': \((\d+), (\d+)\), \} *\n", header)
    assert m, header
    rows, dim = int(m.group(1)), int(m.group(2))
    body = data[10 + n:]
    assert len(body) == rows * dim * 4, f"{len(body)} bytes of rows, the header says {rows} x {dim}"
    side = re.sub(r"\.npy$", "", path) + ".paths.txt"
    names = open(side, encoding="utf-8", errors="surrogateescape").read().split("\n")
    assert names[-1] == "" and len(names) - 1 == rows, f"{len(names) - 1} paths for {rows} rows"
    return [(names[i], body[i * dim * 4:(i + 1) * dim * 4]) for i in range(rows)], dim


def read_jsonl(path):
    rows = []
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        assert set(r) in ({"file", "embedding"}, {"file", "error"}), r.keys()
        rows.append((r["file"], None if "error" in r else b"".join(map(f32, r["embedding"]))))
    return rows


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    head = table[0]
    assert head[:2] == ["file", "error"] and head[2:] == [str(i) for i in range(len(head) - 2)], head[:5]
    rows = []
    for r in table[1:]:
        if r[1]:
            assert len(r) == 2, r
            rows.append((r[0], None))
        else:
            assert len(r) == len(head), (len(r), len(head))
            rows.append((r[0], b"".join(map(f32, r[2:]))))
    return rows


def read(path):
    if path.endswith(".npy"):
        return read_npy(path)
    rows = read_jsonl(path) if path.endswith(".jsonl") else read_csv(path)
    dims = {len(v) // 4 for _, v in rows if v is not None}
    assert len(dims) <= 1, dims
    return rows, dims.pop() if dims else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--files")
    ap.add_argument("--errors", nargs="*", default=[])
    ap.add_argument("--same-as", nargs="*", default=[])
    ap.add_argument("--dim", type=int)
    a = ap.parse_args()
    rows, dim = read(a.out)
    is_error = lambda f: any(os.path.basename(f).startswith(e) for e in a.errors)
    if a.dim is not None:
        assert dim == a.dim, f"dim {dim}, not {a.dim}"
    if a.files:
        want = [l for l in open(a.files).read().split("\n") if l]
        if a.out.endswith(".npy"):
            want = [f for f in want if not is_error(f)]
        assert [f for f, _ in rows] == want, f"files {[f for f, _ in rows][:3]}..., want {want[:3]}..."
    for f, v in rows:
        assert (v is None) == is_error(f), f"{f}: {'an error row' if v is None else 'features'}"
    for other in a.same_as:
        theirs = {f: v for f, v in read(other)[0] if v is not None}
        ours = {f: v for f, v in rows if v is not None}
        assert ours.keys() == theirs.keys(), f"{other}: other files"
        for f in ours:
            assert ours[f] == theirs[f], f"{f}: features differ from {other}'s"
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as e:
        sys.exit(f"features_check: {sys.argv[1]}: {e}")
