#!/usr/bin/env python3
"""Trains the bundled Fashion-MNIST gMLP (timm MlpMixer + SpatialGatingBlock)
on the CPU and writes models/fashion-mnist-gmlp.safetensors, the PyTorch
predictions on the 10k test images, and a few example PNGs.

Data: Debian's dataset-fashion-mnist (IDX files, read directly).
Re-make the committed model (models/README.md has the details):
    apt-get install libopenblas0-openmp      # Debian's torch calls the system BLAS: see blas_library()
    python3 tools/train_fashion_mnist.py --eval-every 4
About 24 minutes on 2 quiet cores with OpenBLAS; --out-dir and --examples-dir
choose where the files go and do not change the training.
"""
import argparse
import gzip
import math
import os
import re
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from timm.layers import GatedMlp
from timm.models.mlp_mixer import MlpMixer, SpatialGatingBlock

LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
          "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
MEAN, STD = 0.286, 0.353  # of the training pixels / 255


def read_idx(path, magic, ndim):
    with gzip.open(path, "rb") as f:
        data = f.read()
    got, = struct.unpack(">I", data[:4])
    if got != magic:
        sys.exit(f"{path}: bad IDX magic {got:#x}, expected {magic:#x}")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if arr.size != int(np.prod(dims)):
        sys.exit(f"{path}: {arr.size} values for shape {dims}")
    return arr.reshape(dims)


def load_split(root, split):
    images = read_idx(os.path.join(root, f"{split}-images-idx3-ubyte.gz"), 0x803, 3)
    labels = read_idx(os.path.join(root, f"{split}-labels-idx1-ubyte.gz"), 0x801, 1)
    return images, labels.astype(np.int64)


def normalise(images_u8):
    """What the C side does: pixel / 255, then (x - mean) / std."""
    x = torch.from_numpy(images_u8.astype(np.float32) / 255.0).unsqueeze(1)
    return (x - MEAN) / STD


def augment(x, gen):
    """Random crop with 2-pixel zero padding (in pixel space) and horizontal flip."""
    b = x.shape[0]
    pad_value = (0.0 - MEAN) / STD
    padded = F.pad(x, (2, 2, 2, 2), value=pad_value)
    dx = torch.randint(0, 5, (b,), generator=gen)
    dy = torch.randint(0, 5, (b,), generator=gen)
    rows = (dy[:, None] + torch.arange(28)[None, :])  # b x 28
    cols = (dx[:, None] + torch.arange(28)[None, :])
    idx_b = torch.arange(b)[:, None, None]
    out = padded[idx_b, 0, rows[:, :, None], cols[:, None, :]].unsqueeze(1)
    flip = torch.rand(b, generator=gen) < 0.5
    out[flip] = out[flip].flip(-1)
    return out


def blas_library():
    """The BLAS shared object this process loaded: Debian's python3-torch calls the system BLAS, and the
    reference (netlib) one makes training ~14x slower than OpenBLAS (apt-get install libopenblas0-openmp)."""
    torch.mm(torch.ones(64, 64), torch.ones(64, 64))
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f}
    blas = sorted(os.path.relpath(p, "/usr/lib") for p in paths if re.match(r"lib(open)?blas|libmkl", os.path.basename(p)))
    return ", ".join(blas) or "none found (built in?)"


def build_model(args):
    return MlpMixer(num_classes=10, img_size=28, in_chans=1, patch_size=4, num_blocks=args.depth,
                    embed_dim=args.dim, mlp_ratio=args.mlp_ratio, block_layer=SpatialGatingBlock,
                    mlp_layer=GatedMlp, drop_path_rate=args.drop_path)


def mflop_per_image(model, args):
    n = (28 // 4) ** 2
    d, h = args.dim, int(args.mlp_ratio * args.dim)
    block = n * d * h + (h // 2) * n * n + n * (h // 2) * d
    return 2 * (n * 16 * d + args.depth * block + d * 10) / 1e6


@torch.no_grad()
def predict(model, x, batch=1000):
    model.eval()
    return torch.cat([model(x[i:i + batch]).argmax(1) for i in range(0, len(x), batch)])


def write_examples(out_dir, images, labels, preds):
    from PIL import Image
    os.makedirs(out_dir, exist_ok=True)
    for c, name in enumerate(LABELS):
        slug = name.lower().replace("/", "_").replace(" ", "_").replace("-", "_")
        i = next(i for i in range(len(labels)) if labels[i] == c and preds[i] == c)
        Image.fromarray(images[i], mode="L").save(os.path.join(out_dir, f"{slug}-{i}.png"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(__file__), "..", "models"))
    ap.add_argument("--examples-dir", default=os.path.join(os.path.dirname(__file__), "..", "examples"))
    ap.add_argument("--epochs", type=int, default=13)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--mlp-ratio", type=float, default=3.0)
    ap.add_argument("--drop-path", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0, help="train on the first N images only (probing)")
    ap.add_argument("--warmup", type=float, default=0.5, help="linear warm-up, in epochs")
    ap.add_argument("--eval-every", type=int, default=0, help="report test top-1 every N epochs (0: at the end only)")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(args.seed)

    train_u8, train_y = load_split(args.data, "train")
    test_u8, test_y = load_split(args.data, "t10k")
    if args.limit:
        train_u8, train_y = train_u8[:args.limit], train_y[:args.limit]
    x_train, y_train = normalise(train_u8), torch.from_numpy(train_y)
    x_test, y_test = normalise(test_u8), torch.from_numpy(test_y)

    model = build_model(args)
    blas = blas_library()
    if "x86_64-linux-gnu/blas/" in blas:
        print("warning: the reference (netlib) BLAS is loaded; training will take hours. "
              "apt-get install libopenblas0-openmp", file=sys.stderr, flush=True)
    params = sum(p.numel() for p in model.parameters())
    print(f"gMLP dim {args.dim} depth {args.depth} mlp_ratio {args.mlp_ratio}: {params} params, "
          f"{mflop_per_image(model, args):.1f} MFLOP/image; BLAS: {blas}", flush=True)

    steps_per_epoch = math.ceil(len(x_train) / args.batch)
    total = steps_per_epoch * args.epochs
    warmup = int(steps_per_epoch * args.warmup)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup))))
    command = "python3 tools/train_fashion_mnist.py " + " ".join(sys.argv[1:])

    t0 = time.time()
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(x_train), generator=gen)
        loss_sum = 0.0
        for i in range(steps_per_epoch):
            idx = perm[i * args.batch:(i + 1) * args.batch]
            xb = augment(x_train[idx], gen)
            loss = F.cross_entropy(model(xb), y_train[idx], label_smoothing=args.label_smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += loss.item()
        report = f"epoch {epoch + 1}/{args.epochs}: loss {loss_sum / steps_per_epoch:.4f}"
        if args.eval_every and (epoch + 1) % args.eval_every == 0 and epoch + 1 < args.epochs:
            report += f", test top-1 {(predict(model, x_test) == y_test).float().mean().item():.4f}"
        print(f"{report}, {time.time() - t0:.0f} s", flush=True)

    preds = predict(model, x_test)
    acc = (preds == y_test).float().mean().item()
    wall = time.time() - t0
    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, "fashion-mnist-gmlp.safetensors")
    metadata = {
        "gmlp.arch": "gmlp",
        "gmlp.img_size": "28",
        "gmlp.crop_pct": "1.0",
        "gmlp.mean": str(MEAN),
        "gmlp.std": str(STD),
        "gmlp.interpolation": "bilinear",
        "gmlp.labels": "\n".join(LABELS),
        "gmlp.test_accuracy": f"{acc:.4f}",
        "gmlp.dataset": "Fashion-MNIST (Debian dataset-fashion-mnist), 60k train / 10k test",
        "gmlp.seed": str(args.seed),
        "gmlp.epochs": str(args.epochs),
        "gmlp.train_command": command,
        "gmlp.train_seconds": f"{wall:.0f}",
        "gmlp.torch_version": torch.__version__,
        "gmlp.train_blas": blas,
    }
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    save_file(state, path, metadata=metadata)
    with open(os.path.join(args.out_dir, "fashion-mnist-gmlp.predictions.txt"), "w") as f:
        f.write("\n".join(str(int(p)) for p in preds) + "\n")
    write_examples(args.examples_dir, test_u8, test_y, preds.numpy())
    print(f"wrote {path}: test top-1 {acc:.4f}, {wall:.0f} s", flush=True)


if __name__ == "__main__":
    main()
