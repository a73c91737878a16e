#!/usr/bin/env python3
"""Writes tests/data/hf/: small random-weight timm gMLP and MLP-Mixer models
saved as Hugging Face model folders by timm's own
``timm.models.save_for_hf(model, folder, safe_serialization=True)``, each with
preprocessing other than timm's defaults in its pretrained_cfg, and what timm
computes for a few PNGs through that preprocessing:

    CASE/model.safetensors, CASE/config.json   as save_for_hf writes them
    CASE.ref.safetensors   images  F32  N x C x H x W  timm's eval transform of each image:
                                        resolve_data_config({}, model=model), then
                                        create_transform(**that) on the PIL image
                           logits  F64  N x classes    the model in float64 on those inputs
                           __metadata__: inputs (the image paths, relative to tests/data/hf,
                           one per line, in batch order), data_config (JSON), generator
    CASE.ref.json          the same logits, their softmax, the inputs and data_config as JSON
    bin_only/              pytorch_model.bin + config.json (save_for_hf, safe_serialization=False)
    images/                the PNGs, copied from tests/data/preprocess

The models are built the way timm builds a registered model
(``build_model_with_cfg`` with the named variant's registry cfg and a
``pretrained_cfg_overlay``), only tiny; every parameter is randomised as in
make_fixtures.py.  Run from the repository root, deterministic, a few seconds:

    /usr/bin/python3 tools/make_hf_fixtures.py      # torch + timm + safetensors + huggingface_hub
"""
import json
import os
import shutil
import sys

import numpy as np
import torch
from PIL import Image
from safetensors.torch import load_file, save_file
from timm.data import create_transform, resolve_data_config
from timm.models import build_model_with_cfg, save_for_hf, split_model_name_tag
from timm.models.mlp_mixer import MixerBlock, MlpMixer, SpatialGatingBlock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import FASHION_LABELS, randomise  # noqa: E402
from stfile import sort_metadata  # noqa: E402

try:
    from timm.layers import GatedMlp, Mlp
except ImportError:  # timm < 0.9
    from timm.models.layers import GatedMlp, Mlp

SEED = 20261124
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "hf")
IMAGES = ["rgb_small.png", "rgba_wide.png", "grey_large.png"]  # 19x23 RGB, 90x41 RGBA, 57x64 grey
IMAGENET = dict(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))

# name, registry NAME[.TAG] (the cfg the overlay starts from), MlpMixer sizes, pretrained_cfg overlay,
# save_for_hf model_config
CASES = [
    # mixer_b16_224.miil_in21k_ft_in1k's preprocessing from the registry (mean 0, std 1, bilinear);
    # ImageNet-style synset names with descriptions
    ("mixer_miil", "mixer_b16_224.miil_in21k_ft_in1k",
     dict(in_chans=3, img_size=30, patch_size=6, embed_dim=16, mlp_ratio=(0.5, 4.0), num_blocks=2, num_classes=5),
     {},
     dict(label_names=[f"n0{i}" for i in range(5)],
          label_descriptions={f"n0{i}": d for i, d in enumerate(["tench", "goldfish", "great white shark",
                                                                   "tiger shark", "hammerhead"])})),
    # one channel, no crop; labels in the pretrained_cfg (not at the top of config.json)
    ("gmlp_grey_nocrop", "gmlp_ti16_224",
     dict(in_chans=1, img_size=28, patch_size=7, embed_dim=12, mlp_ratio=4, num_blocks=2, num_classes=10),
     dict(mean=(0.286,), std=(0.353,), interpolation="bicubic", crop_pct=1.0, num_classes=10,
          label_names=tuple(FASHION_LABELS)),
     {}),
    # non-square input, ImageNet mean/std, crop 0.95, no labels
    ("gmlp_wide", "gmlp_s16_224",
     dict(in_chans=3, img_size=(24, 40), patch_size=8, embed_dim=16, mlp_ratio=4, num_blocks=2, num_classes=4),
     dict(interpolation="bicubic", crop_pct=0.95, **IMAGENET),
     {}),
    # nearest resampling, crop_pct above 1 (the resized image is padded), labels at the top
    ("gmlp_nearest_pad", "gmlp_b16_224",
     dict(in_chans=3, img_size=32, patch_size=8, embed_dim=16, mlp_ratio=6, num_blocks=1, num_classes=3),
     dict(mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3), interpolation="nearest", crop_pct=1.15),
     dict(label_names=["cat", "dog", "bird"])),
    # crop_mode squash: both sides to size / crop_pct, aspect ratio not kept, then a centre crop
    ("gmlp_squash", "gmlp_s16_224",
     dict(in_chans=3, img_size=24, patch_size=6, embed_dim=12, mlp_ratio=4, num_blocks=1, num_classes=4),
     dict(interpolation="bilinear", crop_pct=0.9, crop_mode="squash"),
     {}),
    # crop_mode border: the longer side to size / crop_pct, then crop or pad with the mean colour
    ("mixer_border", "mixer_b16_224",
     dict(in_chans=3, img_size=32, patch_size=8, embed_dim=16, mlp_ratio=(0.5, 4.0), num_blocks=1, num_classes=3),
     dict(interpolation="bicubic", crop_pct=0.95, crop_mode="border", **IMAGENET),
     {}),
    # gmlp.* metadata (which the library follows; the reference is made with it) that config.json
    # contradicts: CONFLICTS below rewrites config.json after save_for_hf
    ("gmlp_conflict", "gmlp_s16_224",
     dict(in_chans=3, img_size=16, patch_size=4, embed_dim=8, mlp_ratio=4, num_blocks=1, num_classes=3),
     dict(mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3), interpolation="bilinear", crop_pct=0.9),
     dict(label_names=["cat", "dog", "bird"])),
]
# case: (config.json edits, as (keys, value), made after the reference; gmlp.* metadata written
# into model.safetensors with the values the reference used)
CONFLICTS = {
    "gmlp_conflict": (
        [(("pretrained_cfg", "mean"), [0.485, 0.456, 0.406]), (("pretrained_cfg", "interpolation"), "bicubic"),
         (("label_names",), ["cat", "dog", "fish"])],
        {"gmlp.mean": "0.5,0.4,0.3", "gmlp.std": "0.2,0.25,0.3", "gmlp.interpolation": "bilinear",
         "gmlp.crop_pct": "0.9", "gmlp.labels": "cat\ndog\nbird"}),
}


def build(spec, sizes, overlay, seed):
    """A tiny MlpMixer built as timm's factory builds ``spec`` (NAME[.TAG]), randomised."""
    variant, tag = split_model_name_tag(spec)
    gmlp = variant.startswith("gmlp")
    h, w = (sizes["img_size"],) * 2 if isinstance(sizes["img_size"], int) else sizes["img_size"]
    # the tag and licence describe these random weights, not the registry's
    overlay = dict(overlay, input_size=(sizes["in_chans"], h, w), tag="random", license="mit")
    model = build_model_with_cfg(MlpMixer, variant, pretrained=False, pretrained_cfg=tag or None,
                                 pretrained_cfg_overlay=overlay,
                                 block_layer=SpatialGatingBlock if gmlp else MixerBlock,
                                 mlp_layer=GatedMlp if gmlp else Mlp, **sizes)
    randomise(model, np.random.default_rng([SEED, seed]))
    return model.eval()


def reference(name, model, folder):
    """CASE.ref.safetensors and CASE.ref.json from the saved model and the images."""
    with open(os.path.join(folder, "config.json")) as f:
        pcfg = json.load(f)["pretrained_cfg"]
    cfg = resolve_data_config({}, model=model)
    for k in ("input_size", "mean", "std", "crop_pct", "interpolation", "crop_mode"):  # config.json says the same
        want = list(cfg[k]) if isinstance(cfg[k], tuple) else cfg[k]
        assert pcfg[k] == want, (name, k, pcfg[k], want)
    t = create_transform(**cfg)
    c = cfg["input_size"][0]
    x = torch.stack([t(Image.open(os.path.join(OUT, "images", p)).convert("L" if c == 1 else "RGB"))
                     for p in IMAGES])
    stored = load_file(os.path.join(folder, "model.safetensors"))
    sd = model.state_dict()
    assert stored.keys() == sd.keys() and all(torch.equal(stored[k], sd[k]) for k in sd), name
    with torch.no_grad():
        logits = model.double()(x.double())
    inputs = [f"images/{p}" for p in IMAGES]
    data_config = {k: list(v) if isinstance(v, tuple) else v for k, v in cfg.items()}
    path = os.path.join(OUT, name + ".ref.safetensors")
    save_file({"images": x.contiguous(), "logits": logits.contiguous()}, path,
              metadata={"inputs": "\n".join(inputs), "data_config": json.dumps(data_config, sort_keys=True),
                        "generator": "tools/make_hf_fixtures.py"})
    sort_metadata(path)
    os.chmod(path, 0o644)
    with open(os.path.join(OUT, name + ".ref.json"), "w") as f:
        json.dump({"inputs": inputs, "data_config": data_config, "logits": logits.tolist(),
                   "probs": torch.softmax(logits, -1).tolist()}, f, indent=1)
        f.write("\n")
    return logits


def contradict(folder, edits, metadata):
    """config.json edited against the gmlp.* metadata now written into model.safetensors."""
    path = os.path.join(folder, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    for keys, value in edits:
        d = cfg
        for k in keys[:-1]:
            d = d[k]
        d[keys[-1]] = value
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)
    st = os.path.join(folder, "model.safetensors")
    save_file(load_file(st), st, metadata=metadata)
    sort_metadata(st)


def main():
    os.makedirs(os.path.join(OUT, "images"), exist_ok=True)
    for p in IMAGES:
        shutil.copyfile(os.path.join(OUT, "..", "preprocess", p), os.path.join(OUT, "images", p))
    torch.set_grad_enabled(False)
    for i, (name, variant, sizes, overlay, model_config) in enumerate(CASES):
        model = build(variant, sizes, overlay, i if i < 4 else 100 + i)  # bin_only has seed 4
        folder = os.path.join(OUT, name)
        shutil.rmtree(folder, ignore_errors=True)
        save_for_hf(model, folder, model_config=model_config, safe_serialization=True)
        logits = reference(name, model, folder)
        if name in CONFLICTS:
            contradict(folder, *CONFLICTS[name])
        print(f"{name:18s} {variant:32s} input_size {model.pretrained_cfg['input_size']} "
              f"max|logit| {logits.abs().max().item():.3f}")
    # a folder with the weights only as a pickle, which gmlp-cl refuses (export it first)
    model = build("gmlp_s16_224", dict(in_chans=3, img_size=16, patch_size=4, embed_dim=8, mlp_ratio=4,
                                        num_blocks=1, num_classes=3), {}, 4)
    folder = os.path.join(OUT, "bin_only")
    shutil.rmtree(folder, ignore_errors=True)
    save_for_hf(model, folder, safe_serialization=False)
    total = 0
    for dirpath, _, files in os.walk(OUT):
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o644)
            total += os.path.getsize(os.path.join(dirpath, f))
    print(f"total {total} bytes in {os.path.normpath(OUT)}")
    assert total < 400 << 10
    return 0


if __name__ == "__main__":
    sys.exit(main())
