#!/usr/bin/env python3
"""Writes the end-to-end reference fixtures in tests/data/e2e/.

For each config a timm ``MlpMixer`` (gMLP: SpatialGatingBlock + GatedMlp;
Mixer: MixerBlock + Mlp; gmixer: MixerBlock + GluMlp with SiLU; ResMLP: ResBlock + Affine) is built, every parameter is randomised so that every
part of the network matters (timm's own init makes the spatial matmul ~0 and the
head exactly 0), the weights are rounded to the storage dtype and saved, and the
reference outputs are computed in float64 from exactly the stored values.

    NAME.safetensors      the model (timm state_dict names, F32/F16/BF16)
    NAME.ref.safetensors  images   F32  B x C x H x W
                          logits   F64  B x classes  (absent for headless models)
                          features F64  B x dim      (pooled, after the final LN)

and the precision modes' references (tools/precision_ref.py): the same float64
maths with every product's operands rounded to TF32, FP16 and BF16, in
tests/data/precision/NAME.prec.safetensors (--prec-out).

Run with a Python that has torch + timm + safetensors + numpy:

    /usr/bin/python3 tools/make_fixtures.py [--out tests/data/e2e]

The random draws come from numpy's PCG64 (stable across versions), so re-running
gives the same weights and images; float64 results may differ in the last bits
between torch builds.
"""
import argparse
import os
import sys

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from timm.models.mlp_mixer import Affine, MixerBlock, MlpMixer, ResBlock, SpatialGatingBlock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stfile import sort_metadata  # noqa: E402  (stable metadata order, shared by the tools)
import precision_ref  # noqa: E402  (the precision modes' references)
from precision_ref import fp32  # noqa: E402

try:
    from timm.layers import GatedMlp, GluMlp, Mlp
except ImportError:  # timm < 0.9
    from timm.models.layers import GatedMlp, GluMlp, Mlp

SEED = 20240611

FASHION_LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                  "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]

STORAGE = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}

# name, MlpMixer kwargs, storage dtype, batch, metadata (None: no metadata)
CONFIGS = [
    ("gmlp_rgb",
     dict(in_chans=3, img_size=20, patch_size=4, embed_dim=24, mlp_ratio=3,
          num_blocks=2, num_classes=7, arch="gmlp"),
     "F32", 3, None),
    ("gmlp_gray_f16",
     dict(in_chans=1, img_size=28, patch_size=7, embed_dim=20, mlp_ratio=6,
          num_blocks=3, num_classes=10, arch="gmlp"),
     "F16", 2,
     {"gmlp.mean": "0.286", "gmlp.std": "0.353", "gmlp.crop_pct": "1.0",
      "gmlp.labels": "\n".join(FASHION_LABELS)}),
    ("gmlp_nonsquare_bf16",
     dict(in_chans=3, img_size=(24, 40), patch_size=8, embed_dim=16, mlp_ratio=4,
          num_blocks=2, num_classes=5, arch="gmlp"),
     "BF16", 2,
     {"gmlp.img_size": "24,40", "gmlp.interpolation": "bilinear", "user.note": "hello"}),
    ("gmlp_headless",
     dict(in_chans=3, img_size=16, patch_size=4, embed_dim=12, mlp_ratio=6,
          num_blocks=1, num_classes=0, arch="gmlp"),
     "F32", 1, None),
    ("mixer_rgb",
     dict(in_chans=3, img_size=30, patch_size=6, embed_dim=32, mlp_ratio=(0.5, 4.0),
          num_blocks=2, num_classes=9, arch="mixer"),
     "F32", 3, {"gmlp.arch": "mixer"}),
    ("mixer_gray_batch5",
     dict(in_chans=1, img_size=12, patch_size=3, embed_dim=10, mlp_ratio=(0.5, 4.0),
          num_blocks=2, num_classes=3, arch="mixer"),
     "F16", 5, None),
    # timm's default constructor arguments (eps, act, pooling...), only tiny;
    # saved exactly as save_file(model.state_dict()).
    ("gmlp_s16_tiny_like",
     dict(img_size=32, patch_size=16, embed_dim=16, num_blocks=2, mlp_ratio=6,
          num_classes=4, arch="gmlp"),
     "F32", 2, None),
    # timm's gmixer_12/24_224 (GluMlp + SiLU, mlp_ratio (1, 4)), tiny; and a grey, non-square one
    ("gmixer_rgb",
     dict(in_chans=3, img_size=24, patch_size=4, embed_dim=16, mlp_ratio=(1.0, 4.0),
          num_blocks=2, num_classes=6, arch="gmixer"),
     "F32", 3, None),
    ("gmixer_grey_f16",
     dict(in_chans=1, img_size=(12, 20), patch_size=4, embed_dim=12, mlp_ratio=(0.5, 3.0),
          num_blocks=2, num_classes=4, arch="gmixer"),
     "F16", 2, {"gmlp.img_size": "12,20"}),
    # timm's resmlp_* (ResBlock, Affine norms, layer scales), tiny and saved bare; and a grey,
    # non-square feature extractor with half weights
    ("resmlp_rgb",
     dict(in_chans=3, img_size=24, patch_size=4, embed_dim=16, mlp_ratio=4,
          num_blocks=2, num_classes=6, arch="resmlp"),
     "F32", 3, None),
    ("resmlp_grey_headless_f16",
     dict(in_chans=1, img_size=(12, 20), patch_size=4, embed_dim=12, mlp_ratio=3,
          num_blocks=3, num_classes=0, arch="resmlp"),
     "F16", 2, {"gmlp.img_size": "12,20"}),
    # timm's stem_norm=True (a LayerNorm after the stem; ResMLP's an Affine), saved bare
    ("gmlp_stem_norm",
     dict(in_chans=3, img_size=16, patch_size=4, embed_dim=12, mlp_ratio=4,
          num_blocks=2, num_classes=5, arch="gmlp", stem_norm=True),
     "F32", 2, None),
    ("resmlp_stem_norm_f16",
     dict(in_chans=3, img_size=16, patch_size=4, embed_dim=12, mlp_ratio=4,
          num_blocks=2, num_classes=4, arch="resmlp", stem_norm=True),
     "F16", 2, None),
]


def build(kw):
    kw = dict(kw)
    arch = kw.pop("arch")
    if arch == "gmlp":
        kw.update(block_layer=SpatialGatingBlock, mlp_layer=GatedMlp)
    elif arch == "gmixer":  # timm's gmixer_* registrations
        kw.update(block_layer=MixerBlock, mlp_layer=GluMlp, act_layer=torch.nn.SiLU)
    elif arch == "resmlp":  # timm's resmlp_* registrations
        kw.update(block_layer=ResBlock, norm_layer=Affine)
    else:
        kw.update(block_layer=MixerBlock, mlp_layer=Mlp)
    return MlpMixer(**kw).eval(), arch


def facebook_resmlp_name(key):
    """A timm ResMLP tensor name as Facebook's original code (deit's resmlp_models.py) spells it:
    what timm's checkpoint_filter_fn undoes (test inputs for the exporter and the loader)."""
    for timm_name, fb_name in (("stem.", "patch_embed."), ("linear_tokens.", "attn."), ("mlp_channels.", "mlp."),
                               (".ls1", ".gamma_1"), (".ls2", ".gamma_2")):
        key = key.replace(timm_name, fb_name)
    return key


def randomise(model, rng):
    """Overwrites every parameter (and buffer) with draws that make it matter."""
    ln_params = set()
    for mname, mod in model.named_modules():
        if isinstance(mod, torch.nn.LayerNorm):
            for pname, _ in mod.named_parameters(recurse=False):
                ln_params.add(f"{mname}.{pname}" if mname else pname)
    sd = model.state_dict()
    new = {}
    for name, t in sd.items():
        shape = tuple(t.shape)
        if name.endswith("gate.proj.weight"):
            v = rng.normal(0.0, 1.0 / np.sqrt(shape[1]), shape)
        elif name.endswith("gate.proj.bias"):
            v = 1.0 + rng.normal(0.0, 0.3, shape)
        elif name in ln_params and name.endswith(".weight"):
            v = 1.0 + rng.normal(0.0, 0.2, shape)
        elif name in ln_params and name.endswith(".bias"):
            v = rng.normal(0.0, 0.2, shape)
        elif name.endswith(".alpha"):  # ResMLP's Affine
            v = 1.0 + rng.normal(0.0, 0.2, shape)
        elif name.endswith(".beta"):
            v = rng.normal(0.0, 0.2, shape)
        elif name.endswith((".ls1", ".ls2")):  # layer scales, far from timm's 1e-4 so the blocks matter
            v = rng.normal(0.5, 0.3, shape)
        elif len(shape) >= 2:  # Linear (out, in) or Conv2d (out, in, kh, kw)
            v = rng.normal(0.0, 1.0 / np.sqrt(int(np.prod(shape[1:]))), shape)
        elif name.endswith(".bias"):
            v = rng.normal(0.0, 0.2, shape)
        else:
            raise RuntimeError(f"no randomisation rule for {name} {shape}")
        new[name] = torch.from_numpy(np.asarray(v, dtype=np.float64)).to(t.dtype)
    model.load_state_dict(new, strict=True)


def features_and_logits(model, x):
    with torch.no_grad():
        feats = model.forward_head(model.forward_features(x), pre_logits=True)
        logits = model(x)
    return feats, logits


# ---------------------------------------------------------------------------
# Independent float64 reference written from docs/models.md sections 2-3, used
# only to check that timm still computes what the library implements.
def _ln(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def _aff(x, sd, pre):
    """ResMLP's Affine: alpha * x + beta."""
    return sd[pre + "alpha"] * x + sd[pre + "beta"]


def _gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / np.sqrt(2.0)))


def _mlp(x, sd, pre, arch, em=None, ls=None):
    """timm's Mlp (GELU), or gmixer's GluMlp: x1, x2 = fc1(x).chunk(2); fc2(x1 * SiLU(x2)).
    em: the precision modes' emulation (tools/precision_ref.py; None: plain
    float64); ls: a layer scale folded into fc2 (ResMLP's ls2, with em)."""
    mm = em.mm if em else torch.matmul
    wt = em.weight if em else (lambda w: w)
    h = mm(x, wt(sd[pre + "fc1.weight"]).T) + sd[pre + "fc1.bias"]
    if arch == "gmixer":
        x1, x2 = h.chunk(2, dim=-1)
        h = (em.held(x1) if em else x1) * (x2 * torch.sigmoid(x2))
    else:
        h = _gelu(h)
    w2, b2 = sd[pre + "fc2.weight"], sd[pre + "fc2.bias"]
    if ls is not None:  # as the library folds it at upload: fc2's rows times ls2, in fp32
        w2, b2 = fp32(w2 * ls[:, None]), fp32(b2 * ls)
    return mm(h, wt(w2).T) + b2


def doc_reference(sd, x, arch, em=None):
    """The outputs (pooled features, logits) in float64; em (an Emulation of
    tools/precision_ref.py) rounds the operands of every product as the
    precision modes do, on the library's products: ResMLP's layer scales
    folded where it folds them (ls1 into Aff1, ls2 into fc2, in fp32)."""
    sd = {k: v.double() for k, v in sd.items()}
    mm = em.mm if em else torch.matmul
    wt = em.weight if em else (lambda w: w)
    w = sd["stem.proj.weight"]
    d, c, ph, pw = w.shape
    b_, _, hh, ww = x.shape
    gh, gw = hh // ph, ww // pw
    # patchify: token t = row * gw + col, patch vector order (c, p1, p2)
    p = x.reshape(b_, c, gh, ph, gw, pw).permute(0, 2, 4, 1, 3, 5).reshape(b_, gh * gw, c * ph * pw)
    X = mm(p, wt(w.reshape(d, -1)).T) + sd["stem.proj.bias"]
    if "stem.norm.weight" in sd:
        X = _ln(X, sd["stem.norm.weight"], sd["stem.norm.bias"], 1e-6)
    elif "stem.norm.alpha" in sd:
        X = _aff(X, sd, "stem.norm.")
    l = 0
    first = {"gmlp": "norm.weight", "resmlp": "norm1.alpha"}.get(arch, "norm1.weight")
    while f"blocks.{l}.{first}" in sd:
        pre = f"blocks.{l}."
        if arch == "resmlp" and em:  # the library's products: x += W_tok . (ls1 Aff1(x)) + b_tok ls1
            ls1 = sd[pre + "ls1"]
            Y = X * fp32(sd[pre + "norm1.alpha"] * ls1) + fp32(sd[pre + "norm1.beta"] * ls1)
            X = X + mm(wt(sd[pre + "linear_tokens.weight"]), Y) + sd[pre + "linear_tokens.bias"][:, None] * ls1
            X = X + _mlp(_aff(X, sd, pre + "norm2."), sd, pre + "mlp_channels.", arch, em, sd[pre + "ls2"])
        elif arch == "resmlp":
            Y = _aff(X, sd, pre + "norm1.").transpose(1, 2)
            T = (Y @ sd[pre + "linear_tokens.weight"].T + sd[pre + "linear_tokens.bias"]).transpose(1, 2)
            X = X + sd[pre + "ls1"] * T
            X = X + sd[pre + "ls2"] * _mlp(_aff(X, sd, pre + "norm2."), sd, pre + "mlp_channels.", arch)
        elif arch == "gmlp":
            Y = _ln(X, sd[pre + "norm.weight"], sd[pre + "norm.bias"], 1e-6)
            Z = _gelu(mm(Y, wt(sd[pre + "mlp_channels.fc1.weight"]).T) + sd[pre + "mlp_channels.fc1.bias"])
            Z = em.held(Z) if em else Z
            g = Z.shape[-1] // 2
            U, V = Z[..., :g], Z[..., g:]
            V = _ln(V, sd[pre + "mlp_channels.gate.norm.weight"], sd[pre + "mlp_channels.gate.norm.bias"], 1e-5)
            G = mm(wt(sd[pre + "mlp_channels.gate.proj.weight"]), V) \
                + sd[pre + "mlp_channels.gate.proj.bias"][None, :, None]
            X = X + mm(U * G, wt(sd[pre + "mlp_channels.fc2.weight"]).T) + sd[pre + "mlp_channels.fc2.bias"]
        else:
            Y = _ln(X, sd[pre + "norm1.weight"], sd[pre + "norm1.bias"], 1e-6).transpose(1, 2)
            X = X + _mlp(Y, sd, pre + "mlp_tokens.", arch, em).transpose(1, 2)
            Y = _ln(X, sd[pre + "norm2.weight"], sd[pre + "norm2.bias"], 1e-6)
            X = X + _mlp(Y, sd, pre + "mlp_channels.", arch, em)
        l += 1
    f = (_aff(X, sd, "norm.") if arch == "resmlp" else _ln(X, sd["norm.weight"], sd["norm.bias"], 1e-6)).mean(1)
    logits = mm(f, wt(sd["head.weight"]).T) + sd["head.bias"] if "head.weight" in sd else None
    return f, logits
# ---------------------------------------------------------------------------


def spatial_keys(sd, arch):
    if arch == "gmlp":
        return [k for k in sd if k.endswith("gate.proj.weight")]
    if arch == "resmlp":
        return [k for k in sd if k.endswith("linear_tokens.weight")]
    return [k for k in sd if ".mlp_tokens.fc" in k and k.endswith(".weight")]


def make(name, kw, storage, batch, meta, outdir, rng, prec_out):
    model, arch = build(kw)
    randomise(model, rng)
    model_path = os.path.join(outdir, name + ".safetensors")
    if name in ("gmlp_s16_tiny_like", "resmlp_rgb"):
        assert storage == "F32" and meta is None
        save_file(model.state_dict(), model_path)
    else:
        sd = {k: v.detach().to(STORAGE[storage]).contiguous() for k, v in model.state_dict().items()}
        save_file(sd, model_path, metadata=meta)
    sort_metadata(model_path)
    os.chmod(model_path, 0o644)

    # reference from exactly the stored values
    stored = load_file(model_path)
    for k, v in stored.items():
        assert v.dtype == STORAGE[storage], (k, v.dtype)
    model = model.double().eval()
    model.load_state_dict({k: v.double() for k, v in stored.items()}, strict=True)

    c = kw.get("in_chans", 3)
    img = kw["img_size"]
    hh, ww = (img, img) if isinstance(img, int) else img
    images = torch.from_numpy(rng.standard_normal((batch, c, hh, ww)).astype(np.float32))
    x = images.double()
    feats, logits = features_and_logits(model, x)
    headless = kw["num_classes"] == 0
    if headless:
        assert torch.equal(logits, feats)

    # cross-check timm against the documented maths
    f_doc, l_doc = doc_reference(stored, x, arch)
    assert torch.allclose(f_doc, feats, rtol=0, atol=1e-10), (name, (f_doc - feats).abs().max())
    if not headless:
        assert torch.allclose(l_doc, logits, rtol=0, atol=1e-10), (name, (l_doc - logits).abs().max())

    out = logits if not headless else feats
    scale = out.abs().max().item()
    # the spatial / token-mixing weights must matter
    saved = {k: v.clone() for k, v in model.state_dict().items()}
    zeroed = dict(saved)
    for k in spatial_keys(saved, arch):
        zeroed[k] = torch.zeros_like(saved[k])
    model.load_state_dict(zeroed)
    _, out0 = features_and_logits(model, x)
    model.load_state_dict(saved)
    delta = (out0 - out).abs().max().item()
    assert delta > 0.1 * scale, f"{name}: zeroing the spatial weights changes the output by only {delta}"
    # and so must the images (no dead network)
    _, out_x = features_and_logits(model, x.flip(0) if batch > 1 else -x)
    assert (out_x - out).abs().max().item() > 0.01 * scale, name

    # what a float32 implementation can expect
    model32, _ = build(kw)
    model32.load_state_dict({k: v.float() for k, v in stored.items()}, strict=True)
    f32, l32 = features_and_logits(model32.eval(), images)
    err32 = max((f32.double() - feats).abs().max().item(),
                0.0 if headless else (l32.double() - logits).abs().max().item())

    ref = {"images": images.contiguous(), "features": feats.contiguous()}
    if not headless:
        ref["logits"] = logits.contiguous()
    save_file(ref, os.path.join(outdir, name + ".ref.safetensors"),
              metadata={"model": name + ".safetensors", "arch": arch, "storage": storage,
                        "generator": "tools/make_fixtures.py"})
    sort_metadata(os.path.join(outdir, name + ".ref.safetensors"))
    os.chmod(os.path.join(outdir, name + ".ref.safetensors"), 0o644)

    # the precision modes' references: the documented maths with every product's operands rounded
    exact = {"features": feats} if headless else {"features": feats, "logits": logits}

    def run(em):
        f, lg = doc_reference(stored, x, arch, em)
        return {"features": f} if headless else {"features": f, "logits": lg}

    errs = precision_ref.write(prec_out, name, storage, run, list(exact), exact)
    print(f"{name:22s} {arch:5s} {storage:4s} B={batch} N={model.stem.num_patches:3d} "
          f"max|{'logit' if not headless else 'feat'}|={scale:7.3f}  "
          f"zero-spatial max|d|={delta:7.3f}  f32-vs-f64 max err={err32:.2e}  "
          + " ".join(f"{m}={e:.1e}" for m, e in errs.items()))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "e2e"))
    ap.add_argument("--prec-out", default=os.path.join(here, "..", "tests", "data", "precision"),
                    help="where the precision modes' references go (NAME.prec.safetensors)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_grad_enabled(False)
    for i, (name, kw, storage, batch, meta) in enumerate(CONFIGS):
        rng = np.random.default_rng([SEED, i])
        make(name, kw, storage, batch, meta, args.out, rng, args.prec_out)
    for d in (args.out, args.prec_out):
        total = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        print(f"total {total} bytes in {os.path.normpath(d)}")
        assert total < 1 << 20
    return 0


if __name__ == "__main__":
    sys.exit(main())
