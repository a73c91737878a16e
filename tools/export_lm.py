#!/usr/bin/env python3
"""Exports a lucidrains g-mlp-pytorch language model (``gMLP`` built with
``num_tokens``) to safetensors for gmlp-cl.

The tensors keep g-mlp-pytorch's state_dict names unchanged (``to_embed.weight``,
``layers.{i}.fn.norm.*``, ``layers.{i}.fn.fn.fn.proj_in.0.*``, ``...sgu.*``,
``...attn.*``, ``...proj_out.*``, ``to_logits.0.*``, ``to_logits.1.*``), stored
contiguous in one dtype (F32, F16 or BF16).  A state_dict cannot tell the
settings that have no parameters, so they go into ``__metadata__`` (all values
are strings):

    gmlp.arch          gmlp_lm
    gmlp.causal        true | false            (sgu.causal)
    gmlp.act           identity | tanh | sigmoid | gelu | silu | relu   (sgu.act; GELU must be exact/erf)
    gmlp.shift_tokens  integer >= 0            (max of PreShiftTokens.shifts)

plus any extra string pairs given by the caller (e.g. ``gmlp.tokenizer`` =
``bytes`` and provenance).  The metadata keys are written sorted, so the same
model gives byte-identical files.

As a module::

    from export_lm import export_lm
    export_lm(model, "out.safetensors", dtype=torch.float16,
              extra_metadata={"gmlp.tokenizer": "bytes"})

From the command line, from a ``torch.save``d state_dict (the settings must be
given as flags; everything else is read from the tensor shapes)::

    /usr/bin/python3 tools/export_lm.py --from-pt state_dict.pt \\
        --causal true --act tanh --shift-tokens 1 [--dtype f16] \\
        [--meta gmlp.tokenizer=bytes ...] OUT.safetensors

If the .pt file holds a pickled ``gMLP`` module rather than a state_dict, the
settings are read from the module and the flags may be left out (if given they
must agree).
"""
import argparse
import collections
import os
import re
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stfile  # noqa: E402

DTYPES = {"f32": torch.float32, "float32": torch.float32,
          "f16": torch.float16, "float16": torch.float16,
          "bf16": torch.bfloat16, "bfloat16": torch.bfloat16}
ACTS = ("identity", "tanh", "sigmoid", "gelu", "silu", "relu")


class ExportError(ValueError):
    """The model or state_dict is not something gmlp-cl can run."""


# --------------------------------------------------------------------------
def act_name(act):
    """The gmlp.act string for an SGU activation module."""
    if type(act) is nn.Identity:
        return "identity"
    if type(act) is nn.Tanh:
        return "tanh"
    if type(act) is nn.Sigmoid:
        return "sigmoid"
    if type(act) is nn.SiLU:
        return "silu"
    if type(act) is nn.ReLU:
        return "relu"
    if type(act) is nn.GELU:
        approx = getattr(act, "approximate", "none")
        if approx != "none":
            raise ExportError(f"sgu.act is nn.GELU(approximate={approx!r}); gmlp-cl supports "
                              "only the exact (erf) GELU, approximate='none'")
        return "gelu"
    raise ExportError(f"sgu.act is {act!r}; gmlp-cl supports nn.Identity, nn.Tanh, nn.Sigmoid, nn.SiLU, "
                      "nn.ReLU and nn.GELU() (exact) only")


def lm_settings(model):
    """(causal, act, shift_tokens) of a g-mlp-pytorch gMLP LM, checked."""
    from g_mlp_pytorch.g_mlp_pytorch import gMLP, PreNorm, PreShiftTokens, Residual, gMLPBlock

    if not isinstance(model, gMLP):
        raise ExportError(f"expected a g_mlp_pytorch.gMLP, got {type(model).__name__}")
    if not isinstance(model.to_embed, nn.Embedding) or not isinstance(model.to_logits, nn.Sequential):
        raise ExportError("this gMLP has no token embedding / logits head: build it with "
                          "num_tokens=... (a language model); a gMLPVision's state_dict goes through "
                          "tools/export_vision.py")
    if len(model.layers) == 0:
        raise ExportError("the model has no layers (depth 0)")
    found = None
    for i, layer in enumerate(model.layers):
        ok = (isinstance(layer, Residual) and isinstance(layer.fn, PreNorm)
              and isinstance(layer.fn.fn, PreShiftTokens) and isinstance(layer.fn.fn.fn, gMLPBlock))
        if not ok:
            raise ExportError(f"layers.{i} is not Residual(PreNorm(PreShiftTokens(gMLPBlock))); "
                              "is this a g-mlp-pytorch gMLP language model?")
        shifts = tuple(layer.fn.fn.shifts)
        sgu = layer.fn.fn.fn.sgu
        causal = bool(sgu.causal)
        attn = layer.fn.fn.fn.attn
        if attn is not None and bool(attn.causal) != causal:
            raise ExportError(f"layers.{i}: attn.causal={attn.causal} but sgu.causal={causal}")
        shift = max(shifts)
        want = tuple(range(0 if causal else -shift, shift + 1))
        if shifts != want:
            raise ExportError(f"layers.{i}: PreShiftTokens.shifts={shifts} is not what gMLP builds "
                              f"for shift_tokens={shift}, causal={causal} ({want})")
        this = (causal, act_name(sgu.act), shift)
        if found is None:
            found = this
        elif this != found:
            raise ExportError(f"layers.{i} has (causal, act, shift_tokens)={this} but layers.0 has "
                              f"{found}; gmlp-cl needs them equal in all layers")
    return found


def export_lm(model, path, dtype=torch.float32, extra_metadata=None):
    """Writes ``model`` (a g_mlp_pytorch.gMLP LM) to ``path`` as safetensors with
    the state_dict names unchanged and the gmlp.* metadata; returns the
    metadata dict.  ``dtype``: torch.float32, torch.float16 or torch.bfloat16
    (or the strings f32/f16/bf16)."""
    if isinstance(dtype, str):
        if dtype.lower() not in DTYPES:
            raise ExportError(f"unknown dtype {dtype!r}; use f32, f16 or bf16")
        dtype = DTYPES[dtype.lower()]
    if dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise ExportError(f"dtype {dtype} not supported; use float32, float16 or bfloat16")
    causal, act, shift = lm_settings(model)
    meta = {"gmlp.arch": "gmlp_lm",
            "gmlp.causal": "true" if causal else "false",
            "gmlp.act": act,
            "gmlp.shift_tokens": str(shift)}
    for k, v in (extra_metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise ExportError(f"metadata must be str -> str, got {k!r}: {v!r}")
        if k in meta and meta[k] != v:
            raise ExportError(f"extra metadata {k}={v!r} contradicts the model ({meta[k]!r})")
        meta[k] = v
    sd = collections.OrderedDict()
    for k, v in model.state_dict().items():
        if not torch.is_floating_point(v):
            raise ExportError(f"{k} has non-float dtype {v.dtype}")
        if not torch.isfinite(v).all():
            raise ExportError(f"{k} holds inf or NaN")
        t = v.detach().to(device="cpu", dtype=dtype).contiguous().clone()
        if not torch.isfinite(t).all():
            raise ExportError(f"{k} overflows {dtype}")
        sd[k] = t
    stfile.write(sd, path, meta)
    return meta


# --------------------------------------------------------------------------
# state_dict -> gMLP (for the CLI)
_LAYER_RE = re.compile(r"^layers\.(\d+)\.")


def model_from_state_dict(sd, causal, act, shift_tokens):
    """Builds a g_mlp_pytorch.gMLP whose shapes match ``sd`` (sizes read from the
    tensors; causal/act/shift_tokens given) and loads ``sd`` into it strictly."""
    from g_mlp_pytorch import gMLP

    if not isinstance(sd, dict):
        raise ExportError(f"expected a state_dict (a dict of tensors), got {type(sd).__name__}")
    if "to_embed.weight" not in sd:
        hint = ""
        if any(k.startswith("module.") for k in sd):
            hint = " (the keys start with 'module.': strip that DataParallel prefix first)"
        elif "to_patch_embed.1.weight" in sd:
            hint = " (this is a gMLPVision state_dict, not a language model: use tools/export_vision.py)"
        elif "state_dict" in sd or "model" in sd:
            hint = " (it looks like a training checkpoint: save checkpoint['state_dict'] or ['model'])"
        raise ExportError("no 'to_embed.weight': not a g-mlp-pytorch gMLP language model state_dict"
                          + hint)
    for k, v in sd.items():
        if not torch.is_tensor(v):
            raise ExportError(f"{k} is a {type(v).__name__}, not a tensor")
    if any(re.match(r"^layers\.\d+\.fn\.fn\.proj_in", k) for k in sd):
        raise ExportError("keys layers.N.fn.fn.proj_in...: that is gMLPVision's nesting (tools/export_vision.py); "
                          "a gMLP LM has layers.N.fn.fn.fn.proj_in...")
    emb = sd["to_embed.weight"]
    if emb.dim() != 2:
        raise ExportError(f"to_embed.weight has shape {tuple(emb.shape)}, expected (num_tokens, dim)")
    num_tokens, dim = emb.shape
    layer_ids = sorted({int(m.group(1)) for k in sd for m in [_LAYER_RE.match(k)] if m})
    if not layer_ids or layer_ids != list(range(len(layer_ids))):
        raise ExportError(f"layer indices {layer_ids} are not 0..depth-1")
    depth = len(layer_ids)
    P = "layers.0.fn.fn.fn."
    for need in ("proj_in.0.weight", "sgu.weight", "sgu.bias", "proj_out.weight"):
        if P + need not in sd:
            raise ExportError(f"missing {P + need}")
    if "to_logits.1.weight" not in sd:
        raise ExportError("missing to_logits.1.weight (the LM head)")
    dim_ff = sd[P + "proj_in.0.weight"].shape[0]
    if dim_ff % dim:
        raise ExportError(f"proj_in width {dim_ff} is not a multiple of dim {dim} (ff_mult)")
    heads, seq_len = sd[P + "sgu.bias"].shape
    circulant = (P + "sgu.circulant_pos_x") in sd
    attn_dim = None
    if P + "attn.to_qkv.weight" in sd:
        attn_dim = sd[P + "attn.to_qkv.weight"].shape[0] // 3
    if dim % heads:
        raise ExportError(f"dim {dim} is not divisible by heads {heads}")
    if act not in ACTS:
        raise ExportError(f"--act must be one of {', '.join(ACTS)}")
    act_mod = {"identity": nn.Identity(), "tanh": nn.Tanh(), "sigmoid": nn.Sigmoid(),
               "gelu": nn.GELU(), "silu": nn.SiLU(), "relu": nn.ReLU()}[act]
    model = gMLP(num_tokens=num_tokens, dim=dim, depth=depth, seq_len=seq_len, heads=heads,
                 ff_mult=dim_ff // dim, attn_dim=attn_dim, causal=causal,
                 circulant_matrix=circulant, shift_tokens=shift_tokens, act=act_mod)
    try:
        model.load_state_dict(sd, strict=True)
    except RuntimeError as e:
        raise ExportError(f"the state_dict does not match a gMLP(num_tokens={num_tokens}, dim={dim}, "
                          f"depth={depth}, seq_len={seq_len}, heads={heads}, ff_mult={dim_ff // dim}, "
                          f"attn_dim={attn_dim}, circulant_matrix={circulant}): {e}") from None
    return model.eval()


def _bool(s):
    s = s.lower()
    if s in ("true", "1", "yes"):
        return True
    if s in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {s!r}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring for the metadata written.")
    ap.add_argument("--from-pt", required=True, metavar="FILE.pt",
                    help="torch.save'd state_dict (or pickled gMLP module)")
    ap.add_argument("--causal", type=_bool, help="true|false (required for a state_dict)")
    ap.add_argument("--act", choices=ACTS, help="SGU activation (required for a state_dict)")
    ap.add_argument("--shift-tokens", type=int, help="shift_tokens (required for a state_dict)")
    ap.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"])
    ap.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                    help="extra __metadata__ entry (repeatable), e.g. gmlp.tokenizer=bytes")
    ap.add_argument("out", metavar="OUT.safetensors")
    args = ap.parse_args(argv)

    extra = stfile.parse_meta(args.meta, ap.error)
    try:
        obj = torch.load(args.from_pt, map_location="cpu")
        if isinstance(obj, nn.Module):
            model = obj.eval()
            causal, act, shift = lm_settings(model)
            for flag, got, want in (("--causal", args.causal, causal), ("--act", args.act, act),
                                    ("--shift-tokens", args.shift_tokens, shift)):
                if got is not None and got != want:
                    raise ExportError(f"{flag} {got} disagrees with the pickled model ({want})")
        else:
            missing = [f for f, v in (("--causal", args.causal), ("--act", args.act),
                                      ("--shift-tokens", args.shift_tokens)) if v is None]
            if missing:
                raise ExportError(f"{args.from_pt} holds a state_dict, which cannot tell these "
                                  f"settings: give {', '.join(missing)}")
            if args.shift_tokens < 0:
                raise ExportError("--shift-tokens must be >= 0")
            model = model_from_state_dict(obj, args.causal, args.act, args.shift_tokens)
        meta = export_lm(model, args.out, dtype=DTYPES[args.dtype], extra_metadata=extra)
    except ExportError as e:
        print(f"export_lm: error: {e}", file=sys.stderr)
        return 1
    n = sum(p.numel() for p in model.state_dict().values())
    print(f"wrote {args.out}: {n} parameters as {args.dtype}, "
          + ", ".join(f"{k}={v}" for k, v in sorted(meta.items()) if k.startswith("gmlp.")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
