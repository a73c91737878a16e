#!/usr/bin/env python3
"""The reference for gmlp-generate --eval: a causal g-mlp-pytorch gMLP language
model, loaded in float64 from a gmlp-cl .safetensors file, scored over a text
in windows of at most seq_len tokens every STRIDE tokens, as Hugging Face's
"perplexity of fixed-length models" does it: each window scores the targets
past the previous window's last, so every token but the first is scored once.

    lm_eval_ref.py MODEL.safetensors (-f TEXT | --tokens ID,ID,...) [--stride S]

Prints JSON: tokens, scored, windows, nll (the summed -ln p), mean_nll,
bits_per_token, perplexity."""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_lm import model_from_state_dict  # noqa: E402


def load(path):
    with safe_open(path, "pt") as f:
        meta = f.metadata() or {}
    sd = {k: v.double() for k, v in load_file(path).items()}
    model = model_from_state_dict(sd, meta.get("gmlp.causal", "true") == "true", meta.get("gmlp.act", "identity"),
                                  int(meta.get("gmlp.shift_tokens", "0")))
    seq_len = sd["layers.0.fn.fn.fn.sgu.bias"].shape[1]  # as export_lm.py reads it
    return model.double().eval(), meta, seq_len


def windows(n, seq_len, stride):
    """(begin, length, scored) of each window: inputs tokens[begin:begin+length]."""
    out, prev_end = [], 0
    for begin in range(0, n - 1, stride):
        end = min(begin + seq_len, n - 1)  # the window's last target
        out.append((begin, end - begin, end - prev_end))
        prev_end = end
        if end == n - 1:
            break
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("-f", "--file", help="a text, as bytes (byte-level models)")
    src.add_argument("--tokens", help="comma-separated token ids")
    ap.add_argument("--stride", type=int, help="window step (default seq_len)")
    args = ap.parse_args()
    model, meta, seq_len = load(args.model)
    if meta.get("gmlp.causal", "true") != "true":
        sys.exit("lm_eval_ref.py: the model is bidirectional")
    if args.file:
        with open(args.file, "rb") as f:
            tokens = list(f.read())
    else:
        tokens = [int(t) for t in args.tokens.split(",")]
    stride = args.stride or seq_len
    t = torch.tensor(tokens, dtype=torch.long)
    nll, scored, wins = 0.0, 0, windows(len(tokens), seq_len, stride)
    with torch.no_grad():
        for begin, length, trg in wins:
            logp = F.log_softmax(model(t[None, begin:begin + length])[0], dim=-1)  # (length, vocab)
            targets = t[begin + 1:begin + length + 1]
            nll -= logp[length - trg:].gather(-1, targets[length - trg:, None]).sum().item()
            scored += trg
    mean = nll / scored
    print(json.dumps({"tokens": len(tokens), "scored": scored, "windows": len(wins), "seq_len": seq_len,
                      "stride": stride, "nll": nll, "mean_nll": mean, "bits_per_token": mean / math.log(2),
                      "perplexity": math.exp(mean)}))


if __name__ == "__main__":
    main()
