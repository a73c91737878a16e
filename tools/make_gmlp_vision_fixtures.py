#!/usr/bin/env python3
"""Writes the g-mlp-pytorch gMLPVision reference fixtures in tests/data/e2e/
(gmlpvision_*), beside the timm ones of tools/make_fixtures.py and in their
format, so that test_e2e runs both:

    NAME.safetensors      the model: a real lucidrains ``gMLPVision``'s state_dict,
                          names unchanged, written by tools/export_vision.py (or,
                          for the *_bare case, by a plain save_file(state_dict))
    NAME.ref.safetensors  images   F32  B x C x H x W
                          logits   F64  B x classes  (= model(images), float64)
                          features F64  B x dim      (mean over tokens after the final LN)

and the precision modes' references (tools/precision_ref.py): the same float64
maths with every product's operands rounded to TF32, FP16 and BF16, in
tests/data/precision/NAME.prec.safetensors (--prec-out).

Every parameter is randomised so that every path matters (the default init makes
the SGU weight ~0 and its bias exactly 1), with the rules of
tools/make_lm_fixtures.py; the references are computed in float64 from exactly
the stored values and cross-checked against the independent implementation of
docs/models.md section 5 there (to 1e-10).  Each case also checks that the SGU
weights, the tiny attention (where used) and the images change the output.

Run with a Python that has torch + g-mlp-pytorch + einops + safetensors + numpy:

    /usr/bin/python3 tools/make_gmlp_vision_fixtures.py [--out tests/data/e2e]
"""
import copy
import os
import sys

import numpy as np
import torch
from safetensors.torch import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_vision import export_vision  # noqa: E402
from make_lm_fixtures import STORAGE, _ln, doc_layers, fixture_main, randomise  # noqa: E402
from stfile import sort_metadata  # noqa: E402
import precision_ref  # noqa: E402  (the precision modes' references)

from g_mlp_pytorch import gMLPVision  # noqa: E402

SEED = 20261124


def case(name, image, patch, dim, channels=3, heads=1, ff_mult=4, attn_dim=None, classes=5, storage="F32",
         batch=2, meta=None, bare=False):
    return dict(name=name, image=image, patch=patch, dim=dim, depth=2, channels=channels, heads=heads,
                ff_mult=ff_mult, attn_dim=attn_dim, classes=classes, storage=storage, batch=batch,
                meta=meta or {}, bare=bare)


CASES = [
    # square image and patch, one head: what the library infers without help
    case("gmlpvision_rgb", 24, 4, 16, classes=6, batch=3),
    # non-square image and patch (metadata), grey, two heads, tiny attention, half storage
    case("gmlpvision_heads_attn_f16", (20, 28), (4, 7), 24, channels=1, heads=2, ff_mult=2, attn_dim=8,
         storage="F16", meta={"gmlp.patch_size": "4,7", "gmlp.img_size": "20,28", "gmlp.mean": "0.4",
                              "gmlp.std": "0.3"}),
    # saved as save_file(model.state_dict()) with no metadata: 2 channels of a 4x4 patch
    # (32 inputs) and the 4x4 grid are inferred; four heads
    case("gmlpvision_bare", 16, 4, 20, channels=2, heads=4, ff_mult=2, attn_dim=6, classes=3, bare=True),
]


def build(c):
    return gMLPVision(image_size=c["image"], patch_size=c["patch"], num_classes=c["classes"], dim=c["dim"],
                      depth=c["depth"], heads=c["heads"], ff_mult=c["ff_mult"], channels=c["channels"],
                      attn_dim=c["attn_dim"]).eval()


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def outputs(model, x):
    """(pooled features after the final LN, logits)."""
    with torch.no_grad():
        t = model.to_patch_embed(x)
        for layer in model.layers:
            t = layer(t)
        feats = model.to_logits[1](model.to_logits[0](t))
        return feats, model(x)


def doc_reference(sd, x, c, em=None):
    """docs/models.md section 5 for gMLPVision: patches (c p1 p2) . W^T + b, the
    layers, LN, mean, head; em: the precision modes' emulation
    (tools/precision_ref.py; None: plain float64)."""
    sd = {k: v.double() for k, v in sd.items()}
    mm = em.mm if em else torch.matmul
    wt = em.weight if em else (lambda w: w)
    (ph, pw), (hh, ww) = pair(c["patch"]), pair(c["image"])
    b, ch = x.shape[:2]
    p = x.reshape(b, ch, hh // ph, ph, ww // pw, pw).permute(0, 2, 4, 1, 3, 5).reshape(b, -1, ch * ph * pw)
    t = mm(p, wt(sd["to_patch_embed.1.weight"]).T) + sd["to_patch_embed.1.bias"]
    lc = dict(seq=t.shape[1], heads=c["heads"], depth=c["depth"], shift=0, causal=False, circulant=False,
              attn_dim=c["attn_dim"], act="identity")
    t = doc_layers(sd, t, lc, block="fn.fn.", em=em)
    f = _ln(t, sd["to_logits.0.weight"], sd["to_logits.0.bias"]).mean(1)
    return f, mm(f, wt(sd["to_logits.2.weight"]).T) + sd["to_logits.2.bias"]


def make(c, outdir, rng, prec_out):
    name = c["name"]
    model = build(c)
    (ph, pw), (hh, ww) = pair(c["patch"]), pair(c["image"])
    n = (hh // ph) * (ww // pw)
    randomise(model, {"seq": n}, rng)
    path = os.path.join(outdir, name + ".safetensors")
    sd = {k: v.detach().to(STORAGE[c["storage"]]).contiguous() for k, v in model.state_dict().items()}
    if c["bare"]:
        save_file(sd, path)
        sort_metadata(path)
        os.chmod(path, 0o644)
    else:
        meta, _, _ = export_vision(sd, path, extra_metadata=c["meta"])
        assert meta["gmlp.arch"] == "gmlp_vision" and meta["gmlp.patch_size"] == f"{ph},{pw}" and \
            meta["gmlp.img_size"] == f"{hh},{ww}", meta

    stored = load_file(path)
    for k, v in stored.items():
        assert v.dtype == STORAGE[c["storage"]], (k, v.dtype)
    model = model.double().eval()
    model.load_state_dict({k: v.double() for k, v in stored.items()}, strict=True)
    images = torch.from_numpy(rng.standard_normal((c["batch"], c["channels"], hh, ww)).astype(np.float32))
    x = images.double()
    feats, logits = outputs(model, x)

    f_doc, l_doc = doc_reference(stored, x, c)
    err_doc = max((f_doc - feats).abs().max().item(), (l_doc - logits).abs().max().item())
    assert err_doc < 1e-10, f"{name}: g-mlp-pytorch vs docs/models.md section 5: {err_doc}"

    scale = logits.abs().max().item()

    def changed(m, what, xx=x, frac=0.05):
        d = (outputs(m, xx)[1] - logits).abs().max().item()
        assert d > frac * scale, f"{name}: {what} changes the logits by only {d:.3g} (max |logit| {scale:.3g})"
        return d

    m = copy.deepcopy(model)
    for layer in m.layers:
        layer.fn.fn.sgu.weight.data.zero_()
    d_sgu = changed(m, "zeroing sgu.weight")
    if c["attn_dim"]:
        m = copy.deepcopy(model)
        for layer in m.layers:
            layer.fn.fn.attn = None
        changed(m, "removing the tiny attention")
    changed(model, "other images", xx=x.flip(0) if c["batch"] > 1 else -x, frac=0.01)

    m32 = build(c)
    m32.load_state_dict({k: v.float() for k, v in stored.items()}, strict=True)
    f32, l32 = outputs(m32, images)
    err32 = max((f32.double() - feats).abs().max().item(), (l32.double() - logits).abs().max().item())

    ref_path = os.path.join(outdir, name + ".ref.safetensors")
    save_file({"images": images.contiguous(), "logits": logits.contiguous(), "features": feats.contiguous()},
              ref_path, metadata={"model": name + ".safetensors", "arch": "gmlp_vision", "storage": c["storage"],
                                  "generator": "tools/make_gmlp_vision_fixtures.py"})
    sort_metadata(ref_path)
    os.chmod(ref_path, 0o644)

    def run(em):
        f, lg = doc_reference(stored, x, c, em)
        return {"features": f, "logits": lg}

    errs = precision_ref.write(prec_out, name, c["storage"], run, ["features", "logits"],
                               {"features": feats, "logits": logits})
    print(f"{name:26s} {c['storage']:4s} B={c['batch']} N={n:3d} heads={c['heads']} attn={c['attn_dim'] or 0} "
          f"max|logit|={scale:6.3f}  zero-sgu max|d|={d_sgu:6.3f}  f32-vs-f64 max err={err32:.2e}  "
          + " ".join(f"{m}={e:.1e}" for m, e in errs.items()), flush=True)


if __name__ == "__main__":
    sys.exit(fixture_main(__doc__, "e2e", CASES, make, SEED))
