#!/usr/bin/env python3
"""Trains the bundled byte-level gMLP language model (lucidrains g-mlp-pytorch
``gMLP``, causal, vocab 256) on Debian's ``fortunes`` and writes

    models/fortunes-gmlp-lm.safetensors   (via tools/export_lm.py, float32)
    models/fortunes-heldout.txt           (held-out text for the C test)
    models/fortunes-gmlp-lm.samples.txt   (a few samples, temperature 0.8, top-k 40)

Data: the plain fortune files in /usr/share/games/fortunes/ (every regular file
whose name does not end in .dat or .u8; the .u8 files are symlinks and the
``off/`` directory, if present, is skipped), read as bytes in sorted file-name
order.  A fortune is the text between lines consisting only of ``%`` (with
leading/trailing newlines removed; empty fortunes dropped).  Fortune number i
(counting from 0 over all files in that order) is held out when i % 20 == 19;
the rest is the training text.  Both texts are written in the fortune-file
format itself: each fortune followed by ``\\n%\\n``.  models/fortunes-heldout.txt
is the first held-out fortunes (in that format) whose total stays within
--heldout-cap bytes (32 KiB).

Held-out evaluation (the C test replicates this exactly):
    text = bytes of models/fortunes-heldout.txt; S = seq_len
    for start in range(0, len(text) - 1, S):
        chunk = text[start:start + S + 1]
        inputs, targets = chunk[:-1], chunk[1:]     # the last chunk may be shorter (>= 2 bytes)
        logits = model(inputs)                      # each chunk on its own, positions 0..len-1
        total += sum of -log_softmax(logits)[target] over the chunk (natural log)
    bpb = total / (number of targets * ln 2)
computed in float64 from exactly the stored weights; stored as gmlp.heldout_bpb.

Training: random windows of seq_len + 1 bytes from the training text, AdamW,
linear warm-up then cosine decay to 0, gradient clipping at 1, fixed seed,
torch.set_num_threads(2).  Re-make the committed model (exact command in
models/README.md):

    /usr/bin/python3 tools/train_lm.py

``--bench N`` runs N steps, prints the throughput and exits without writing.
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_lm import export_lm  # noqa: E402

FORTUNE_DIR = "/usr/share/games/fortunes"
SEP = b"\n%\n"


def fortune_files(root):
    names = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if name.endswith(".dat") or name.endswith(".u8") or name == "off":
            continue
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        names.append(name)
    return names


def parse_fortunes(data):
    out, cur = [], []
    for line in data.split(b"\n"):
        if line == b"%":
            f = b"\n".join(cur).strip(b"\n")
            if f.strip():
                out.append(f)
            cur = []
        else:
            cur.append(line)
    f = b"\n".join(cur).strip(b"\n")
    if f.strip():
        out.append(f)
    return out


def load_texts(root, heldout_cap):
    fortunes = []
    files = fortune_files(root)
    if not files:
        sys.exit(f"no fortune files in {root} (apt-get install fortunes)")
    for name in files:
        with open(os.path.join(root, name), "rb") as f:
            fortunes.extend(parse_fortunes(f.read()))
    train = [f for i, f in enumerate(fortunes) if i % 20 != 19]
    held = [f for i, f in enumerate(fortunes) if i % 20 == 19]
    train_text = b"".join(f + SEP for f in train)
    held_text, n_held = b"", 0
    for f in held:
        if len(held_text) + len(f) + len(SEP) > heldout_cap:
            break
        held_text += f + SEP
        n_held += 1
    return files, len(fortunes), len(train), train_text, len(held), n_held, held_text


# --------------------------------------------------------------------------
# Debian's torch 1.13 uses the reference (netlib) BLAS: matmuls run at ~3 GFLOP/s,
# while oneDNN convolutions run at ~40-70.  For training only, nn.Linear and the
# SGU's spatial einsum are computed as 1x1 convolutions (the same maths; the
# parameters and state_dict are untouched).  --no-onednn turns this off.
def _conv_linear_forward(self, x):
    shape = x.shape
    xt = x.reshape(-1, shape[-1]).t().contiguous()[None, :, :, None]  # 1 x in x N x 1
    y = F.conv2d(xt, self.weight[:, :, None, None], self.bias)          # 1 x out x N x 1
    return y[0, :, :, 0].t().reshape(*shape[:-1], self.weight.shape[0])


def _einsum(eq, *ops):
    if eq == "b h n d, h m n -> b h m d":
        g, w = ops
        b, h, n, d = g.shape
        m = w.shape[1]
        y = F.conv2d(g.reshape(b, h * n, d, 1), w.reshape(h * m, n, 1, 1), groups=h)
        return y.reshape(b, h, m, d)
    return torch.einsum(eq, *ops)


def use_onednn(model):
    import types
    import g_mlp_pytorch.g_mlp_pytorch as gm
    gm.einsum = _einsum
    for mod in model.modules():
        if isinstance(mod, nn.Linear):
            mod.forward = types.MethodType(_conv_linear_forward, mod)
    return model


def build_model(args):
    from g_mlp_pytorch import gMLP
    act = {"identity": nn.Identity(), "tanh": nn.Tanh()}[args.act]
    return gMLP(num_tokens=256, dim=args.dim, depth=args.depth, seq_len=args.seq_len,
                heads=args.heads, ff_mult=args.ff_mult, causal=True,
                shift_tokens=args.shift_tokens, act=act)


def heldout_nll(model, text, seq_len, dtype, batch=64):
    """Total natural-log NLL and number of targets, by the docstring's definition."""
    chunks = []
    for start in range(0, len(text) - 1, seq_len):
        chunk = text[start:start + seq_len + 1]
        assert len(chunk) >= 2
        chunks.append(chunk)
    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        full = [c for c in chunks if len(c) == seq_len + 1]
        rest = [c for c in chunks if len(c) != seq_len + 1]
        groups = [full[i:i + batch] for i in range(0, len(full), batch)] + [[c] for c in rest]
        for g in groups:
            t = torch.tensor([list(c) for c in g], dtype=torch.long)
            logits = model(t[:, :-1]).to(dtype)
            lp = F.log_softmax(logits, dim=-1)
            nll = -lp.gather(-1, t[:, 1:, None]).squeeze(-1)
            total += nll.sum().item()
            count += nll.numel()
    return total, count


def sample(model, prompt, n, seq_len, gen, temperature=0.8, top_k=40):
    model.eval()
    seq = list(prompt)
    with torch.no_grad():
        for _ in range(n):
            ctx = torch.tensor([seq[-seq_len:]], dtype=torch.long)
            logits = model(ctx)[0, -1].float() / temperature
            v, idx = torch.topk(logits, top_k)
            p = torch.softmax(v, dim=-1)
            seq.append(int(idx[torch.multinomial(p, 1, generator=gen)]))
    return bytes(seq)


def lr_at(step, args):
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    t = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.lr * 0.5 * (1.0 + math.cos(math.pi * min(1.0, t)))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=FORTUNE_DIR)
    ap.add_argument("--out-dir", default=os.path.join(here, "..", "models"))
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--heads", type=int, default=1)
    ap.add_argument("--ff-mult", type=int, default=4)
    ap.add_argument("--shift-tokens", type=int, default=1)
    ap.add_argument("--act", default="identity", choices=["identity", "tanh"])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=900)
    ap.add_argument("--warmup", type=int, default=60)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--wd", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--heldout-cap", type=int, default=32768)
    ap.add_argument("--eval-every", type=int, default=300)
    ap.add_argument("--no-onednn", action="store_true",
                    help="use torch's own Linear/einsum (slow with a reference BLAS)")
    ap.add_argument("--bench", type=int, default=0, metavar="N",
                    help="time N training steps and exit (writes nothing)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    t_wall0, t_cpu0 = time.time(), time.process_time()

    files, n_all, n_train, train_text, n_held_all, n_held, held_text = load_texts(args.data, args.heldout_cap)
    print(f"{len(files)} files, {n_all} fortunes: {n_train} train ({len(train_text)} bytes), "
          f"{n_held_all} held out, of which the first {n_held} ({len(held_text)} bytes) are evaluated",
          flush=True)
    data = torch.from_numpy(np.frombuffer(train_text, dtype=np.uint8).astype(np.int64))

    model = build_model(args)
    if not args.no_onednn:
        use_onednn(model)
    nparams = sum(p.numel() for p in model.parameters())
    print(f"gMLP dim {args.dim} depth {args.depth} seq_len {args.seq_len} ff_mult {args.ff_mult} "
          f"heads {args.heads} shift {args.shift_tokens} act {args.act}: {nparams} parameters", flush=True)

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and n != "to_embed.weight"]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and n != "to_embed.weight")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.wd},
                             {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.99))
    S = args.seq_len
    steps = args.bench if args.bench else args.steps
    ar = torch.arange(S + 1)
    t_train0, c_train0 = time.time(), time.process_time()
    ema = None
    for step in range(steps):
        starts = torch.from_numpy(rng.integers(0, len(data) - S - 1, size=args.batch))
        w = data[starts[:, None] + ar[None, :]]
        x, y = w[:, :-1], w[:, 1:]
        for g in opt.param_groups:
            g["lr"] = lr_at(step, args)
        model.train()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, 256), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        if (step + 1) % 50 == 0 or step == 0:
            el = time.time() - t_train0
            cpu = time.process_time() - c_train0
            print(f"step {step + 1}/{steps} loss {loss.item():.4f} (ema {ema / math.log(2):.3f} bpb) "
                  f"lr {lr_at(step, args):.2e}  {el:.0f}s wall {cpu:.0f}s cpu  "
                  f"{(step + 1) * args.batch * S / el:.0f} tok/s", flush=True)
        if not args.bench and args.eval_every and (step + 1) % args.eval_every == 0 and step + 1 < steps:
            tot, cnt = heldout_nll(model, held_text, S, torch.float32)
            print(f"  held-out {tot / cnt / math.log(2):.4f} bpb (float32)", flush=True)
    train_wall = time.time() - t_train0
    train_cpu = time.process_time() - c_train0
    if args.bench:
        print(f"bench: {steps} steps in {train_wall:.1f}s wall, {train_cpu:.1f}s cpu: "
              f"{train_wall / steps:.3f} s/step", flush=True)
        return 0

    os.makedirs(args.out_dir, exist_ok=True)
    held_path = os.path.join(args.out_dir, "fortunes-heldout.txt")
    with open(held_path, "wb") as f:
        f.write(held_text)
    model_path = os.path.join(args.out_dir, "fortunes-gmlp-lm.safetensors")
    model.eval()
    cmd = " ".join(["python3", "tools/train_lm.py"] + sys.argv[1:])
    # float64 held-out bpb from exactly the stored (float32) weights: export once,
    # reload, evaluate, then export again with the value in the metadata
    # (the tensors are identical; only the header changes).
    export_lm(model, model_path, dtype=torch.float32)
    from safetensors.torch import load_file
    stored = load_file(model_path)
    m64 = build_model(args).double().eval()
    m64.load_state_dict({k: v.double() for k, v in stored.items()}, strict=True)
    tot, cnt = heldout_nll(m64, held_text, S, torch.float64, batch=32)
    bpb = tot / (cnt * math.log(2))
    tot32, _ = heldout_nll(model, held_text, S, torch.float32)
    print(f"held-out: {cnt} targets, {bpb:.6f} bpb (float64), {tot32 / (cnt * math.log(2)):.6f} (float32)",
          flush=True)
    total_wall = time.time() - t_wall0
    meta = {
        "gmlp.tokenizer": "bytes",
        "gmlp.heldout_bpb": f"{bpb:.6f}",
        "gmlp.heldout_file": "fortunes-heldout.txt",
        "gmlp.heldout_bytes": str(len(held_text)),
        "gmlp.train_data": (f"Debian fortunes, {args.data}: {len(files)} files, {n_all} fortunes; "
                            f"every 20th held out; {n_train} fortunes, {len(train_text)} bytes trained on"),
        "gmlp.train_seed": str(args.seed),
        "gmlp.train_steps": str(args.steps),
        "gmlp.train_command": cmd,
        "gmlp.train_seconds": f"{train_wall:.0f}",
    }
    export_lm(model, model_path, dtype=torch.float32, extra_metadata=meta)
    reread = load_file(model_path)
    assert all(torch.equal(reread[k], stored[k]) for k in stored)

    gen = torch.Generator().manual_seed(args.seed)
    samples = []
    for prompt in (b"%\n", b"The ", b"A computer ", b"Q:", b"Love "):
        samples.append(sample(model, prompt, 300, S, gen))
    with open(os.path.join(args.out_dir, "fortunes-gmlp-lm.samples.txt"), "wb") as f:
        for s in samples:
            f.write(b"=== sample (temperature 0.8, top-k 40) ===\n" + s + b"\n")
    for s in samples:
        print("---\n" + s.decode("utf-8", errors="replace"), flush=True)
    print(f"done: training {train_wall:.0f}s wall / {train_cpu:.0f}s cpu ({train_cpu / train_wall:.2f} cores), "
          f"total {total_wall:.0f}s wall / {time.process_time() - t_cpu0:.0f}s cpu; "
          f"{nparams} parameters; held-out {bpb:.6f} bpb", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
