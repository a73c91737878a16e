#!/usr/bin/env python3
"""The PyTorch baseline for gmlp-bench: the same configurations and batches
through timm, CUDA if present, else CPU, in PyTorch's modes nearest to gmlp-cl's
precisions, written in gmlp-bench's JSON schema (a row's "precision") so that
`gmlp-bench --precision LIST --compare torch.json` sets each of gmlp-cl's modes
beside PyTorch's same mode.
    python3 tools/bench_torch.py --batch 1,64 --json torch.json [--tiny] [--precision fp32,tf32,bf16,fp16]
                                 [--compile] [--threads N]
  fp32  TF32 off (allow_tf32 False, float32 matmul precision "highest"): gmlp-cl's fp32
  tf32  allow_tf32 and set_float32_matmul_precision("high"): CUDA from sm_80 on (a CPU has no TF32: skipped)
  bf16  torch.autocast(device, torch.bfloat16): CPU and CUDA
  fp16  torch.autocast(device, torch.float16): CUDA, and a CPU where this PyTorch's autocast runs it
A mode this PyTorch or device does not run is skipped, saying why (on stderr
and in the JSON's "skipped").  --compile: torch.compile the model (PyTorch 2.0
on), the compilation in the warm-up runs."""
import argparse
import json
import os
import statistics
import sys
import time
import warnings

import torch
from timm.layers import GatedMlp
from timm.models.mlp_mixer import Affine, MlpMixer, ResBlock, SpatialGatingBlock

# name: (family, img, patch, dim, depth, mlp_ratio, classes) -- as bench/image_bench.c
STANDARD = {
    "gmlp_ti16_224": ("gmlp", 224, 16, 128, 30, 6, 1000),
    "gmlp_s16_224": ("gmlp", 224, 16, 256, 30, 6, 1000),
    "gmlp_b16_224": ("gmlp", 224, 16, 512, 30, 6, 1000),
    "mixer_b16_224": ("mixer", 224, 16, 768, 12, (0.5, 4.0), 1000),
    "resmlp_12_224": ("resmlp", 224, 16, 384, 12, 4, 1000),
}
TINY = {
    "gmlp_tiny": ("gmlp", 32, 4, 32, 2, 3, 10),
    "mixer_tiny": ("mixer", 32, 4, 32, 2, (0.5, 4.0), 10),
}
# timm's registrations of each family (mixer: MlpMixer's defaults)
FAMILY = {
    "gmlp": dict(block_layer=SpatialGatingBlock, mlp_layer=GatedMlp),
    "mixer": {},
    "resmlp": dict(block_layer=ResBlock, norm_layer=Affine),
}


def build(spec):
    family, img, patch, dim, depth, ratio, classes = spec
    extra = FAMILY[family]
    return MlpMixer(num_classes=classes, img_size=img, patch_size=patch, num_blocks=depth, embed_dim=dim,
                    mlp_ratio=ratio, **extra)


def save_seeded(name, path, tiny=False):
    """The named configuration with timm's random initialisation under seed 0, its weights saved as
    safetensors at path (what gmlp-bench --model reads); returns the model."""
    from safetensors.torch import save_file
    torch.manual_seed(0)
    model = build((TINY if tiny else STANDARD)[name]).eval()
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, path)
    return model


def flops_per_image(spec):
    """Linear layers, 2 x multiply-adds (gmlp-bench counts the same)."""
    family, img, patch, dim, depth, ratio, classes = spec
    n = (img // patch) ** 2
    if family == "gmlp":
        h = int(ratio * dim)
        block = n * dim * h + (h // 2) * n * n + n * (h // 2) * dim
    elif family == "resmlp":
        block = n * n * dim + 2 * n * dim * int(ratio * dim)
    else:
        t, h = int(ratio[0] * dim), int(ratio[1] * dim)
        block = 2 * t * n * dim + 2 * n * dim * h
    return 2 * (n * 3 * patch * patch * dim + depth * block + dim * classes)


PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
AUTOCAST = {"bf16": torch.bfloat16, "fp16": torch.float16}


def autocast_runs(dev, dtype):
    """Whether this PyTorch's autocast on dev runs a matrix product in dtype (an older one warns that the
    CPU takes bfloat16 only and runs float32)."""
    a = torch.ones(4, 4, device=dev)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with torch.autocast(dev.type, dtype):
                return torch.mm(a, a).dtype == dtype
        except (RuntimeError, ValueError):
            return False


def unsupported(dev, mode):
    """Why this PyTorch on dev has no such mode, or None."""
    if mode == "tf32" and dev.type != "cuda":
        return "TF32 does not exist on a CPU (PyTorch's allow_tf32 is for NVIDIA GPUs)"
    if mode == "tf32" and torch.cuda.get_device_capability(dev) < (8, 0):
        return "TF32 needs an NVIDIA GPU from Ampere (sm_80) on"
    if mode in AUTOCAST and not autocast_runs(dev, AUTOCAST[mode]):
        return f"this PyTorch ({torch.__version__}) has no {mode} autocast on {dev.type}"
    return None


def set_mode(dev, mode):
    """TF32 on in tf32 mode only (cuDNN's own switch is on by default)."""
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        torch.backends.cudnn.allow_tf32 = mode == "tf32"
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision("high" if mode == "tf32" else "highest")


def time_model(model, x, mode, dev, warmup, runs):
    """The seconds of each of runs forwards after warmup untimed ones, in mode."""
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    times = []
    with torch.inference_mode(), torch.autocast(dev.type, AUTOCAST.get(mode, torch.bfloat16), enabled=mode in AUTOCAST):
        for i in range(warmup + runs):
            sync()
            t = time.perf_counter()
            model(x)
            sync()
            if i >= warmup:
                times.append(time.perf_counter() - t)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", default="1,64")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--precision", default="fp32", help="a comma list of fp32, tf32, bf16, fp16 (default fp32)")
    ap.add_argument("--compile", action="store_true", help="torch.compile the models (PyTorch 2.0 on)")
    ap.add_argument("--compile-mode", default="default",
                    help="torch.compile's mode with --compile: default, reduce-overhead (CUDA graphs), max-autotune")
    ap.add_argument("--json")
    ap.add_argument("--models", help="a comma list of the configurations' names (default all)")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                    help="CPU threads (default: every processor this process may use; some builds of "
                         "PyTorch start with one, where gmlp-cl's OpenCL CPU device uses them all)")
    args = ap.parse_args()
    modes = args.precision.split(",")
    if any(m not in PRECISIONS for m in modes) or len(set(modes)) != len(modes):
        ap.error(f"--precision {args.precision}: a comma list of {', '.join(PRECISIONS)}, each once")
    if args.compile and not hasattr(torch, "compile"):
        ap.error(f"--compile: this PyTorch ({torch.__version__}) has no torch.compile (2.0 on)")
    torch.set_num_threads(args.threads)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = torch.cuda.get_device_name() if dev.type == "cuda" else "cpu"
    rows, skipped = [], {}
    for mode in modes:
        why = unsupported(dev, mode)
        if why:
            skipped[mode] = why
            print(f"bench_torch.py: {mode} skipped: {why}", file=sys.stderr, flush=True)
            continue
        set_mode(dev, mode)
        for model_name, spec in (TINY if args.tiny else STANDARD).items():
            if args.models and model_name not in args.models.split(","):
                continue
            model = build(spec).to(dev).eval()
            if args.compile:
                torch._dynamo.reset()  # no graph of another mode's settings reused
                model = torch.compile(model, mode=args.compile_mode)
            for batch in [int(b) for b in args.batch.split(",")]:
                x = torch.randn(batch, 3, spec[1], spec[1], device=dev)
                try:
                    times = time_model(model, x, mode, dev, args.warmup, args.runs)
                except RuntimeError as e:  # Debian's 1.13: timm's LayerNorm under CPU bf16 autocast
                    skipped[f"{mode} {model_name}"] = str(e)
                    print(f"bench_torch.py: {mode} {model_name} skipped: {e}", file=sys.stderr, flush=True)
                    break
                med = statistics.median(times)
                ips = batch / med
                row = {"device": name, "model": model_name, "batch": batch, "median_s": med,
                       "spread_s": max(times) - min(times), "images_per_s": ips,
                       "tflops": ips * flops_per_image(spec) / 1e12, "precision": mode, "compile": args.compile,
                       "threads": torch.get_num_threads()}
                rows.append(row)
                print(f"{name:28.28s} {model_name:16s} {batch:6d} {med * 1e3:10.3f} ms {ips:10.1f} images/s "
                      f"{row['tflops']:8.3f} TFLOP/s ({mode}{', compiled' if args.compile else ''})", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tool": "bench_torch", "torch": torch.__version__, "skipped": skipped, "results": rows}, f,
                      indent=2)


if __name__ == "__main__":
    main()
