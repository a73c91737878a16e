#!/usr/bin/env python3
"""The reference for gmlp-classify --eval: timm's own evaluation of a timm
gMLP / MLP-Mixer / ResMLP .safetensors file (as gmlp-cl stores it) on an
ImageFolder tree: timm.data.create_dataset (ImageFolder: an image's class is
the name of the folder holding it, classes in natural order, or by
--class-map), the eval transform of the file's gmlp.* preprocessing keys
(timm's defaults where absent) through create_transform, a DataLoader, the
model in float32 and timm.utils.accuracy, averaged over batches as timm's
validate.py does.

    eval_ref.py MODEL.safetensors ROOT [--class-map FILE] [--batch N]

Prints JSON: images, top1, top5 (percent), classes (names by index) and
predictions: {path relative to ROOT: [target, top-1 class]}."""
import argparse
import json
import os
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file
from timm.data import create_dataset, create_transform
from timm.data.constants import DEFAULT_CROP_PCT, IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD
from timm.utils import AverageMeter, accuracy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_vision import parse_img_size, tensor_arch, timm_model  # noqa: E402


def floats(meta, key, default, channels):
    v = tuple(float(x) for x in meta[key].split(",")) if key in meta else tuple(default)
    return v * channels if len(v) == 1 else v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("root")
    ap.add_argument("--class-map", default="")
    ap.add_argument("--batch", type=int, default=100)
    args = ap.parse_args()
    with safe_open(args.model, "pt") as f:
        meta = f.metadata() or {}
    sd = load_file(args.model)
    img = parse_img_size(meta["gmlp.img_size"]) if "gmlp.img_size" in meta else None
    model = timm_model(sd, tensor_arch(sd), img).float().eval()
    chans = sd["stem.proj.weight"].shape[1]
    h, w = model.stem.img_size
    transform = create_transform(input_size=(chans, h, w), interpolation=meta.get("gmlp.interpolation", "bicubic"),
                                 mean=floats(meta, "gmlp.mean", IMAGENET_DEFAULT_MEAN, chans),
                                 std=floats(meta, "gmlp.std", IMAGENET_DEFAULT_STD, chans),
                                 crop_pct=float(meta.get("gmlp.crop_pct", DEFAULT_CROP_PCT)),
                                 crop_mode=meta.get("gmlp.crop_mode", "center"))
    ds = create_dataset("", root=args.root, search_split=False, class_map=args.class_map,
                        input_img_mode="L" if chans == 1 else "RGB", transform=transform)
    loader = torch.utils.data.DataLoader(ds, batch_size=args.batch, shuffle=False, num_workers=0)
    top1, top5, preds = AverageMeter(), AverageMeter(), []
    k = min(5, model.num_classes)
    with torch.no_grad():
        for x, target in loader:
            out = model(x)
            a1, a5 = accuracy(out, target, topk=(1, k))
            top1.update(a1.item(), x.size(0))
            top5.update(a5.item(), x.size(0))
            preds += zip(target.tolist(), out.argmax(-1).tolist())
    names = [os.path.relpath(ds.filename(i, absolute=True), args.root) for i in range(len(ds))]
    class_to_idx = ds.reader.class_to_idx
    print(json.dumps({"images": len(ds), "top1": top1.avg, "top5": top5.avg,
                      "classes": sorted(class_to_idx, key=class_to_idx.get),
                      "predictions": dict(zip(names, preds))}))


if __name__ == "__main__":
    main()
