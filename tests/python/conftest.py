"""Shared by the python suite (tests/python/run.sh runs it on the installed package): paths, a
reader of the reference safetensors files, the error measure of tests/check.h, and the programs
the results are compared with."""
from __future__ import annotations

import json
import os
import pathlib
import struct

import numpy as np
import pytest

import gmlp

SRC = pathlib.Path(__file__).resolve().parents[2]
DATA = SRC / "tests" / "data"
MODELS = SRC / "models"
EXAMPLES = SRC / "examples"

needs_device = pytest.mark.skipif(not gmlp.devices(), reason="no OpenCL device")

_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I32": "<i4", "I64": "<i8", "U8": "u1"}


def read_safetensors(path: os.PathLike) -> dict:
    """The tensors of a reference file (in the dtypes the fixtures use) by name, and its
    __metadata__ (a dict of strings)."""
    raw = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    body = raw[8 + n:]
    out = {}
    for name, t in json.loads(raw[8:8 + n]).items():
        if name == "__metadata__":
            out[name] = t
        else:
            a, b = t["data_offsets"]
            out[name] = np.frombuffer(body[a:b], _DTYPES[t["dtype"]]).reshape(t["shape"])
    return out


def with_metadata(src: os.PathLike, dst: os.PathLike, **meta: str) -> pathlib.Path:
    """A copy of the safetensors file src at dst with these __metadata__ entries set (gmlp_labels=...
    sets gmlp.labels); the tensors' bytes as they are."""
    raw = pathlib.Path(src).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.setdefault("__metadata__", {}).update({k.replace("_", ".", 1): v for k, v in meta.items()})
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    pathlib.Path(dst).write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n:])
    return pathlib.Path(dst)


def rel_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| relative to max |want| (at least 1e-6), NaN as infinite: tests/check.h's rel_error."""
    d = np.abs(got.astype(np.float64) - want)
    return float("inf") if np.isnan(d).any() else float(d.max() / max(np.abs(want).max(), 1e-6))


def program(name: str) -> str:
    """A program of the build (tests/meson.build passes their paths), or skip without it (-Dapps=false)."""
    path = os.environ.get(name)
    if not path:
        pytest.skip(f"{name} not set (a build without the programs)")
    return path
