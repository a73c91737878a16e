#!/usr/bin/env python3
"""PyTorch's own error in its nearest precision mode (CPU autocast bf16, the
one Debian's torch has) on the e2e and LM fixtures, against their float64
references, in the tests' metric: max |out - ref| / max |ref| over the logits
(the features of headless models).  For bench/NOTES.md "Precision modes:
measured error", beside the library's figures (test_e2e and test_lm print
theirs per mode).

    .venv-tools/bin/python tools/torch_autocast_error.py [--e2e tests/data/e2e] [--lm tests/data/lm]
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from safetensors.torch import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402
import make_gmlp_vision_fixtures as mv  # noqa: E402
import make_lm_fixtures as ml  # noqa: E402


def rel(out, ref):
    return ((out.double() - ref).abs().max() / ref.abs().max()).item()


def run(model, fn, modes=("fp32", "bf16")):
    """fn(model) in fp32 and under CPU autocast bf16.  torch 1.13's CPU
    autocast leaves layer_norm out of its fp32 list, and its CPU kernel then
    refuses a bf16 input with fp32 parameters: it runs on the input upcast,
    as CUDA autocast runs it (fp32 list)."""
    res = {}
    layer_norm = F.layer_norm
    for mode in modes:
        if mode == "bf16":
            F.layer_norm = lambda x, *a, **k: layer_norm(x.float(), *a, **k)
        try:
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=mode == "bf16"):
                res[mode] = fn(model)
        finally:
            F.layer_norm = layer_norm
    return res


def load(folder, name):
    """The stored model as float32."""
    return {k: v.float() for k, v in load_file(os.path.join(folder, name + ".safetensors")).items()}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--e2e", default=os.path.join(here, "..", "tests", "data", "e2e"))
    ap.add_argument("--lm", default=os.path.join(here, "..", "tests", "data", "lm"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for name, kw, *_ in mf.CONFIGS:
        model, _ = mf.build(kw)
        model.load_state_dict(load(args.e2e, name))
        ref = load_file(os.path.join(args.e2e, name + ".ref.safetensors"))
        key = "logits" if "logits" in ref else "features"
        out = run(model, lambda m: mf.features_and_logits(m, ref["images"])[1 if key == "logits" else 0])
        rows.append((name, {k: rel(v, ref[key]) for k, v in out.items()}))
    for c in mv.CASES:
        model = mv.build(c)
        model.load_state_dict(load(args.e2e, c["name"]))
        ref = load_file(os.path.join(args.e2e, c["name"] + ".ref.safetensors"))
        out = run(model, lambda m: mv.outputs(m, ref["images"])[1])
        rows.append((c["name"], {k: rel(v, ref["logits"]) for k, v in out.items()}))
    for c in ml.CASES:
        model = ml.build(c)
        model.load_state_dict(load(args.lm, c["name"]))
        ref = load_file(os.path.join(args.lm, c["name"] + ".ref.safetensors"))
        out = run(model, lambda m: ml.logits_of(m, ref["tokens"].long()))
        rows.append((c["name"], {k: rel(v, ref["logits"]) for k, v in out.items()}))
    print(f"{'fixture':26s} {'torch fp32':>10s} {'torch bf16 autocast':>20s}")
    for name, e in rows:
        print(f"{name:26s} {e['fp32']:10.2e} {e['bf16']:20.2e}")
    bf = sorted(e["bf16"] for _, e in rows)
    print(f"bf16 autocast over {len(bf)} fixtures: median {bf[len(bf) // 2]:.2e}, max {bf[-1]:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
