"""The binding's own cost per call: Model.classify(x) against the C call it wraps, gmlp_classify on
the same model, input and output buffers, made through ctypes with everything prepared.

First the binding's Python work alone (Model.classify with the foreign call replaced by a Python
no-op) and the ctypes call itself (gmlp_classify refusing a NULL model at once: an upper bound),
neither of which depends on the device.  Then, interleaved in blocks whose order rotates each
round, in one process: A the binding, B the C call, C the C call followed by a busy pause as long
as the binding's Python work; the medians of the paired per-round differences A - B and A - C.
C tells what any pause between calls costs on its own (a driver's threads that go idle between
commands), apart from the binding.  Model: gmlp_tiny, gmlp-bench's tiny configuration (32x32x3,
patch 4, dim 32, depth 2, ffn 96, 10 classes) with gmlp_diag_random_model's weights (seed 1), at
batch 1.

    python tests/python/bench_overhead.py [--rounds 60] [--calls 50] [--device D]
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
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--calls", type=int, default=50)
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
    ctypes_us = statistics.median(per_call_us(bare, args.calls) for _ in range(args.rounds))
    setattr(_lib.lib, "gmlp_classify", lambda *_: 0)  # the binding's Python work alone
    python_us = statistics.median(per_call_us(binding, args.calls) for _ in range(args.rounds))
    setattr(_lib.lib, "gmlp_classify", classify)

    def c_call_and_pause() -> None:
        c_call()
        end = time.perf_counter_ns() + int(python_us * 1e3)
        while time.perf_counter_ns() < end:
            pass

    runs: dict = {"A": [], "B": [], "C": []}
    blocks = [("A", binding), ("B", c_call), ("C", c_call_and_pause)]
    for r in range(args.rounds):
        for name, fn in blocks[r % 3:] + blocks[:r % 3]:
            runs[name].append(per_call_us(fn, args.calls))
    med = {k: statistics.median(v) for k, v in runs.items()}

    def paired(p: str, q: str) -> str:
        d = [x - y for x, y in zip(runs[p], runs[q])]
        q1, mid, q3 = statistics.quantiles(d, n=4)
        return f"{mid:9.2f} us/call ({100 * mid / med['B']:.1f}%; quartiles {q1:.1f} .. {q3:.1f})"

    print(f"device: {m.device}")
    print(f"gmlp_tiny, batch 1, {args.rounds} rounds x {args.calls} calls; medians of the per-round means:")
    print(f"  the binding's Python work  {python_us:9.2f} us/call, plus the ctypes call {ctypes_us:.2f} us "
          f"(upper bound) = {python_us + ctypes_us:.2f} us ({100 * (python_us + ctypes_us) / med['B']:.2f}%)")
    print(f"  A Model.classify           {med['A']:9.2f} us/call")
    print(f"  B gmlp_classify (C)        {med['B']:9.2f} us/call (through ctypes, prepared)")
    print(f"  C B + {python_us:.0f} us pause         {med['C']:9.2f} us/call")
    print(f"  A - B                      {paired('A', 'B')}")
    print(f"  A - C                      {paired('A', 'C')}")
    m.close()


if __name__ == "__main__":
    main()
