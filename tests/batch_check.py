#!/usr/bin/env python3
"""Reads a gmlp-classify --output file back (.jsonl or .csv, by extension or
--format) and checks it: one result per image, in the expected order, each
image once; errors only where expected; top-k rows well-formed; and, with
--same-as, equal to another output (same files, same top-1, probabilities
within 1e-5).  Exits 1 with the reason on the first mismatch."""
import argparse
import csv
import json
import math
import sys


def fail(msg):
    print(f"batch_check: {msg}", file=sys.stderr)
    sys.exit(1)


def read(path, fmt=None):
    """[(file, error or None, [(index, label, prob), ...])] in file order."""
    fmt = fmt or path.rsplit(".", 1)[-1]
    rows = []
    if fmt == "jsonl":
        with open(path, encoding="utf-8", newline="") as f:
            data = f.read()
        if data and not data.endswith("\n"):
            fail(f"{path}: the last line is not terminated")
        for n, line in enumerate(data.splitlines(), 1):
            d = json.loads(line)
            if set(d) not in ({"file", "top"}, {"file", "error"}):
                fail(f"{path}:{n}: keys {sorted(d)}")
            top = [(t["index"], t["label"], t["prob"]) for t in d.get("top", [])]
            for t in d.get("top", []):
                if set(t) != {"index", "label", "prob"}:
                    fail(f"{path}:{n}: top entry keys {sorted(t)}")
            rows.append((d["file"], d.get("error"), top))
        # probabilities as %.9g: at most 9 significant digits
        for tok in data.split('"prob": ')[1:]:
            num = tok.split("}")[0]
            if len(num.replace("-", "").replace(".", "").split("e")[0].lstrip("0")) > 9:
                fail(f"{path}: probability {num} has more than 9 significant digits")
    elif fmt == "csv":
        with open(path, encoding="utf-8", newline="") as f:
            records = list(csv.reader(f))
        if not records or records[0] != ["file", "rank", "index", "label", "prob", "error"]:
            fail(f"{path}: header {records[:1]}")
        for r in records[1:]:
            if len(r) != 6:
                fail(f"{path}: row {r} has {len(r)} fields")
            file, rank = r[0], int(r[1])
            if rank == 0:
                if r[2:5] != ["", "", ""] or not r[5]:
                    fail(f"{path}: error row {r}")
                rows.append((file, r[5], []))
                continue
            if r[5]:
                fail(f"{path}: a result row with an error: {r}")
            if rank == 1:
                rows.append((file, None, []))
            elif not rows or rows[-1][0] != file or len(rows[-1][2]) != rank - 1:
                fail(f"{path}: rank {rank} of {file} out of sequence")
            rows[-1][2].append((int(r[2]), r[3], float(r[4])))
    else:
        fail(f"unknown format {fmt}")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("output")
    ap.add_argument("--format")
    ap.add_argument("--files", help="the expected files, one per line, in order")
    ap.add_argument("--errors", default="", help="comma-separated substrings: the files expected to fail")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--same-as", help="another output the rows must equal")
    ap.add_argument("--any-order", action="store_true", help="compare as sets (a --resume run appends)")
    a = ap.parse_args()
    rows = read(a.output, a.format)
    files = [r[0] for r in rows]
    if len(set(files)) != len(files):
        fail(f"{a.output}: a file appears twice: {sorted(f for f in files if files.count(f) > 1)[:3]}")
    if a.files:
        with open(a.files, encoding="utf-8") as f:
            want = f.read().split("\n")[:-1]
        if (sorted(files) if a.any_order else files) != (sorted(want) if a.any_order else want):
            fail(f"{a.output}: files {files} != expected {want}")
    bad = [s for s in a.errors.split(",") if s]
    for file, err, top in rows:
        expect_err = any(s in file for s in bad)
        if bool(err) != expect_err:
            fail(f"{file}: error {err!r}, expected {'an error' if expect_err else 'none'}")
        if not err:
            if len(top) != a.top:
                fail(f"{file}: {len(top)} classes, expected {a.top}")
            probs = [p for _, _, p in top]
            if any(not (0 <= p <= 1) or math.isnan(p) for p in probs) or probs != sorted(probs, reverse=True):
                fail(f"{file}: probabilities {probs}")
    if a.same_as:
        other = {r[0]: r for r in read(a.same_as)}
        if sorted(other) != sorted(files) or (not a.any_order and list(other) != files):
            fail(f"{a.output} and {a.same_as} hold different files")
        for file, err, top in rows:
            o = other[file]
            if (err is None) != (o[1] is None):
                fail(f"{file}: error in one output only")
            if top and top[0][0] != o[2][0][0]:
                fail(f"{file}: top-1 {top[0][0]} vs {o[2][0][0]}")
            po = {i: p for i, _, p in o[2]}
            for i, _, p in top:
                if i in po and abs(p - po[i]) > 1e-5:
                    fail(f"{file}: class {i}: {p} vs {po[i]}")
    print(f"batch_check: {a.output}: {len(rows)} images, {sum(1 for r in rows if r[1])} errors: ok")


main()
