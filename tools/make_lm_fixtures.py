#!/usr/bin/env python3
"""Writes the language-model reference fixtures in tests/data/lm/.

For each case a real lucidrains g-mlp-pytorch ``gMLP`` (with ``num_tokens``) is
built, every parameter is randomised so that every path matters (the default
init makes the SGU weight ~0 and its bias exactly 1), the model is saved with
tools/export_lm.py (so the files are exactly what users would produce: the
state_dict names unchanged, rounded to the storage dtype, gmlp.* metadata),
and the references are computed in float64 from exactly the stored values:

    NAME.safetensors      the model (g-mlp-pytorch state_dict names, F32/F16/BF16,
                          __metadata__ gmlp.arch/causal/act/shift_tokens)
    NAME.ref.safetensors  tokens  I32  B x n
                          logits  F64  B x n x vocab   (= model(tokens), float64)
                          __metadata__ (strings): vocab_size, seq_len, dim, depth,
                          ffn_dim (proj_in width = dim * ff_mult; the SGU works on
                          half of it), heads, attn_dim (0 if none), causal
                          (true/false), shift_tokens, act, circulant (true/false),
                          plus model, storage, generator

and the precision modes' references (tools/precision_ref.py): the same float64
maths with every product's operands rounded to TF32, FP16 and BF16, in
tests/data/precision/NAME.prec.safetensors (--prec-out).

Randomisation: linear weights N(0, 1/fan_in), linear biases N(0, 0.1^2),
LayerNorm weights 1 + N(0, 0.1^2) and biases N(0, 0.1^2), sgu.weight
N(0, (0.5/sqrt(seq_len))^2) (also above the diagonal in causal models, where
it must be ignored), sgu.bias 1 + N(0, 0.2^2) (N(0, 0.2^2) for act_relu, whose
gates would otherwise stay positive), circulant_pos_x/y 1 + N(0, 0.3^2),
embedding N(0, 1); tokens uniform in [0, vocab).

Each case is cross-checked against an independent float64 implementation of
docs/models.md section 5 (to 1e-10), and checked for: the SGU weights (and the
tiny attention, the token shift and the activation, where used) changing the
logits; causal models not looking ahead; bidirectional ones looking both ways.

Run with a Python that has torch + g-mlp-pytorch + einops + safetensors + numpy:

    /usr/bin/python3 tools/make_lm_fixtures.py [--out tests/data/lm]

The random draws come from numpy's PCG64 (stable across versions), so re-running
gives the same weights and tokens; float64 results may differ in the last bits
between torch builds.
"""
import argparse
import copy
import os
import sys

import numpy as np
import torch
from torch import nn
from safetensors.torch import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_lm import export_lm  # noqa: E402
from stfile import sort_metadata  # noqa: E402
import precision_ref  # noqa: E402  (the precision modes' references)
from precision_ref import fp32  # noqa: E402

from g_mlp_pytorch import gMLP  # noqa: E402

SEED = 20261123

STORAGE = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
ACTS = {"identity": nn.Identity, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "gelu": nn.GELU, "silu": nn.SiLU,
        "relu": nn.ReLU}


def case(name, vocab, dim, seq, ff_mult=2, heads=1, attn_dim=None, causal=True,
         circulant=False, shift=0, act="identity", storage="F32", batch=2, n=None, sgu_bias=1.0):
    return dict(name=name, vocab=vocab, dim=dim, depth=2, seq=seq, ff_mult=ff_mult, heads=heads,
                attn_dim=attn_dim, causal=causal, circulant=circulant, shift=shift, act=act,
                storage=storage, batch=batch, n=seq if n is None else n, sgu_bias=sgu_bias)


CASES = [
    case("causal", 256, 16, 12),
    case("causal_short", 71, 24, 16, ff_mult=3, batch=3, n=9),
    case("bidir", 61, 24, 12, causal=False),
    case("heads4", 53, 32, 10, heads=4),
    case("heads2_bidir", 47, 24, 14, heads=2, causal=False),
    case("attn", 59, 24, 12, attn_dim=8),
    case("attn_bidir", 43, 20, 10, attn_dim=8, causal=False),
    case("circulant", 37, 16, 12, circulant=True, causal=False),
    case("circulant_causal_short", 41, 16, 16, circulant=True, n=11),
    case("act_tanh", 45, 16, 8, act="tanh"),
    case("act_sigmoid", 45, 16, 8, act="sigmoid"),
    case("act_gelu", 45, 16, 8, act="gelu"),
    case("shift2", 57, 24, 12, shift=2),
    case("shift1_bidir", 39, 24, 12, shift=1, causal=False),
    # 4 shift segments (0,1,2,3) of 30 // 4 = 7 channels, the last 2 channels pass through
    case("shift_uneven", 49, 30, 12, shift=3),
    case("kitchen_sink", 67, 32, 16, heads=2, attn_dim=8, circulant=True, act="tanh", shift=1,
         storage="F16", batch=3, n=13),
    case("vocab50_bf16", 50, 24, 12, heads=2, causal=False, storage="BF16"),
    case("act_silu", 45, 16, 8, act="silu"),
    case("act_relu", 45, 16, 8, act="relu", sgu_bias=0.0),  # gates on both sides of 0
]


def build(c):
    return gMLP(num_tokens=c["vocab"], dim=c["dim"], depth=c["depth"], seq_len=c["seq"],
                heads=c["heads"], ff_mult=c["ff_mult"], attn_dim=c["attn_dim"], causal=c["causal"],
                circulant_matrix=c["circulant"], shift_tokens=c["shift"], act=ACTS[c["act"]]()).eval()


def randomise(model, c, rng):
    """Overwrites every parameter with draws that make it matter."""
    ln = set()
    for mname, mod in model.named_modules():
        if isinstance(mod, nn.LayerNorm):
            ln.update(f"{mname}.{p}" for p, _ in mod.named_parameters(recurse=False))
    new = {}
    for name, t in model.state_dict().items():
        shape = tuple(t.shape)
        if name == "to_embed.weight":
            v = rng.normal(0.0, 1.0, shape)
        elif name in ln and name.endswith(".weight"):
            v = 1.0 + rng.normal(0.0, 0.1, shape)
        elif name in ln and name.endswith(".bias"):
            v = rng.normal(0.0, 0.1, shape)
        elif name.endswith("sgu.weight"):
            v = rng.normal(0.0, 0.5 / np.sqrt(c["seq"]), shape)
        elif name.endswith("sgu.bias"):
            v = c.get("sgu_bias", 1.0) + rng.normal(0.0, 0.2, shape)
        elif name.endswith("sgu.circulant_pos_x") or name.endswith("sgu.circulant_pos_y"):
            v = 1.0 + rng.normal(0.0, 0.3, shape)
        elif len(shape) == 2 and name.endswith(".weight"):  # nn.Linear (out, in)
            v = rng.normal(0.0, 1.0 / np.sqrt(shape[1]), shape)
        elif name.endswith(".bias"):
            v = rng.normal(0.0, 0.1, shape)
        else:
            raise RuntimeError(f"no randomisation rule for {name} {shape}")
        new[name] = torch.from_numpy(np.asarray(v, dtype=np.float64)).to(t.dtype)
    model.load_state_dict(new, strict=True)


# ---------------------------------------------------------------------------
# Independent float64 reference written from docs/models.md section 5, used
# only to check that g-mlp-pytorch still computes what the library implements.
def _ln(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def _gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / np.sqrt(2.0)))


def _act(x, act):
    return {"identity": lambda v: v, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
            "gelu": _gelu, "silu": lambda v: v * torch.sigmoid(v),
            "relu": lambda v: v.clamp(min=0.0)}[act](x)


def _shift(y, shift, causal):
    if shift == 0:
        return y
    shifts = list(range(0 if causal else -shift, shift + 1))
    k, n = len(shifts), y.shape[1]
    c = y.shape[-1] // k
    out = y.clone()
    for j, a in enumerate(shifts):
        seg = torch.zeros_like(y[..., j * c:(j + 1) * c])
        for t in range(n):
            if 0 <= t - a < n:
                seg[:, t] = y[:, t - a, j * c:(j + 1) * c]
        out[..., j * c:(j + 1) * c] = seg
    return out


def doc_layers(sd, x, c, block="fn.fn.fn.", em=None):
    """The layers on x (B x n x dim, float64); block: the gMLPBlock's path in a
    layer (the LM's; gMLPVision's is fn.fn.); em: the precision modes'
    emulation (tools/precision_ref.py; None: plain float64), rounding the
    operands of the library's products (the circulant matrix built in fp32,
    as the library builds it at upload)."""
    n, S, H = x.shape[1], c["seq"], c["heads"]
    mm = em.mm if em else torch.matmul
    wt = em.weight if em else (lambda w: w)
    for l in range(c["depth"]):
        P = f"layers.{l}.{block}"
        y = _ln(x, sd[f"layers.{l}.fn.norm.weight"], sd[f"layers.{l}.fn.norm.bias"])
        y = _shift(y, c["shift"], c["causal"])
        z = _gelu(mm(y, wt(sd[P + "proj_in.0.weight"]).T) + sd[P + "proj_in.0.bias"])
        z = em.held(z) if em else z
        g = z.shape[-1] // 2
        res, gate = z[..., :g], z[..., g:]
        gate = _ln(gate, sd[P + "sgu.norm.weight"], sd[P + "sgu.norm.bias"])
        if c["circulant"]:
            w = sd[P + "sgu.weight"]
            W = torch.zeros(H, S, S, dtype=torch.float64)
            for i in range(S):
                for j in range(i + 1):
                    W[:, i, j] = w[:, S - 1 - (i - j)]
            if em:  # w * pos_x * pos_y, each product rounded to fp32
                W = fp32(fp32(W * sd[P + "sgu.circulant_pos_x"][:, :, None])
                         * sd[P + "sgu.circulant_pos_y"][:, None, :])
            else:
                W = W * sd[P + "sgu.circulant_pos_x"][:, :, None] * sd[P + "sgu.circulant_pos_y"][:, None, :]
        else:
            W = sd[P + "sgu.weight"].clone()
        b = sd[P + "sgu.bias"]
        if c["causal"]:
            W, b = W[:, :n, :n] * torch.ones(n, n, dtype=torch.float64).tril(), b[:, :n]
        else:
            assert n == S
        W = wt(W)
        dh = g // H
        out = torch.empty_like(gate)
        for h in range(H):
            gh = gate[..., h * dh:(h + 1) * dh]
            out[..., h * dh:(h + 1) * dh] = (mm(W[h], gh) if em else torch.einsum("mn,bnc->bmc", W[h], gh)) \
                + b[h][None, :, None]
        if c["attn_dim"]:
            q, k, v = mm(y, wt(sd[P + "attn.to_qkv.weight"]).T).chunk(3, dim=-1)
            sim = mm(q, k.transpose(1, 2)) / np.sqrt(c["attn_dim"])
            if c["causal"]:
                sim = sim.masked_fill(torch.ones(n, n).triu(1).bool(), float("-inf"))
            out = out + mm(mm(torch.softmax(sim, -1), v), wt(sd[P + "attn.to_out.weight"]).T) \
                + sd[P + "attn.to_out.bias"]
        s = _act(out, c["act"]) * res
        x = x + mm(s, wt(sd[P + "proj_out.weight"]).T) + sd[P + "proj_out.bias"]
    return x


def doc_reference(sd, tokens, c, em=None):
    sd = {k: v.double() for k, v in sd.items()}
    x = doc_layers(sd, sd["to_embed.weight"][tokens], c, em=em)
    x = _ln(x, sd["to_logits.0.weight"], sd["to_logits.0.bias"])
    return (em.mm if em else torch.matmul)(x, (em.weight if em else (lambda w: w))(sd["to_logits.1.weight"]).T) \
        + sd["to_logits.1.bias"]
# ---------------------------------------------------------------------------


def logits_of(model, tokens):
    with torch.no_grad():
        return model(tokens)


def checks(model, c, tokens, logits, rng):
    """The paths that this case is about must change the logits."""
    name, scale = c["name"], logits.abs().max().item()

    def changed(m, what, frac=0.05):
        d = (logits_of(m, tokens) - logits).abs().max().item()
        assert d > frac * scale, f"{name}: {what} changes the logits by only {d:.3g} (max |logit| {scale:.3g})"
        return d

    m = copy.deepcopy(model)
    for layer in m.layers:
        layer.fn.fn.fn.sgu.weight.data.zero_()
    d_sgu = changed(m, "zeroing sgu.weight")
    if c["attn_dim"]:
        m = copy.deepcopy(model)
        for layer in m.layers:
            layer.fn.fn.fn.attn = None
        changed(m, "removing the tiny attention")
    if c["shift"]:
        m = copy.deepcopy(model)
        for layer in m.layers:
            layer.fn.fn.shifts = (0,)
        changed(m, "removing the token shift")
    if c["act"] != "identity":
        m = copy.deepcopy(model)
        for layer in m.layers:
            layer.fn.fn.fn.sgu.act = nn.Identity()
        changed(m, "replacing the activation by identity")
    if c["circulant"]:
        m = copy.deepcopy(model)
        for layer in m.layers:
            layer.fn.fn.fn.sgu.circulant_pos_x.data.fill_(1.0)
        changed(m, "circulant_pos_x = 1")
    # look-ahead: change the last token
    t2 = tokens.clone()
    t2[:, -1] = (t2[:, -1] + 1) % c["vocab"]
    l2 = logits_of(model, t2)
    early = (l2[:, :-1] - logits[:, :-1]).abs().max().item()
    if c["causal"] or c["circulant"] and not c["shift"] and not c["attn_dim"]:
        # (a circulant SGU is lower triangular, so without shift/attention even a
        # causal=False model is causal)
        assert early == 0.0, f"{name}: causal model looks ahead ({early})"
    else:
        assert early > 0.01 * scale, f"{name}: bidirectional model does not look ahead ({early})"
    return d_sgu


def make(c, outdir, rng, prec_out):
    name = c["name"]
    model = build(c)
    randomise(model, c, rng)
    model_path = os.path.join(outdir, name + ".safetensors")
    meta = export_lm(model, model_path, dtype=STORAGE[c["storage"]])
    assert meta == {"gmlp.arch": "gmlp_lm", "gmlp.causal": "true" if c["causal"] else "false",
                    "gmlp.act": c["act"], "gmlp.shift_tokens": str(c["shift"])}, meta

    stored = load_file(model_path)
    for k, v in stored.items():
        assert v.dtype == STORAGE[c["storage"]], (k, v.dtype)
    model = model.double().eval()
    model.load_state_dict({k: v.double() for k, v in stored.items()}, strict=True)

    tokens = torch.from_numpy(rng.integers(0, c["vocab"], size=(c["batch"], c["n"])).astype(np.int64))
    logits = logits_of(model, tokens)
    assert logits.shape == (c["batch"], c["n"], c["vocab"]) and logits.dtype == torch.float64

    ref_doc = doc_reference(stored, tokens, c)
    err_doc = (ref_doc - logits).abs().max().item()
    assert err_doc < 1e-10, f"{name}: g-mlp-pytorch vs docs/models.md section 5: {err_doc}"
    d_sgu = checks(model, c, tokens, logits, rng)

    # what a float32 implementation can expect
    m32 = build(c)
    m32.load_state_dict({k: v.float() for k, v in stored.items()}, strict=True)
    err32 = (logits_of(m32, tokens).double() - logits).abs().max().item()

    ref_meta = {"vocab_size": str(c["vocab"]), "seq_len": str(c["seq"]), "dim": str(c["dim"]),
                "depth": str(c["depth"]), "ffn_dim": str(c["dim"] * c["ff_mult"]),
                "heads": str(c["heads"]), "attn_dim": str(c["attn_dim"] or 0),
                "causal": "true" if c["causal"] else "false", "shift_tokens": str(c["shift"]),
                "act": c["act"], "circulant": "true" if c["circulant"] else "false",
                "model": name + ".safetensors", "storage": c["storage"],
                "generator": "tools/make_lm_fixtures.py"}
    ref_path = os.path.join(outdir, name + ".ref.safetensors")
    save_file({"tokens": tokens.to(torch.int32).contiguous(), "logits": logits.contiguous()},
              ref_path, metadata=ref_meta)
    sort_metadata(ref_path)
    os.chmod(ref_path, 0o644)
    errs = precision_ref.write(prec_out, name, c["storage"],
                               lambda em: {"logits": doc_reference(stored, tokens, c, em)},
                               ["logits"], {"logits": logits})
    print(f"{name:23s} {c['storage']:4s} V={c['vocab']:3d} d={c['dim']:2d} S={c['seq']:2d} "
          f"B={c['batch']} n={c['n']:2d}  max|logit|={logits.abs().max().item():6.3f}  "
          f"zero-sgu max|d|={d_sgu:6.3f}  f32-vs-f64 max err={err32:.2e}  "
          + " ".join(f"{m}={e:.1e}" for m, e in errs.items()), flush=True)


def fixture_main(doc, subdir, cases, make_case, seed):
    """The g-mlp-pytorch fixture scripts' command line: --out (default
    tests/data/SUBDIR), make_case(case, out, rng) with a PCG64 stream of its
    own per case, and the folder kept under 1 MiB."""
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "data", subdir))
    ap.add_argument("--prec-out", default=os.path.join(here, "..", "tests", "data", "precision"),
                    help="where the precision modes' references go (NAME.prec.safetensors)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    torch.set_grad_enabled(False)
    for i, c in enumerate(cases):
        make_case(c, args.out, np.random.default_rng([seed, i]), args.prec_out)
    for d in (args.out, args.prec_out):
        total = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        print(f"total {total} bytes in {os.path.normpath(d)}")
        assert total < 1 << 20
    return 0


if __name__ == "__main__":
    sys.exit(fixture_main(__doc__, "lm", CASES, make, SEED))
