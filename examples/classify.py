#!/usr/bin/env python3
"""Classifies images with the gmlp Python package: by default the example images beside this
script with the bundled Fashion-MNIST model (models/ of the source tree; the wheel does not
carry it).

    pip install '.[pil]'                 # from the repository root: the package and Pillow
    python examples/classify.py
    python examples/classify.py -m MODEL_FILE_OR_FOLDER -k 5 IMAGE...
"""
from __future__ import annotations

import argparse
import pathlib

import numpy as np
from PIL import Image

import gmlp

HERE = pathlib.Path(__file__).resolve().parent
BUNDLED = HERE.parent / "models" / "fashion-mnist-gmlp.safetensors"


def main() -> None:
    ap = argparse.ArgumentParser(description="Classify images with a gMLP or MLP-Mixer model.")
    ap.add_argument("images", nargs="*", type=pathlib.Path, default=sorted(HERE.glob("*.png")))
    ap.add_argument("-m", "--model", default=BUNDLED, help="model file or folder (default: the bundled model)")
    ap.add_argument("-k", "--top", type=int, default=3, help="classes to show per image (default 3)")
    ap.add_argument("-d", "--device", help="OpenCL device: index, gpu, cpu or a name substring")
    args = ap.parse_args()
    with gmlp.load(args.model, device=args.device) as m:
        batch = np.stack([m.preprocess(Image.open(path)) for path in args.images])
        for path, top in zip(args.images, m.topk(m.classify(batch), k=args.top)):
            print(path)
            for index, label, prob in top:
                print(f"  {100 * prob:6.2f}%  {label if label is not None else index}")


if __name__ == "__main__":
    main()
