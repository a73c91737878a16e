"""The precision modes' float64 references (issue 33), shared by the fixture
generators (make_fixtures.py, make_gmlp_vision_fixtures.py, make_lm_fixtures.py).

A mode rounds both operands of every GEMM of a forward to its format, round to
nearest even, and accumulates in fp32 (README "Precision"; the library's
cl_kernels/precision.cl); FP16 and BF16 also hold fc1's [u | v] (GluMlp's
gates) in their format, which LayerNorm and the gate read (Emulation.held).  The references here are the fixtures' float64
documented maths (each generator's doc_reference, itself checked against timm
or g-mlp-pytorch to 1e-10) with every product's operands rounded the same way,
in float64: what the library must give up to its fp32 accumulation, which
test_e2e and test_lm check tightly.  The tests' plain float64 check (against
timm / g-mlp-pytorch) bounds the modes' whole error.

    tests/data/precision/NAME.prec.safetensors
        MODE.logits, MODE.features   F32  the reference in mode MODE (tf32, fp16,
                                          bf16), the weights as stored (rounded
                                          to the mode)
        MODE.f16.logits, ...         F32  the same with the weights stored as
                                          half on the device first (the tests'
                                          f16 storage), where that differs:
                                          bf16 of a model not stored as half
                                          (tf32 and fp16 of half equal tf32 and
                                          fp16 of the weights, but for half's
                                          subnormals: checked to 1e-7 here)

The values are stored as F32: their rounding (6e-8 relative) is far below the
tolerances they serve (1e-4 and more), and it halves the folder.
"""
import os

import torch
from safetensors.torch import save_file

from stfile import sort_metadata

MODES = ("tf32", "fp16", "bf16")
MANTISSA = {"tf32": 10, "fp16": 10, "bf16": 7}


def round_operand(x, mode):
    """x (float64) rounded to mode's format, round to nearest even: TF32 and
    BF16 with fp32's exponent range (its subnormals' fixed grid), FP16
    saturated at +-65504 with multiples of 2^-24 below 2^-14; NaN kept.  None
    or "fp32": x unchanged (the operands are fp32 already)."""
    if mode is None or mode == "fp32":
        return x
    p = MANTISSA[mode]
    y = x.clamp(-65504.0, 65504.0) if mode == "fp16" else x
    _, e = torch.frexp(y)  # y = m 2^e, 1/2 <= |m| < 1: the leading bit is 2^(e-1)
    lowest = -14 if mode == "fp16" else -126  # the smallest normal exponent
    q = torch.pow(torch.tensor(2.0, dtype=torch.float64), (torch.clamp(e - 1, min=lowest) - p).double())
    r = torch.round(y / q) * q  # exact scalings; torch.round: ties to even
    if mode != "fp16":
        r = torch.where(r.abs() >= 2.0 ** 128, torch.copysign(torch.tensor(float("inf"), dtype=r.dtype), r), r)
    return torch.where(torch.isnan(x), x, r)


class Emulation:
    """How a forward rounds: mode (None: nothing), and whether the weights go
    through half first (the library's GMLP_WEIGHTS_F16)."""

    def __init__(self, mode=None, half_weights=False):
        self.mode, self.half_weights = mode, half_weights

    def op(self, a):
        """An operand of a product."""
        return round_operand(a, self.mode)

    def mm(self, a, b):
        """a @ b with both operands rounded."""
        return self.op(a) @ self.op(b)

    def held(self, x):
        """An activation the library holds in the mode's 16-bit format that
        more than GEMMs read (lib/model/storage.c: fc1's [u | v], GluMlp's
        gates), rounded as stored: FP16 and BF16 (TF32 holds floats)."""
        return round_operand(x, self.mode) if self.mode in ("fp16", "bf16") else x

    def weight(self, w):
        """A GEMM weight as the device holds it (float64 of the fp32 value the
        library computed), before the mode's rounding."""
        return w.half().double() if self.half_weights else w


def fp32(x):
    """x rounded to float32, back in float64 (what the library's fp32 host
    arithmetic gives for a product of two stored values)."""
    return x.float().double()


def rel(a, b):
    """max |a - b| / max |b|, the tests' metric (the floor aside)."""
    return ((a - b).abs().max() / b.abs().max().clamp(min=1e-6)).item()


def write(outdir, name, storage, run, what, exact):
    """Writes outdir/NAME.prec.safetensors: run(emulation) -> {what: float64
    tensor} for each mode, and for the half-weights emulation where it
    differs (bf16 of weights not stored as half); exact: run's outputs
    without rounding, which run(Emulation()) must give (the emulation's
    structure checked against the real implementation).  Returns
    {mode: relative error of the mode's reference against exact} for the
    generator's report."""
    base = run(Emulation())
    for k in what:
        assert rel(base[k], exact[k]) < 1e-6, (name, k, rel(base[k], exact[k]))
    out, errs = {}, {}
    for mode in MODES:
        ref = run(Emulation(mode))
        for k in what:
            out[f"{mode}.{k}"] = ref[k].float().contiguous()
        errs[mode] = max(rel(ref[k], exact[k]) for k in what)
        if storage == "F16":
            continue
        half = run(Emulation(mode, half_weights=True))
        d = max(rel(half[k], ref[k]) for k in what)
        if mode == "bf16":
            for k in what:
                out[f"{mode}.f16.{k}"] = half[k].float().contiguous()
        else:  # the tests use MODE.* for the f16 storage too
            assert d < 1e-7, (name, mode, "half weights change the reference by", d)
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, name + ".prec.safetensors")
    save_file(out, path, metadata={"model": name + ".safetensors", "storage": storage,
                                   "generator": "tools/precision_ref.py"})
    sort_metadata(path)
    os.chmod(path, 0o644)
    return errs
