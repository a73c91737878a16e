#!/usr/bin/env python3
"""tools/export_vision.py on checkpoints laid out as timm's train.py saves them,
made here from small random timm models (gMLP, Mixer, gmixer, ResMLP, also in Facebook's layout): args as a Namespace and as a dict,
with and without DDP's ``module.`` prefix and EMA weights, names from args.model,
--arch NAME.TAG and none, and the refusals; and g-mlp-pytorch gMLPVision
state_dicts (square and non-square patches).  Every exported file must hold the
source tensors exactly and the right metadata.

    test_export.py [GMLP_CLASSIFY TESTS_DIR]

With the app, gmlp-classify also runs on three exported files (timm's default
gMLP cfg; a Mixer with a tag's cfg: mean 0, std 1, bilinear; a grey model with
train.py's --mean/--std/--img-size/--crop-pct), and on two gMLPVision files, and
its top-5 probabilities must match timm's (g-mlp-pytorch's) in float64 on the
same image and timm's eval transform within 1e-4 relative.  Without torch +
timm + g-mlp-pytorch + safetensors it skips (exit 77), or fails when CI is set."""
import argparse
import contextlib
import copy
import io
import json
import os
import subprocess
import sys
import tempfile

from tools_needed import missing

try:
    import numpy as np
    import torch
    import timm
    from PIL import Image
    from safetensors import safe_open
    from safetensors.torch import load_file
    from g_mlp_pytorch import gMLPVision
except ImportError as e:
    missing(e)

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools")
sys.path.insert(0, TOOLS)
import export_vision  # noqa: E402
from make_fixtures import build, facebook_resmlp_name, randomise  # noqa: E402
import make_lm_fixtures  # noqa: E402  (randomises g-mlp-pytorch models)

failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    failures += not ok


def tiny(kw, seed):
    model, _ = build(kw)
    randomise(model, np.random.default_rng(seed))
    return model


GMLP = dict(in_chans=3, img_size=224, patch_size=16, embed_dim=8, mlp_ratio=6, num_blocks=2,
            num_classes=10, arch="gmlp")
MIXER = dict(in_chans=3, img_size=224, patch_size=16, embed_dim=8, mlp_ratio=(0.5, 4.0), num_blocks=2,
             num_classes=5, arch="mixer")
GREY = dict(in_chans=1, img_size=28, patch_size=7, embed_dim=12, mlp_ratio=4, num_blocks=2,
            num_classes=10, arch="gmlp")
WIDE = dict(in_chans=3, img_size=(24, 40), patch_size=8, embed_dim=8, mlp_ratio=4, num_blocks=1,
            num_classes=3, arch="gmlp")
GMIXER = dict(in_chans=3, img_size=224, patch_size=16, embed_dim=8, mlp_ratio=(1.0, 4.0), num_blocks=2,
              num_classes=6, arch="gmixer")
RESMLP = dict(in_chans=3, img_size=224, patch_size=16, embed_dim=8, mlp_ratio=4, num_blocks=2,
              num_classes=7, arch="resmlp")


def facebook_resmlp(sd):
    """A timm ResMLP state_dict in the layout of Facebook's original code (deit's resmlp_models.py)."""
    return {facebook_resmlp_name(k): v.reshape(-1) if k.endswith((".alpha", ".beta")) else v for k, v in sd.items()}

# what train.py's parser leaves in args when only --model and --num-classes are given
TRAIN_ARGS = dict(model="gmlp_s16_224", pretrained=False, num_classes=10, in_chans=None, img_size=None,
                  input_size=None, crop_pct=None, mean=None, std=None, interpolation="", batch_size=128,
                  lr=None, epochs=300, model_ema=True, model_ema_decay=0.9998, seed=42)


def train_checkpoint(path, model, args, ema=None, ddp=False, args_as_dict=False):
    """A checkpoint as timm's CheckpointSaver writes it (with an AdamW state, from a copy of the model)."""
    trained = copy.deepcopy(model)
    opt = torch.optim.AdamW(trained.parameters(), lr=1e-3)
    trained(torch.zeros(1, model.stem.proj.in_channels, *model.stem.img_size)).sum().backward()
    opt.step()
    pre = "module." if ddp else ""
    ck = {"epoch": 7, "arch": args["model"], "optimizer": opt.state_dict(), "version": 2,
          "args": dict(args) if args_as_dict else argparse.Namespace(**args), "metric": 61.25,
          "state_dict": {pre + k: v for k, v in model.state_dict().items()}}
    if ema is not None:
        ck["state_dict_ema"] = {pre + k: v for k, v in ema.state_dict().items()}
    torch.save(ck, path)


def loads_weights_only(obj):
    with tempfile.NamedTemporaryFile() as t:
        torch.save(obj, t.name)
        try:
            torch.load(t.name, weights_only=True)
            return True
        except Exception:
            return False


# PyTorch < 2.0 loads no float with weights_only, so no training checkpoint; Namespace needs 2.4+
FLOATS_OK = loads_weights_only({"lr": 1e-3})
NAMESPACE_OK = FLOATS_OK and hasattr(torch.serialization, "add_safe_globals")


def export(*argv):
    """export_vision's CLI in this process: (exit code, stdout + stderr)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            rc = export_vision.main([str(a) for a in argv])
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue()


def export_pickled(loadable, path, out, *flags):
    """Exports a training checkpoint, with --trust-pickle only where weights_only cannot load it (and then
    the refusal without it must name the flag)."""
    if not loadable:
        rc, log = export(path, out, *flags)
        refused(f"{os.path.basename(path)} on torch {torch.__version__} without --trust-pickle", rc, log,
                "--trust-pickle")
        flags += ("--trust-pickle",)
    return export(path, out, *flags)


def metadata(path):
    with safe_open(path, "pt") as f:
        return f.metadata()


def same_tensors(path, model):
    got, want = load_file(path), model.state_dict()
    return got.keys() == want.keys() and all(
        got[k].dtype == want[k].dtype and torch.equal(got[k], want[k]) for k in want)


def exported(what, rc, log, path, model, meta):
    """The export succeeded, holds exactly ``model``'s tensors, and has ``meta`` as metadata."""
    check(rc == 0, f"{what}: exported" + ("" if rc == 0 else f" (rc {rc}: {log.strip()})"))
    if rc == 0:
        check(same_tensors(path, model), f"{what}: tensors equal to the source state_dict")
        got = metadata(path)
        check(got == meta, f"{what}: metadata" + ("" if got == meta else f" {got} != {meta}"))


def refused(what, rc, log, needle):
    check(rc == 1 and needle in log, f"{what}: refused, saying {needle!r}" + ("" if rc == 1 and needle in log
                                                                               else f" (rc {rc}: {log.strip()})"))


def cfg_meta(spec, arch):
    """The metadata timm's registry cfg of ``spec`` stands for."""
    cfg = timm.models.get_pretrained_cfg(spec)
    return {"gmlp.arch": arch, "gmlp.img_size": f"{cfg.input_size[1]},{cfg.input_size[2]}",
            "gmlp.mean": ",".join(map(repr, map(float, cfg.mean))),
            "gmlp.std": ",".join(map(repr, map(float, cfg.std))),
            "gmlp.crop_pct": repr(float(cfg.crop_pct)), "gmlp.interpolation": cfg.interpolation}


def classify(app, path, model, image, meta, c=None):
    """gmlp-classify --json on ``image`` against the model (c input channels) in
    float64 on timm's eval transform."""
    from timm.data import create_transform

    c = c or model.stem.proj.in_channels
    h, w = map(int, meta["gmlp.img_size"].split(","))
    t = create_transform(input_size=(c, h, w), interpolation=meta["gmlp.interpolation"],
                         mean=tuple(map(float, meta["gmlp.mean"].split(","))),
                         std=tuple(map(float, meta["gmlp.std"].split(","))),
                         crop_pct=float(meta["gmlp.crop_pct"]), crop_mode="center", is_training=False)
    x = t(Image.open(image).convert("L" if c == 1 else "RGB")).unsqueeze(0).double()
    with torch.no_grad():
        probs = torch.softmax(model.double()(x), -1)[0]
    r = subprocess.run([app, "--json", "--top", "5", "--model", path, image], capture_output=True, text=True)
    what = f"gmlp-classify on {os.path.basename(path)} ({os.path.basename(image)})"
    if r.returncode != 0:
        check(False, f"{what}: rc {r.returncode}: {r.stderr.strip()}")
        return
    top = json.loads(r.stdout)["results"][0]["top"]
    want = torch.argsort(probs, descending=True)[:5].tolist()
    check([e["index"] for e in top] == want, f"{what}: top-5 classes {want}")
    err = max(abs(e["prob"] - probs[e["index"]].item()) / probs[e["index"]].item() for e in top)
    check(err <= 1e-4, f"{what}: top-5 probabilities within 1e-4 relative of timm's (max {err:.1e})")


def run(tmp, app, tests_dir):
    f = lambda name: os.path.join(tmp, name)  # noqa: E731
    gm, gm_ema = tiny(GMLP, 1), tiny(GMLP, 2)
    mixer, grey, wide = tiny(MIXER, 3), tiny(GREY, 4), tiny(WIDE, 5)
    s16 = cfg_meta("gmlp_s16_224", "gmlp")

    # train.py's own layout: args a Namespace, DDP prefixes, EMA weights
    train_checkpoint(f("ns.pth.tar"), gm, TRAIN_ARGS, ema=gm_ema, ddp=True)
    rc, log = export_pickled(NAMESPACE_OK, f("ns.pth.tar"), f("ns.safetensors"))
    exported("Namespace args", rc, log, f("ns.safetensors"), gm, s16)
    rc, log = export(f("ns.pth.tar"), f("ns.safetensors"), "--trust-pickle")
    exported("Namespace args, module. prefix, --trust-pickle", rc, log, f("ns.safetensors"), gm, s16)
    check("--ema exports those" in log, "the EMA weights are pointed out")
    rc, log = export(f("ns.pth.tar"), f("ns-ema.safetensors"), "--trust-pickle", "--ema")
    exported("--ema takes state_dict_ema", rc, log, f("ns-ema.safetensors"), gm_ema, s16)

    # args as a dict (other trainers): weights_only loads it on every PyTorch
    train_checkpoint(f("dict.pth"), gm, TRAIN_ARGS, ema=gm_ema, args_as_dict=True)
    rc, log = export_pickled(FLOATS_OK, f("dict.pth"), f("dict.safetensors"))
    exported("dict args", rc, log, f("dict.safetensors"), gm, s16)
    rc, log = export_pickled(FLOATS_OK, f("dict.pth"), f("dict-ema.safetensors"), "--ema")
    exported("dict args, --ema", rc, log, f("dict-ema.safetensors"), gm_ema, s16)
    train_checkpoint(f("noema.pth"), gm, TRAIN_ARGS, ddp=True, args_as_dict=True)
    rc, log = export_pickled(FLOATS_OK, f("noema.pth"), f("noema.safetensors"))
    exported("dict args, module. prefix, no EMA", rc, log, f("noema.safetensors"), gm, s16)
    rc, log = export_pickled(FLOATS_OK, f("noema.pth"), f("x.safetensors"), "--ema")
    refused("--ema without EMA weights", rc, log, "no state_dict_ema")
    # train.py's --crop-mode travels as gmlp.crop_mode (center, the default, is not written)
    train_checkpoint(f("border.pth"), gm, dict(TRAIN_ARGS, crop_mode="border"), args_as_dict=True)
    rc, log = export_pickled(FLOATS_OK, f("border.pth"), f("border.safetensors"))
    exported("dict args with crop_mode border", rc, log, f("border.safetensors"), gm,
             dict(s16, **{"gmlp.crop_mode": "border"}))
    # and --interpolation, any of PIL's filters timm's eval transform takes
    train_checkpoint(f("lanczos.pth"), gm, dict(TRAIN_ARGS, interpolation="lanczos"), args_as_dict=True)
    rc, log = export_pickled(FLOATS_OK, f("lanczos.pth"), f("lanczos.safetensors"))
    lanczos_meta = dict(s16, **{"gmlp.interpolation": "lanczos"})
    exported("dict args with interpolation lanczos", rc, log, f("lanczos.safetensors"), gm, lanczos_meta)
    torch.save({"model": gm.state_dict(), "epoch": 3}, f("model-key.pth"))
    rc, log = export(f("model-key.pth"), f("model-key.safetensors"), "--arch", "gmlp_s16_224")
    exported("a checkpoint with 'model', --arch without a tag", rc, log, f("model-key.safetensors"), gm, s16)

    # the name: --arch NAME.TAG (the tag's cfg), an unregistered args.model, none
    torch.save(mixer.state_dict(), f("mixer.bin"))
    miil = "mixer_b16_224.miil_in21k_ft_in1k"
    rc, log = export(f("mixer.bin"), f("mixer.safetensors"), "--arch", miil)
    exported(f"bare Mixer state_dict, --arch {miil}", rc, log, f("mixer.safetensors"), mixer,
             cfg_meta(miil, "mixer"))
    check(metadata(f("mixer.safetensors")).get("gmlp.mean") == "0.0,0.0,0.0", f"{miil}: mean 0 from the registry")
    train_checkpoint(f("mine.pth"), gm, dict(TRAIN_ARGS, model="my_gmlp"), args_as_dict=True)
    rc, log = export_pickled(FLOATS_OK, f("mine.pth"), f("mine.safetensors"))
    exported("unregistered args.model", rc, log, f("mine.safetensors"), gm, {"gmlp.arch": "gmlp"})
    check("'my_gmlp' is not a timm model name" in log, "unregistered args.model noted")
    rc, log = export_pickled(FLOATS_OK, f("mine.pth"), f("mine.safetensors"), "--arch", "gmlp_s16_224.ra3_in1k")
    exported("--arch wins over args.model", rc, log, f("mine.safetensors"), gm,
             cfg_meta("gmlp_s16_224.ra3_in1k", "gmlp"))
    torch.save(gm.state_dict(), f("bare.pth"))
    rc, log = export(f("bare.pth"), f("bare.safetensors"))
    exported("bare state_dict, no name", rc, log, f("bare.safetensors"), gm, {"gmlp.arch": "gmlp"})

    # train.py's data flags win over the cfg; labels; a non-square input given with --meta
    grey_args = dict(TRAIN_ARGS, model="gmlp_ti16_224", in_chans=1, img_size=28, mean=[0.286], std=[0.353],
                     crop_pct=1.0, interpolation="bilinear")
    train_checkpoint(f("grey.pth"), grey, grey_args, args_as_dict=True)
    with open(f("labels.txt"), "w") as fl:
        fl.write("".join(f"class {i}\n" for i in range(10)))
    rc, log = export_pickled(FLOATS_OK, f("grey.pth"), f("grey.safetensors"), "--labels", f("labels.txt"))
    grey_meta = {"gmlp.arch": "gmlp", "gmlp.img_size": "28,28", "gmlp.mean": "0.286", "gmlp.std": "0.353",
                 "gmlp.crop_pct": "1.0", "gmlp.interpolation": "bilinear",
                 "gmlp.labels": "\n".join(f"class {i}" for i in range(10))}
    exported("grey model, train.py data flags, --labels", rc, log, f("grey.safetensors"), grey, grey_meta)
    with open(f("labels3.txt"), "w") as fl:
        fl.write("a\nb\nc\n")
    rc, log = export_pickled(FLOATS_OK, f("grey.pth"), f("x.safetensors"), "--labels", f("labels3.txt"))
    refused("labels for the wrong number of classes", rc, log, "3 labels for 10 classes")
    torch.save(wide.state_dict(), f("wide.pth"))
    rc, log = export(f("wide.pth"), f("x.safetensors"))
    refused("non-square token grid without an input size", rc, log, "gmlp.img_size")
    rc, log = export(f("wide.pth"), f("wide.safetensors"), "--meta", "gmlp.img_size=24,40")
    exported("non-square, --meta gmlp.img_size", rc, log, f("wide.safetensors"), wide,
             {"gmlp.arch": "gmlp", "gmlp.img_size": "24,40"})
    rc, log = export(f("wide.pth"), f("x.safetensors"), "--meta", "gmlp.img_size=32,40")
    refused("an input size the tensors do not fit", rc, log, "--meta gmlp.img_size 32x40 gives 20 tokens")

    # what is not a timm gMLP / Mixer, and bad names
    torch.save(timm.create_model("resnet10t", num_classes=4).state_dict(), f("resnet.pth"))
    rc, log = export(f("resnet.pth"), f("x.safetensors"))
    refused("a ResNet state_dict", rc, log, "not a timm gMLP, MLP-Mixer or ResMLP")
    torch.save({"to_embed.weight": torch.zeros(256, 8), "to_logits.1.weight": torch.zeros(256, 8)}, f("lm.pt"))
    rc, log = export(f("lm.pt"), f("x.safetensors"))
    refused("a g-mlp-pytorch LM", rc, log, "tools/export_lm.py")
    rc, log = export(f("bare.pth"), f("x.safetensors"), "--arch", "mixer_b16_224")
    refused("a Mixer name for gMLP tensors", rc, log, "mixer_b16_224 is not a timm gMLP")
    rc, log = export(f("bare.pth"), f("x.safetensors"), "--arch", "gmlp_s16_224.nosuchtag")
    refused("an unknown tag", rc, log, "gmlp_s16_224.ra3_in1k")
    rc, log = export(f("bare.pth"), f("x.safetensors"), "--arch", "no_such_model")
    refused("an unknown --arch", rc, log, "no model named")
    with open(f("junk.pth"), "wb") as fj:
        fj.write(b"not a checkpoint")
    rc, log = export(f("junk.pth"), f("x.safetensors"))
    refused("a file that is no checkpoint", rc, log, "not a PyTorch checkpoint")
    check(not os.path.exists(f("x.safetensors")), "nothing written by a refused export")

    gmix = tiny(GMIXER, 8)
    torch.save(gmix.state_dict(), f("gmixer.pth"))
    rc, log = export(f("gmixer.pth"), f("gmixer.safetensors"), "--arch", "gmixer_24_224")
    gmix_meta = cfg_meta("gmixer_24_224", "gmixer")
    exported("bare gmixer state_dict (GluMlp), --arch gmixer_24_224", rc, log, f("gmixer.safetensors"), gmix,
             gmix_meta)
    rc, log = export(f("gmixer.pth"), f("gmixer-bare.safetensors"))
    exported("bare gmixer state_dict, no name", rc, log, f("gmixer-bare.safetensors"), gmix, {"gmlp.arch": "gmixer"})
    rc, log = export(f("gmixer.pth"), f("x.safetensors"), "--arch", "mixer_b16_224")
    refused("a Mixer name for gmixer tensors", rc, log, "mixer_b16_224 is not a timm gMixer")

    # timm's ResMLP with a tag's cfg (ImageNet's mean and std); Facebook's layout ({'model': ...},
    # patch_embed., attn., gamma_1, alpha of shape (d,)) renamed by timm's checkpoint filter
    res = tiny(RESMLP, 9)
    torch.save(res.state_dict(), f("resmlp.pth"))
    rc, log = export(f("resmlp.pth"), f("resmlp.safetensors"), "--arch", "resmlp_12_224.fb_in1k")
    res_meta = cfg_meta("resmlp_12_224.fb_in1k", "resmlp")
    exported("bare ResMLP state_dict, --arch resmlp_12_224.fb_in1k", rc, log, f("resmlp.safetensors"), res, res_meta)
    # a grey 32-px ResMLP under a 224-px RGB name: the size is refused with the one that fits, and the mean
    # and std are what timm's resolve_input_data_config gives (the cfg's three values averaged)
    res_grey = tiny(dict(RESMLP, in_chans=1, img_size=32), 10)
    torch.save(res_grey.state_dict(), f("resmlp-grey.pth"))
    rc, log = export(f("resmlp-grey.pth"), f("resmlp-grey.safetensors"), "--arch", "resmlp_12_224")
    refused("grey 32-px ResMLP, --arch resmlp_12_224", rc, log, "--meta gmlp.img_size=32,32")
    rc, log = export(f("resmlp-grey.pth"), f("resmlp-grey.safetensors"), "--arch", "resmlp_12_224",
                     "--meta", "gmlp.img_size=32")
    d = timm.data.resolve_input_data_config(res_grey, pretrained_cfg=timm.models.get_pretrained_cfg("resmlp_12_224").to_dict())
    res_grey_meta = dict(cfg_meta("resmlp_12_224", "resmlp"), **{"gmlp.img_size": "32", "gmlp.mean": repr(d["mean"][0]),
                                                             "gmlp.std": repr(d["std"][0])})
    exported("grey ResMLP, --arch resmlp_12_224: timm's averaged mean/std", rc, log, f("resmlp-grey.safetensors"),
             res_grey, res_grey_meta)
    torch.save({"model": facebook_resmlp(res.state_dict()), "epoch": 399}, f("resmlp-fb.pth"))
    rc, log = export(f("resmlp-fb.pth"), f("resmlp-fb.safetensors"))
    exported("Facebook's ResMLP layout, no name", rc, log, f("resmlp-fb.safetensors"), res, {"gmlp.arch": "resmlp"})
    check("Facebook ResMLP names" in log, "the renaming is noted")
    rc, log = export(f("resmlp.pth"), f("x.safetensors"), "--arch", "gmlp_s16_224")
    refused("a gMLP name for ResMLP tensors", rc, log, "gmlp_s16_224 is not a timm ResMLP")

    # timm's stem_norm=True (a norm on the stem's output: LayerNorm; ResMLP's Affine)
    gm_sn, res_sn = tiny(dict(GMLP, stem_norm=True), 10), tiny(dict(RESMLP, stem_norm=True), 11)
    torch.save(gm_sn.state_dict(), f("gmlp-sn.pth"))
    rc, log = export(f("gmlp-sn.pth"), f("gmlp-sn.safetensors"))
    exported("bare gMLP state_dict with stem_norm, no name", rc, log, f("gmlp-sn.safetensors"), gm_sn,
             {"gmlp.arch": "gmlp"})
    torch.save(res_sn.state_dict(), f("resmlp-sn.pth"))
    rc, log = export(f("resmlp-sn.pth"), f("resmlp-sn.safetensors"), "--arch", "resmlp_12_224.fb_in1k")
    exported("ResMLP state_dict with stem_norm, --arch resmlp_12_224.fb_in1k", rc, log, f("resmlp-sn.safetensors"),
             res_sn, res_meta)

    vis, vis_wide = gmlp_vision(f)

    if app:
        images = os.path.join(tests_dir, "data", "preprocess")
        classify(app, f("gmixer.safetensors"), gmix, os.path.join(images, "rgb_large.png"), gmix_meta)
        # JPEGs (4:2:0, progressive 4:2:2, CMYK) decode to PIL's pixels; no metadata: the library's gmixer
        # defaults must be timm's gmixer cfg (ImageNet's mean and std)
        classify(app, f("gmixer-bare.safetensors"), gmix, os.path.join(images, "rgb_420.jpg"), gmix_meta)
        classify(app, f("resmlp.safetensors"), res, os.path.join(images, "rgb_422_progressive.jpg"), res_meta)
        classify(app, f("ns.safetensors"), gm, os.path.join(images, "cmyk.jpg"), s16)
        classify(app, f("resmlp.safetensors"), res, os.path.join(images, "rgb_large.png"), res_meta)
        # no preprocessing metadata: the library's ResMLP defaults must be timm's resmlp cfg
        classify(app, f("resmlp-fb.safetensors"), res, os.path.join(images, "rgba_wide.png"), res_meta)
        classify(app, f("vis.safetensors"), vis, os.path.join(images, "rgb_large.png"),
                 dict(VIS_META, **{"gmlp.mean": "0.5", "gmlp.std": "0.5", "gmlp.crop_pct": "0.875",
                                   "gmlp.interpolation": "bicubic"}), c=3)
        classify(app, f("vis-wide.safetensors"), vis_wide, os.path.join(images, "grey_large.png"),
                 VIS_WIDE_META, c=1)
        classify(app, f("ns.safetensors"), gm, os.path.join(images, "rgb_large.png"), s16)
        classify(app, f("mixer.safetensors"), mixer, os.path.join(images, "rgba_wide.png"), cfg_meta(miil, "mixer"))
        classify(app, f("grey.safetensors"), grey, os.path.join(images, "grey_large.png"), grey_meta)
        classify(app, f("lanczos.safetensors"), gm, os.path.join(images, "rgb_420.jpg"), lanczos_meta)
        classify(app, f("gmlp-sn.safetensors"), gm_sn, os.path.join(images, "rgb_large.png"), s16)
        classify(app, f("resmlp-sn.safetensors"), res_sn, os.path.join(images, "rgb_photo.jpg"), res_meta)


VIS_META = {"gmlp.arch": "gmlp_vision", "gmlp.patch_size": "8,8", "gmlp.img_size": "32,32"}
VIS_WIDE_META = {"gmlp.arch": "gmlp_vision", "gmlp.patch_size": "4,8", "gmlp.img_size": "24,40",
                 "gmlp.mean": "0.3", "gmlp.std": "0.2", "gmlp.crop_pct": "1.0", "gmlp.interpolation": "bilinear"}


def gmlp_vision(f):
    """g-mlp-pytorch gMLPVision state_dicts: a square one inferred from the tensors,
    a grey one with a non-square patch that needs --meta; returns both models."""
    def tiny_vision(seed, **kw):
        torch.manual_seed(seed)
        m = gMLPVision(**kw).eval()
        tokens = m.layers[0].fn.fn.sgu.bias.shape[1]
        make_lm_fixtures.randomise(m, {"seq": tokens}, np.random.default_rng(seed))
        return m

    vis = tiny_vision(6, image_size=32, patch_size=8, num_classes=7, dim=16, depth=2, heads=2, attn_dim=8)
    torch.save(vis.state_dict(), f("vis.pth"))
    rc, log = export(f("vis.pth"), f("vis.safetensors"))
    exported("gMLPVision, square patch and grid inferred", rc, log, f("vis.safetensors"), vis, VIS_META)
    check("records no preprocessing" in log, "gMLPVision: the missing preprocessing is pointed out")
    rc, log = export(f("vis.pth"), f("x.safetensors"), "--arch", "gmlp_s16_224")
    refused("gMLPVision with a timm --arch", rc, log, "has no timm name")

    wide = tiny_vision(7, image_size=(24, 40), patch_size=(4, 8), channels=1, num_classes=4, dim=12, depth=1)
    torch.save(wide.state_dict(), f("wide-vis.pth"))
    rc, log = export(f("wide-vis.pth"), f("x.safetensors"))  # 32 inputs read as 2 x 4x4: 30 tokens, no square
    refused("gMLPVision, non-square grid without sizes", rc, log, "gmlp.img_size")
    rc, log = export(f("wide-vis.pth"), f("x.safetensors"), "--meta", "gmlp.img_size=24,40")
    refused("gMLPVision, non-square patch without gmlp.patch_size", rc, log, "does not give the 30 tokens")
    rc, log = export(f("wide-vis.pth"), f("x.safetensors"), "--meta", "gmlp.patch_size=3,8")
    refused("gMLPVision, a patch_size the embedding does not fit", rc, log, "not 1-3 channels of that patch")
    check(not os.path.exists(f("x.safetensors")), "gMLPVision: nothing written by a refused export")
    flags = [a for k, v in VIS_WIDE_META.items() if k != "gmlp.arch" for a in ("--meta", f"{k}={v}")]
    rc, log = export(f("wide-vis.pth"), f("vis-wide.safetensors"), *flags)
    exported("gMLPVision, non-square patch and image, grey, --meta", rc, log, f("vis-wide.safetensors"), wide,
             VIS_WIDE_META)
    return vis, wide


def main(argv):
    app, tests_dir = (argv[1], argv[2]) if len(argv) > 2 else (None, None)
    print(f"torch {torch.__version__}, timm {timm.__version__} ({sys.executable})")
    with tempfile.TemporaryDirectory(prefix="gmlp-export-") as tmp:
        run(tmp, app, tests_dir)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
