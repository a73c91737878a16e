#!/usr/bin/env python3
"""One of bench_torch.py's configurations with timm's random initialisation
under seed 0, as the CPU anchors read it: OUT/NAME (safetensors, named as
bench_torch.py names the model, for gmlp-bench --model; scripts/bench does the
same) and OUT/NAME.onnx (ONNX Runtime, OpenVINO), the batch a dynamic axis.

    export_onnx.py NAME OUT_DIR"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_torch as bt  # noqa: E402


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in bt.STANDARD:
        sys.exit(f"usage: export_onnx.py NAME OUT_DIR (NAME: {', '.join(bt.STANDARD)})")
    name, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    model = bt.save_seeded(name, os.path.join(out, name))
    img = bt.STANDARD[name][1]
    x = torch.zeros(1, 3, img, img)
    torch.onnx.export(model, x, os.path.join(out, f"{name}.onnx"), input_names=["images"], output_names=["logits"],
                      dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}}, opset_version=14)


if __name__ == "__main__":
    main()
