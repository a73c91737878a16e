"""The binding's own cost per call: Model.classify(x) against the C call it wraps, gmlp_classify on
the same model, input and output buffers, made through ctypes with everything prepared, in
interleaved blocks (A B, B A, ...) in one process.  The difference is what the binding adds
(argument checks, conversions, the output array, the lock); the ctypes call itself, which the
C-call side also pays, is measured on its own as an upper bound (gmlp_classify refusing a NULL
model at once).  Model: gmlp_tiny, gmlp-bench's tiny configuration (32x32x3, patch 4, dim 32,
depth 2, ffn 96, 10 classes) with gmlp_diag_random_model's weights (seed 1), at batch 1.

    python tests/python/bench_overhead.py [--rounds 40] [--calls 200] [--device D]
"""
from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import tempfile
import time

import numpy as np

import gmlp
from gmlp import _lib


def tiny_model(path: str) -> None:
    """gmlp_tiny with random weights, written to path."""
    cfg = _lib.Config(arch=_lib.ARCH.index("gmlp"), in_chans=3, img_h=32, img_w=32, patch_h=4, patch_w=4, dim=32,
                      depth=2, ffn_dim=96, num_classes=10, seq_len=64)
    fn = _lib.lib.gmlp_diag_random_model
    fn.argtypes = [ctypes.POINTER(_lib.Config), ctypes.c_uint64, ctypes.POINTER(ctypes.c_void_p),
                   ctypes.POINTER(ctypes.c_size_t)]
    data, size = ctypes.c_void_p(), ctypes.c_size_t()
    _lib.check(fn(ctypes.byref(cfg), 1, ctypes.byref(data), ctypes.byref(size)), None)
    with open(path, "wb") as f:
        f.write(ctypes.string_at(data, size.value))
    ctypes.CDLL(None).free(data)


def per_call_us(fn, calls: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - t0) / calls / 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--device")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gmlp_tiny.safetensors")
        tiny_model(path)
        m = gmlp.load(path, device=args.device)
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    out = np.empty((1, 10), np.float32)
    classify = _lib.lib.gmlp_classify
    handle, xp, outp = m._model, x.ctypes.data, out.ctypes.data
    binding = lambda: m.classify(x)  # noqa: E731
    c_call = lambda: classify(handle, xp, 1, outp)  # noqa: E731
    bare = lambda: classify(None, None, 0, None)  # noqa: E731
    for fn in (binding, c_call, bare):
        per_call_us(fn, args.calls)  # warm-up
    assert c_call() == 0 and np.array_equal(out, m.classify(x))
    a, b = [], []
    for r in range(args.rounds):
        pair = ((a, binding), (b, c_call)) if r % 2 == 0 else ((b, c_call), (a, binding))
        for times, fn in pair:
            times.append(per_call_us(fn, args.calls))
    ctypes_us = statistics.median(per_call_us(bare, args.calls) for _ in range(args.rounds))
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"device: {m.device}")
    print(f"gmlp_tiny, batch 1, {args.rounds} rounds x {args.calls} calls, medians of the per-round means:")
    print(f"  Model.classify        {ma:9.2f} us/call")
    print(f"  gmlp_classify (C)     {mb:9.2f} us/call (through ctypes, prepared)")
    print(f"  ctypes call alone     {ctypes_us:9.2f} us/call (upper bound)")
    print(f"  binding's own cost    {ma - mb:9.2f} us/call ({100 * (ma - mb) / mb:.1f}%), "
          f"{ma - mb + ctypes_us:.2f} us ({100 * (ma - mb + ctypes_us) / mb:.1f}%) with the ctypes call")
    m.close()


if __name__ == "__main__":
    main()
