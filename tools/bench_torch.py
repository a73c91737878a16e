#!/usr/bin/env python3
"""The PyTorch baseline for gmlp-bench: the same configurations and batches
through timm, CUDA if present, else CPU, written in gmlp-bench's JSON schema
so that `gmlp-bench --compare torch.json` prints the ratios.
    python3 tools/bench_torch.py --batch 1,64 --json torch.json [--tiny] [--mode fp32|tf32|bf16] [--threads N]
fp32 turns TF32 off (the fair comparison with gmlp-cl's fp32); tf32 and bf16
(autocast) are for reference."""
import argparse
import json
import os
import statistics
import time

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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", default="1,64")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--mode", choices=["fp32", "tf32", "bf16"], default="fp32")
    ap.add_argument("--json")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                    help="CPU threads (default: every processor this process may use; some builds of "
                         "PyTorch start with one, where gmlp-cl's OpenCL CPU device uses them all)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = args.mode == "tf32"
        torch.backends.cudnn.allow_tf32 = args.mode == "tf32"
    name = torch.cuda.get_device_name() if dev.type == "cuda" else "cpu"
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    rows = []
    for model_name, spec in (TINY if args.tiny else STANDARD).items():
        model = build(spec).to(dev).eval()
        for batch in [int(b) for b in args.batch.split(",")]:
            x = torch.randn(batch, 3, spec[1], spec[1], device=dev)
            times = []
            with torch.inference_mode(), torch.autocast(dev.type, torch.bfloat16, enabled=args.mode == "bf16"):
                for i in range(args.warmup + args.runs):
                    sync()
                    t = time.perf_counter()
                    model(x)
                    sync()
                    if i >= args.warmup:
                        times.append(time.perf_counter() - t)
            med = statistics.median(times)
            ips = batch / med
            row = {"device": name, "model": model_name, "batch": batch, "median_s": med,
                   "spread_s": max(times) - min(times), "images_per_s": ips,
                   "tflops": ips * flops_per_image(spec) / 1e12, "mode": args.mode,
                   "threads": torch.get_num_threads()}
            rows.append(row)
            print(f"{name:28.28s} {model_name:16s} {batch:6d} {med * 1e3:10.3f} ms {ips:10.1f} images/s "
                  f"{row['tflops']:8.3f} TFLOP/s ({args.mode})", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tool": "bench_torch", "torch": torch.__version__, "results": rows}, f, indent=2)


if __name__ == "__main__":
    main()
