#!/usr/bin/env python3
"""PyTorch's own error in its precision modes on the e2e and LM fixtures,
against their float64 references, in the tests' metric: max |out - ref| /
max |ref| over the logits (the features of headless models).  On the CPU its
nearest mode, autocast bf16 (the one Debian's torch has); on a GPU (--device
cuda) fp32, TF32 (allow_tf32) and autocast bf16 / fp16, as the precision
modes' issue asks beside the library's figures on the same GPU (test_e2e and
test_lm print theirs per mode).  For bench/NOTES.md "Precision modes:
measured error"; scripts/gpu-check's errors step runs it there.

    .venv-tools/bin/python tools/torch_autocast_error.py [--e2e tests/data/e2e] [--lm tests/data/lm]
        [--device cpu|cuda] [--modes fp32,tf32,bf16,fp16]
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


AUTOCAST = {"bf16": torch.bfloat16, "fp16": torch.float16}


def run(model, fn, device, modes):
    """fn(model) on device in each mode: fp32 (TF32 off), tf32 (TF32 on for
    matmuls and convolutions: CUDA only), bf16 / fp16 (autocast).  torch
    1.13's CPU autocast leaves layer_norm out of its fp32 list, and its CPU
    kernel then refuses a bf16 input with fp32 parameters: there it runs on
    the input upcast, as CUDA autocast runs it (fp32 list)."""
    res = {}
    layer_norm = F.layer_norm
    model = model.to(device).eval()
    for mode in modes:
        if device == "cpu" and mode in AUTOCAST:
            F.layer_norm = lambda x, *a, **k: layer_norm(x.float(), *a, **k)
        if device == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = mode == "tf32"
        try:
            with torch.no_grad(), torch.autocast(device, dtype=AUTOCAST.get(mode, torch.bfloat16),
                                                 enabled=mode in AUTOCAST):
                res[mode] = fn(model).float().cpu()
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
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--modes", help="comma-separated, of fp32,tf32,bf16,fp16 (default: fp32,bf16 on the CPU, all on cuda)")
    args = ap.parse_args()
    modes = (args.modes or ("fp32,bf16" if args.device == "cpu" else "fp32,tf32,bf16,fp16")).split(",")
    bad = [m for m in modes if m not in ("fp32", "tf32", "bf16", "fp16")] + (["tf32 (CUDA only)"] if "tf32" in modes and args.device == "cpu" else [])
    if bad:
        ap.error(f"--modes: {', '.join(bad)}")
    if args.device == "cuda" and not torch.cuda.is_available():
        print("torch_autocast_error: --device cuda, but torch sees no CUDA device", file=sys.stderr)
        return 1
    dev = args.device
    torch.set_num_threads(1)
    rows = []
    for name, kw, *_ in mf.CONFIGS:
        model, _ = mf.build(kw)
        model.load_state_dict(load(args.e2e, name))
        ref = load_file(os.path.join(args.e2e, name + ".ref.safetensors"))
        key = "logits" if "logits" in ref else "features"
        out = run(model, lambda m: mf.features_and_logits(m, ref["images"].to(dev))[1 if key == "logits" else 0],
                  dev, modes)
        rows.append((name, {k: rel(v, ref[key]) for k, v in out.items()}))
    for c in mv.CASES:
        model = mv.build(c)
        model.load_state_dict(load(args.e2e, c["name"]))
        ref = load_file(os.path.join(args.e2e, c["name"] + ".ref.safetensors"))
        out = run(model, lambda m: mv.outputs(m, ref["images"].to(dev))[1], dev, modes)
        rows.append((c["name"], {k: rel(v, ref["logits"]) for k, v in out.items()}))
    for c in ml.CASES:
        model = ml.build(c)
        model.load_state_dict(load(args.lm, c["name"]))
        ref = load_file(os.path.join(args.lm, c["name"] + ".ref.safetensors"))
        out = run(model, lambda m: ml.logits_of(m, ref["tokens"].long().to(dev)), dev, modes)
        rows.append((c["name"], {k: rel(v, ref["logits"]) for k, v in out.items()}))
    label = {"fp32": "fp32", "tf32": "tf32", "bf16": "bf16 autocast", "fp16": "fp16 autocast"}
    where = torch.cuda.get_device_name() if dev == "cuda" else "CPU"
    print(f"# PyTorch {torch.__version__} on {where}")
    print(f"{'fixture':26s}" + "".join(f" {'torch ' + label[m]:>20s}" for m in modes))
    for name, e in rows:
        print(f"{name:26s}" + "".join(f" {e[m]:20.2e}" for m in modes))
    for m in modes:
        v = sorted(e[m] for _, e in rows)
        print(f"{label[m]} over {len(v)} fixtures: median {v[len(v) // 2]:.2e}, max {v[-1]:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
