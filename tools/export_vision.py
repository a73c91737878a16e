#!/usr/bin/env python3
"""Exports a timm gMLP, MLP-Mixer or ResMLP checkpoint, or a g-mlp-pytorch gMLPVision
state_dict, to the safetensors file gmlp-cl loads.

    tools/export_vision.py CHECKPOINT OUT.safetensors [--ema] [--arch NAME[.TAG]]
                           [--labels FILE] [--meta KEY=VALUE ...] [--trust-pickle]

CHECKPOINT is what ``torch.save`` wrote: timm's train.py checkpoint (``.pth.tar``:
a dict with ``state_dict``, optionally ``state_dict_ema``, ``args``, the
optimizer...), a dict with ``model`` / ``model_ema``, or a bare state_dict
(``.pth``, ``.bin``).  Keys saved from DistributedDataParallel lose their
``module.`` prefix; the tensors are written otherwise unchanged (timm's names,
dtype and values).  ``--ema`` takes the EMA weights (``state_dict_ema`` or
``model_ema``) instead.

The architecture (``gmlp``, ``mixer``, ``gmixer``: a Mixer with GluMlp, or ``resmlp``)
and every size come from the tensors; a ResMLP checkpoint of Facebook's original
code (``patch_embed.``, ``blocks.N.attn``, ``gamma_1``) is renamed to timm's names
first, by timm's own ``checkpoint_filter_fn`` (as ``timm.create_model`` does);
the timm model name only chooses the preprocessing.  The name is ``--arch``, else
the checkpoint's ``args.model``; with ``NAME.TAG`` that tag's pretrained_cfg is
taken from timm's registry (no download), without a tag the name's default one.
The preprocessing is then resolved as timm's validate.py resolves it for this
checkpoint (``resolve_data_config(args, pretrained_cfg)``: the training run's
``--mean``, ``--std``, ``--crop-pct``, ``--interpolation``, ``--img-size`` or
``--input-size``, ``--crop-mode`` win over the cfg) and written as ``gmlp.img_size``,
``gmlp.mean``, ``gmlp.std``, ``gmlp.crop_pct``, ``gmlp.interpolation`` and, when
not ``center``, ``gmlp.crop_mode``.  An
``args.model`` that timm does not know is noted and ignored; with no name no
preprocessing metadata is written (the library then uses timm's defaults for the
architecture).  ``--labels`` (one class name per line) gives ``gmlp.labels``, and
``--meta`` adds or overrides any key.

A g-mlp-pytorch ``gMLPVision`` state_dict (``to_patch_embed.1.weight``,
``layers.N.fn.fn...``) is written with its names unchanged and ``gmlp.arch``
``gmlp_vision``, ``gmlp.patch_size`` and ``gmlp.img_size``: the patch is the square
one (with 1-3 channels) that the embedding's width allows, the image the square
grid of the spatial weights' tokens; give ``--meta gmlp.patch_size=H,W`` and
``--meta gmlp.img_size=H,W`` for non-square ones.  g-mlp-pytorch defines no
preprocessing: give the training's with ``--meta gmlp.mean=... gmlp.std=...``
(and crop_pct, interpolation), else gmlp-cl assumes timm's defaults.  The
tensors are checked by loading them strictly into a ``gMLPVision`` of those sizes
(needs g-mlp-pytorch).

The checkpoint is a pickle, loaded with ``torch.load(weights_only=True)``
(``argparse.Namespace`` allowed where PyTorch has ``add_safe_globals``, 2.4+).
What that cannot load (train.py's ``args`` on older PyTorch, other objects) is
refused unless ``--trust-pickle`` is given, which unpickles it fully: only for
files you trust, as unpickling can run arbitrary code.
"""
import argparse
import math
import os
import pickle
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stfile  # noqa: E402

CROP_MODES = ("center", "squash", "border")  # timm's eval crop modes, all three in gmlp_preprocess_rgb8
INTERPOLATIONS = ("bicubic", "bilinear", "nearest", "box", "hamming", "lanczos")  # what timm's eval transform takes


class ExportError(ValueError):
    """The checkpoint is not something gmlp-cl can run, or cannot be read."""


def note(msg):
    print(f"export_vision: note: {msg}", file=sys.stderr)


def load_checkpoint(path, trust_pickle):
    with open(path, "rb") as f:
        head = f.read(2)
    if head != b"PK" and head[:1] != b"\x80":
        raise ExportError(f"{path}: not a PyTorch checkpoint (torch.save writes a zip archive, before "
                          "PyTorch 1.6 a pickle)")
    if trust_pickle:
        return torch.load(path, map_location="cpu", weights_only=False)
    if hasattr(torch.serialization, "add_safe_globals"):
        torch.serialization.add_safe_globals([argparse.Namespace])
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch.load of arbitrary bytes can raise almost anything
        if not isinstance(e, pickle.UnpicklingError) or "Weights only load failed" not in str(e):
            raise ExportError(f"{path}: not a PyTorch checkpoint ({type(e).__name__}: {e})") from None
        why = str(e).split("WeightsUnpickler error:")[-1].strip().splitlines()[0]
        if why == "Unsupported operand 71":  # pickle's BINFLOAT: optimizer states, metrics, args
            why = "a float, which weights_only loads from PyTorch 2.0 on"
        raise ExportError(f"{path}: torch.load(weights_only=True) of PyTorch {torch.__version__} cannot load "
                          f"it ({why}); if you trust the file, run again with --trust-pickle, which "
                          "unpickles it fully (unpickling can run arbitrary code)") from None


def split_checkpoint(ckpt, ema):
    """(state_dict with 'module.' removed, which entry it came from, args as a dict or None)."""
    if not isinstance(ckpt, dict):
        raise ExportError(f"the checkpoint holds a {type(ckpt).__name__}, not a dict or state_dict")
    if all(torch.is_tensor(v) for v in ckpt.values()):
        if ema:
            raise ExportError("--ema: the file is a bare state_dict, it has no state_dict_ema")
        sd, source, args = ckpt, "state_dict", None
    else:
        keys = ("state_dict_ema", "model_ema") if ema else ("state_dict", "model")
        source = next((k for k in keys if ckpt.get(k) is not None), None)
        if source is None:
            raise ExportError(f"the checkpoint has no {' or '.join(keys)} (its entries: "
                              f"{', '.join(map(str, ckpt))})")
        sd, args = ckpt[source], ckpt.get("args")
        if not ema and ckpt.get("state_dict_ema") is not None:
            note("the checkpoint also holds EMA weights (state_dict_ema): --ema exports those")
        if isinstance(args, argparse.Namespace):
            args = vars(args)
        elif args is not None and not isinstance(args, dict):
            note(f"the checkpoint's args are a {type(args).__name__}, not a Namespace or dict: ignored")
            args = None
    if not isinstance(sd, dict):
        raise ExportError(f"{source} is a {type(sd).__name__}, not a state_dict")
    out = {}
    for k, v in sd.items():
        name = k[len("module."):] if k.startswith("module.") else k
        if not torch.is_tensor(v):
            raise ExportError(f"{source}: {k} is a {type(v).__name__}, not a tensor")
        if name in out:
            raise ExportError(f"{source} has both {name} and module.{name}")
        out[name] = v.contiguous()
    return out, source, args


def tensor_arch(sd):
    """'gmlp', 'mixer', 'gmixer', 'resmlp' or 'gmlp_vision' from the tensor names; refuses anything else
    with a hint."""
    if "stem.proj.weight" in sd and "blocks.0.mlp_channels.gate.proj.weight" in sd:
        return "gmlp"
    if "stem.proj.weight" in sd and "blocks.0.linear_tokens.weight" in sd:
        return "resmlp"
    if "stem.proj.weight" in sd and "blocks.0.mlp_tokens.fc1.weight" in sd:
        fc1, fc2 = sd["blocks.0.mlp_tokens.fc1.weight"], sd.get("blocks.0.mlp_tokens.fc2.weight")
        glu = fc2 is not None and fc1.dim() == fc2.dim() == 2 and fc2.shape[1] * 2 == fc1.shape[0]
        return "gmixer" if glu else "mixer"  # gmixer_*: GluMlp's fc2 takes half of fc1's outputs
    if "to_embed.weight" in sd:
        raise ExportError("this is a g-mlp-pytorch language model: export it with tools/export_lm.py")
    if "to_patch_embed.1.weight" in sd:
        return "gmlp_vision"
    first = ", ".join(list(sd)[:4])
    raise ExportError("not a timm gMLP, MLP-Mixer or ResMLP state_dict: no stem.proj.weight with "
                      "blocks.0.mlp_channels.gate.proj.weight (gMLP), blocks.0.mlp_tokens.fc1.weight "
                      f"(Mixer) or blocks.0.linear_tokens.weight (ResMLP); its first tensors: {first}")


def name_arch(name):
    """'gmlp', 'mixer', 'gmixer' or 'resmlp' for a registered timm gMLP / Mixer / ResMLP name, else None."""
    for arch in ("gmlp", "mixer", "gmixer", "resmlp"):
        if name.startswith(arch + "_"):
            return arch
    return None


def resolve_name(spec, from_args):
    """(name, pretrained_cfg dict) of NAME[.TAG], or (None, None) for an args.model timm does not know."""
    from timm.models import get_pretrained_cfg, is_model, list_pretrained, split_model_name_tag

    name, tag = split_model_name_tag(spec)
    if not is_model(name):
        if from_args:
            note(f"args.model {spec!r} is not a timm model name: ignored")
            return None, None
        raise ExportError(f"--arch {spec}: timm has no model named {name!r}")
    try:
        cfg = get_pretrained_cfg(spec)
    except RuntimeError:
        tags = ", ".join(list_pretrained(name + ".*")) or "none"
        raise ExportError(f"{spec}: timm has no tag {tag!r} for {name} (its tags: {tags})") from None
    return name, cfg.to_dict() if cfg is not None else {}


def channel_norm(args, cfg, in_chans):
    """args with the mean and std for in_chans channels as timm's
    resolve_input_data_config takes them: the args' own (1 value or in_chans),
    else the cfg's (or ImageNet's), whose other counts are averaged."""
    from timm.data import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD

    args = dict(args, in_chans=in_chans)
    for key, default in (("mean", IMAGENET_DEFAULT_MEAN), ("std", IMAGENET_DEFAULT_STD)):
        value = args.get(key)
        if value is None:
            value = cfg.get(key)
            value = default if value is None else value
            value = (value,) if isinstance(value, (int, float)) else tuple(value)
            if len(value) not in (1, in_chans):
                note(f"the {key} {list(value)} does not match the model's {in_chans} channel(s): "
                     "using its average, as timm does")
                value = (sum(value) / len(value),)
        args[key] = value
    return args


def data_metadata(cfg, args, in_chans):
    """The gmlp.* preprocessing keys, resolved as timm's validate.py does."""
    from timm.data import resolve_data_config

    try:
        d = resolve_data_config(channel_norm(args or {}, cfg, in_chans), pretrained_cfg=cfg)
    except AssertionError:
        raise ExportError("timm cannot resolve the data settings in the checkpoint's args (img_size, "
                          "input_size, mean, std)") from None
    if d["crop_mode"] not in CROP_MODES:
        raise ExportError(f"crop_mode {d['crop_mode']!r}: gmlp-cl has {', '.join(CROP_MODES)}")
    if d["interpolation"] not in INTERPOLATIONS:
        raise ExportError(f"interpolation {d['interpolation']!r}: gmlp-cl has {', '.join(INTERPOLATIONS)}")
    _, h, w = d["input_size"]
    return {"gmlp.img_size": f"{h},{w}",
            "gmlp.mean": ",".join(repr(float(v)) for v in d["mean"]),
            "gmlp.std": ",".join(repr(float(v)) for v in d["std"]),
            "gmlp.crop_pct": repr(float(d["crop_pct"])),
            "gmlp.interpolation": d["interpolation"],
            # written only where it is not the library's default, as the other keys are always
            **({"gmlp.crop_mode": d["crop_mode"]} if d["crop_mode"] != "center" else {})}


def parse_img_size(s, key="gmlp.img_size"):
    try:
        v = [int(x) for x in s.split(",")]
    except ValueError:
        v = []
    if len(v) not in (1, 2) or min(v) <= 0:
        raise ExportError(f"{key} {s!r}: expected \"H,W\" or \"S\"")
    return (v[0], v[-1])


def count_blocks(sd, prefix):
    """How many PREFIX.0., PREFIX.1., ... the state_dict holds in a row."""
    depth = 0
    while any(k.startswith(f"{prefix}.{depth}.") for k in sd):
        depth += 1
    return depth


def vision_patch(sd, meta):
    """(channels, (patch h, patch w)) of a gMLPVision, as the library infers them."""
    k = sd["to_patch_embed.1.weight"].shape[1]
    if "gmlp.patch_size" in meta:
        patch = parse_img_size(meta["gmlp.patch_size"], "gmlp.patch_size")
        area = patch[0] * patch[1]
        if k % area or not 1 <= k // area <= 3:
            raise ExportError(f"gmlp.patch_size {patch[0]}x{patch[1]}: to_patch_embed.1.weight has {k} inputs, "
                              "not 1-3 channels of that patch")
        return k // area, patch
    for c in (1, 2, 3):
        side = math.isqrt(k // c)
        if k % c == 0 and side * side * c == k:
            return c, (side, side)
    raise ExportError(f"to_patch_embed.1.weight has {k} inputs, not 1-3 channels of a square patch: give "
                      "--meta gmlp.patch_size=H,W")


def gmlp_vision_model(sd, meta):
    """A g-mlp-pytorch gMLPVision of the sizes the tensors have, ``sd`` loaded
    into it strictly; fills in meta's gmlp.patch_size and gmlp.img_size."""
    try:
        from g_mlp_pytorch import gMLPVision
    except ImportError:
        raise ExportError("checking a gMLPVision state_dict needs g-mlp-pytorch (pip install g-mlp-pytorch)") \
            from None
    w = sd["to_patch_embed.1.weight"]
    dim = w.shape[0]
    chans, patch = vision_patch(sd, meta)
    depth = count_blocks(sd, "layers")
    P = "layers.0.fn.fn."
    if depth == 0 or P + "sgu.bias" not in sd or P + "proj_in.0.weight" not in sd:
        raise ExportError("no layers.0.fn.fn.sgu.bias / proj_in.0.weight: not a gMLPVision's layers")
    heads, tokens = sd[P + "sgu.bias"].shape
    ff = sd[P + "proj_in.0.weight"].shape[0]
    if ff % dim:
        raise ExportError(f"proj_in width {ff} is not a multiple of dim {dim} (gMLPVision's ff_mult)")
    attn_dim = sd[P + "attn.to_qkv.weight"].shape[0] // 3 if P + "attn.to_qkv.weight" in sd else None
    if "gmlp.img_size" in meta:
        img = parse_img_size(meta["gmlp.img_size"])
    else:
        side = math.isqrt(tokens)
        if side * side != tokens:
            raise ExportError(f"{tokens} tokens are not a square grid: give --meta gmlp.img_size=H,W")
        img = (side * patch[0], side * patch[1])
    if img[0] % patch[0] or img[1] % patch[1] or (img[0] // patch[0]) * (img[1] // patch[1]) != tokens:
        raise ExportError(f"input size {img[0]}x{img[1]} with {patch[0]}x{patch[1]} patches does not give the "
                          f"{tokens} tokens of the spatial weights")
    headless = "to_logits.2.weight" not in sd
    kw = dict(image_size=img, patch_size=patch, num_classes=1 if headless else sd["to_logits.2.weight"].shape[0],
              dim=dim, depth=depth, heads=heads, ff_mult=ff // dim, channels=chans, attn_dim=attn_dim)
    model = gMLPVision(**kw)
    try:
        missing, unexpected = model.load_state_dict(sd, strict=not headless)
        if headless and (sorted(missing) != ["to_logits.2.bias", "to_logits.2.weight"] or unexpected):
            model.load_state_dict(sd, strict=True)  # raises, naming what is wrong
    except RuntimeError as e:
        raise ExportError(f"the tensors are not a g-mlp-pytorch gMLPVision({', '.join(f'{k}={v}' for k, v in kw.items())}) "
                          f"gmlp-cl can run: {e}") from None
    meta["gmlp.patch_size"] = f"{patch[0]},{patch[1]}"
    meta["gmlp.img_size"] = f"{img[0]},{img[1]}"
    model.num_classes = 0 if headless else kw["num_classes"]
    return model


def timm_model(sd, arch, img_size, size_from="the input size"):
    """A timm MlpMixer with the sizes the tensors have, ``sd`` loaded into it
    strictly: the check that the file is a timm gMLP / Mixer / ResMLP gmlp-cl can run."""
    from timm.models.mlp_mixer import Affine, MixerBlock, MlpMixer, ResBlock, SpatialGatingBlock
    from timm.layers import GatedMlp, GluMlp, Mlp

    w = sd["stem.proj.weight"]
    if w.dim() != 4 or w.shape[2] != w.shape[3]:
        raise ExportError(f"stem.proj.weight has shape {tuple(w.shape)}, not a square patch convolution")
    dim, in_chans, patch = w.shape[0], w.shape[1], w.shape[2]
    depth = count_blocks(sd, "blocks")
    if arch == "gmlp":
        tokens = sd["blocks.0.mlp_channels.gate.proj.weight"].shape[0]
        hidden = [sd["blocks.0.mlp_channels.fc1.weight"].shape[0]]
        kw = dict(block_layer=SpatialGatingBlock, mlp_layer=GatedMlp)
    elif arch == "resmlp":  # timm's resmlp_* registrations
        tokens = sd["blocks.0.linear_tokens.weight"].shape[0]
        hidden = [sd["blocks.0.mlp_channels.fc1.weight"].shape[0]]
        kw = dict(block_layer=ResBlock, norm_layer=Affine)
    else:
        tokens = sd["blocks.0.mlp_tokens.fc1.weight"].shape[1]
        hidden = [sd[f"blocks.0.{m}.fc1.weight"].shape[0] for m in ("mlp_tokens", "mlp_channels")]
        kw = dict(block_layer=MixerBlock, mlp_layer=Mlp)
        if arch == "gmixer":  # timm's gmixer_* registrations
            kw = dict(block_layer=MixerBlock, mlp_layer=GluMlp, act_layer=torch.nn.SiLU)
    # timm takes widths as int(dim * ratio): half a unit of slack survives the rounding of ratio
    ratios = tuple((h + 0.5) / dim for h in hidden)
    if img_size is None:
        side = math.isqrt(tokens)
        if side * side != tokens:
            raise ExportError(f"{tokens} tokens are not a square grid: give the input size, e.g. "
                              "--meta gmlp.img_size=H,W")
        img_size = (side * patch, side * patch)
    if img_size[0] % patch or img_size[1] % patch:
        raise ExportError(f"input size {img_size[0]}x{img_size[1]} is not a multiple of the patch size {patch}")
    grid = (img_size[0] // patch) * (img_size[1] // patch)
    if grid != tokens:
        side = math.isqrt(tokens)
        fit = f"{side * patch},{side * patch}" if side * side == tokens else "H,W"
        raise ExportError(f"{size_from} {img_size[0]}x{img_size[1]} gives {grid} tokens of {patch}x{patch} "
                          f"patches, but the tensors are for {tokens}: the model was made for another size; give "
                          f"it with --meta gmlp.img_size={fit}")
    num_classes = sd["head.weight"].shape[0] if "head.weight" in sd else 0
    kw["stem_norm"] = any(k.startswith("stem.norm.") for k in sd)  # timm's stem_norm=True
    model = MlpMixer(num_classes=num_classes, img_size=img_size, in_chans=in_chans, patch_size=patch,
                     num_blocks=depth, embed_dim=dim, mlp_ratio=ratios if len(ratios) == 2 else ratios[0], **kw)
    try:
        model.load_state_dict(sd, strict=True)
    except RuntimeError as e:
        raise ExportError(f"the tensors are not a timm {arch} MlpMixer(num_classes={num_classes}, "
                          f"img_size={img_size}, in_chans={in_chans}, patch_size={patch}, num_blocks={depth}, "
                          f"embed_dim={dim}) gmlp-cl can run: {e}") from None
    return model


def export_vision(ckpt, out, ema=False, arch_spec=None, labels=None, extra_metadata=None):
    """Writes the checkpoint ``ckpt`` (what torch.load returned) to ``out``;
    returns (metadata, the timm model holding the exported weights, source entry)."""
    sd, source, args = split_checkpoint(ckpt, ema)
    if "patch_embed.proj.weight" in sd and "blocks.0.attn.weight" in sd:
        from timm.models.mlp_mixer import checkpoint_filter_fn
        sd = {k: v.contiguous() for k, v in checkpoint_filter_fn(sd, None).items()}
        note("Facebook ResMLP names (patch_embed., attn., mlp., gamma_) renamed to timm's")
    arch = tensor_arch(sd)
    for k, v in sd.items():
        if not torch.is_floating_point(v) or not torch.isfinite(v).all():
            raise ExportError(f"{source}: {k} is not a finite floating-point tensor")
    if arch == "gmlp_vision":
        return export_gmlp_vision(sd, out, source, arch_spec, labels, extra_metadata)
    spec = arch_spec or (args or {}).get("model")
    name, cfg = resolve_name(spec, arch_spec is None) if spec else (None, None)
    if name is not None and name_arch(name) != arch:
        raise ExportError(f"{spec} is not a timm {dict(gmlp='gMLP', mixer='MLP-Mixer', gmixer='gMixer', resmlp='ResMLP')[arch]}, "
                          f"but the tensors are one")
    meta = {"gmlp.arch": arch}
    if name is not None:
        meta.update(data_metadata(cfg, args, in_chans=sd["stem.proj.weight"].shape[1]))
    else:
        note("no timm model name (--arch or args.model): no preprocessing metadata written")
    if labels is not None:
        meta["gmlp.labels"] = "\n".join(labels)
    meta.update(extra_metadata or {})
    img_size = parse_img_size(meta["gmlp.img_size"]) if "gmlp.img_size" in meta else None
    given = "gmlp.img_size" in (extra_metadata or {})
    model = timm_model(sd, arch, img_size, "--meta gmlp.img_size" if given else f"{spec}'s input size")
    if labels is not None and len(labels) != model.num_classes:
        raise ExportError(f"{len(labels)} labels for {model.num_classes} classes")
    stfile.write(sd, out, meta)
    return meta, model, source


def export_gmlp_vision(sd, out, source, arch_spec, labels, extra_metadata):
    if arch_spec:
        raise ExportError(f"--arch {arch_spec}: the tensors are a g-mlp-pytorch gMLPVision, which has no timm "
                          "name; give its preprocessing with --meta gmlp.mean=... gmlp.std=...")
    meta = {"gmlp.arch": "gmlp_vision"}
    if labels is not None:
        meta["gmlp.labels"] = "\n".join(labels)
    meta.update(extra_metadata or {})
    model = gmlp_vision_model(sd, meta)
    if labels is not None and len(labels) != model.num_classes:
        raise ExportError(f"{len(labels)} labels for {model.num_classes} classes")
    if not any(k in meta for k in ("gmlp.mean", "gmlp.std")):
        note("g-mlp-pytorch records no preprocessing: gmlp-cl will assume timm's defaults (mean = std = 0.5, "
             "bicubic, crop_pct 0.875) unless --meta gmlp.mean=... gmlp.std=... give the training's")
    stfile.write(sd, out, meta)
    return meta, model, source


def read_labels(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "),
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring for what is read and written.")
    ap.add_argument("checkpoint", metavar="CHECKPOINT")
    ap.add_argument("out", metavar="OUT.safetensors")
    ap.add_argument("--ema", action="store_true", help="export the EMA weights (state_dict_ema)")
    ap.add_argument("--arch", metavar="NAME[.TAG]",
                    help="timm model name and pretrained tag whose preprocessing to record")
    ap.add_argument("--labels", metavar="FILE", help="class names, one per line")
    ap.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                    help="extra or overriding __metadata__ entry (repeatable)")
    ap.add_argument("--trust-pickle", action="store_true",
                    help="unpickle the checkpoint fully (arbitrary code: trusted files only)")
    args = ap.parse_args(argv)
    extra = stfile.parse_meta(args.meta, ap.error)
    try:
        labels = read_labels(args.labels) if args.labels else None
        ckpt = load_checkpoint(args.checkpoint, args.trust_pickle)
        meta, model, source = export_vision(ckpt, args.out, args.ema, args.arch, labels, extra)
    except (ExportError, OSError) as e:
        print(f"export_vision: error: {e}", file=sys.stderr)
        return 1
    n = sum(p.numel() for p in model.parameters())
    print(f"wrote {args.out}: {source}, {n} parameters, "
          + ", ".join(f"{k}={v!r}" for k, v in sorted(meta.items()) if k != "gmlp.labels"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
