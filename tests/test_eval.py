#!/usr/bin/env python3
"""gmlp-classify --eval against timm's own pipeline (tools/eval_ref.py:
timm.data.create_dataset's ImageFolder, create_transform, timm.utils.accuracy)
on the same files: at least 99.9% of the top-1 predictions equal, top-1 and
top-5 within 0.1 point, the same classes in the same order; the report's
confusion matrix and per-class figures as the rows of --output and timm's
targets make them; on two sets:
  - the Fashion-MNIST test images (Debian's dataset-fashion-mnist) as a tree
    of PNGs, with the bundled model ($GMLP_TEST_IMAGES of them, default
    all 10,000);
  - 24 classes (c0..c23, whose natural order is not the bytewise one; a
    nested folder), 1,200 generated PNG and JPEG images of several sizes, and
    a seeded random-weight timm gMLP (24 classes) saved as .safetensors;
    again with --class-map (22 of the names, reversed).
Then: --resume of a cut .jsonl and .csv output gives the whole run's report;
two devices, a CSV of path,label lines and the Markdown give the same
figures; the SVG is XML with a cell per non-zero count; past 100 classes
(150, random) the SVG and the Markdown show 100; the refusals.

    test_eval.py GMLP_CLASSIFY TESTS_DIR

Without torch + timm + safetensors it skips (exit 77), or fails when CI is set."""
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from tools_needed import missing

try:
    import torch
    import timm  # noqa: F401
    from PIL import Image
    from safetensors.torch import save_file
except ImportError as e:
    missing(e)

CLASSIFY, TESTS = sys.argv[1], sys.argv[2]
ROOT = os.path.join(TESTS, "..")
REF = os.path.join(ROOT, "tools", "eval_ref.py")
FM_MODEL = os.path.join(ROOT, "models", "fashion-mnist-gmlp.safetensors")
FM_DATA = "/usr/share/datasets/fashion-mnist"
FM_NAMES = ["T-shirt_top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    failures += not ok


def ours(model, args, status=0):
    cmd = [CLASSIFY, "-m", model, "--eval", "-q", *args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != status:
        raise SystemExit(f"FAIL: {' '.join(cmd)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def summary(model, tree, args=()):
    return json.loads(ours(model, ["-j", *args, tree]))


def reference(model, tree, args=()):
    r = subprocess.run([sys.executable, REF, model, tree, *args], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"FAIL: eval_ref.py {model} {tree}: {r.stderr}")
    return json.loads(r.stdout)


def rows(path, tree):
    """{path relative to tree: top-1 class} of a .jsonl output."""
    out = {}
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        out[os.path.relpath(r["file"], tree)] = r["top"][0]["index"]
    return out


def figures(s):
    return (s["images"], s["top1"], s["top5"], s["confusion"], [c["support"] for c in s["classes"]])


def compare(name, model, tree, tmp, args=(), ref_args=()):
    """Ours against timm's on tree; returns our summary and timm's."""
    out = os.path.join(tmp, "rows.jsonl")
    if os.path.exists(out):
        os.remove(out)
    svg = os.path.join(tmp, "cm.svg")
    got = summary(model, tree, ["-o", out, "--svg", svg, *args])
    want = reference(model, tree, ref_args)
    mine = rows(out, tree)
    same = sum(mine.get(f) == p for f, (_, p) in want["predictions"].items())
    n = len(want["predictions"])
    check(got["images"] == n == len(mine) and same >= 0.999 * n,
          f"{name}: {same} of {n} top-1 predictions as timm's ({got['images']} images scored)")
    check(abs(got["top1"] - want["top1"]) <= 0.1 and abs(got["top5"] - want["top5"]) <= 0.1,
          f"{name}: top-1 {got['top1']:.2f} %, top-5 {got['top5']:.2f} % (timm: {want['top1']:.2f} %, "
          f"{want['top5']:.2f} %)")
    names = [c["name"] for c in got["classes"] if c["support"]]
    check(names == want["classes"], f"{name}: the classes in timm's order ({', '.join(names[:12])}...)")
    # the matrix and the per-class figures: our rows' top-1 against timm's targets
    cells, support, predicted = {}, {}, {}
    for f, (t, _) in want["predictions"].items():
        p = mine.get(f, -1)
        cells[(t, p)] = cells.get((t, p), 0) + 1
        support[t] = support.get(t, 0) + 1
        predicted[p] = predicted.get(p, 0) + 1
    check(sorted(cells.items()) == sorted(((t, p), c) for t, p, c in got["confusion"]),
          f"{name}: the confusion matrix ({len(got['confusion'])} non-zero cells) is the rows' top-1 by timm's target")
    ok = True
    for c in got["classes"]:
        i, right = c["index"], cells.get((c["index"], c["index"]), 0)
        ok &= c["support"] == support.get(i, 0) and c["predicted"] == predicted.get(i, 0) and c["correct"] == right
        ok &= c["recall"] is None if not c["support"] else abs(c["recall"] - right / c["support"]) < 1e-9
        ok &= c["precision"] is None if not c["predicted"] else abs(c["precision"] - right / c["predicted"]) < 1e-9
    check(ok, f"{name}: per-class support, precision and recall of {len(got['classes'])} classes")
    root = ET.parse(svg).getroot()
    titled = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.find("{http://www.w3.org/2000/svg}title")
              is not None]
    check(len(titled) == len(got["confusion"]), f"{name}: the SVG has {len(titled)} cells, one per non-zero count")
    return got, want


def fashion_tree(tmp, n):
    images = gzip.open(os.path.join(FM_DATA, "t10k-images-idx3-ubyte.gz")).read()[16:]
    labels = gzip.open(os.path.join(FM_DATA, "t10k-labels-idx1-ubyte.gz")).read()[8:]
    tree = os.path.join(tmp, "fashion")
    for i in range(n):
        d = os.path.join(tree, f"{labels[i]}_{FM_NAMES[labels[i]]}")
        os.makedirs(d, exist_ok=True)
        Image.frombytes("L", (28, 28), images[i * 784:(i + 1) * 784]).save(os.path.join(d, f"{i:05d}.png"))
    return tree


def random_model(path, classes=24):
    """A seeded random-weight timm gMLP (SpatialGatingBlock MlpMixer): weights drawn so that logits differ."""
    from timm.layers import GatedMlp
    from timm.models.mlp_mixer import MlpMixer, SpatialGatingBlock
    torch.manual_seed(56)
    m = MlpMixer(num_classes=classes, img_size=32, in_chans=3, patch_size=4, num_blocks=2, embed_dim=48,
                 mlp_ratio=4, block_layer=SpatialGatingBlock, mlp_layer=GatedMlp)
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(1 + 0.1 * torch.randn_like(p) if "norm" in name and name.endswith("weight")
                    else 0.3 * torch.randn_like(p))
    meta = {"gmlp.img_size": "32", "gmlp.mean": "0.5,0.4,0.3", "gmlp.std": "0.25,0.2,0.3", "gmlp.crop_pct": "0.9",
            "gmlp.interpolation": "bicubic"}
    save_file({k: v.contiguous() for k, v in m.state_dict().items()}, path, metadata=meta)


def random_tree(tmp, classes=24, n=1200):
    rng = random.Random(56)
    tree = os.path.join(tmp, "random")
    for i in range(n):
        c = rng.randrange(classes)
        d = os.path.join(tree, f"c{c}") if c != 7 else os.path.join(tree, "c7", "more", "c7")  # a leaf's name
        os.makedirs(d, exist_ok=True)
        w, h = rng.choice([(32, 32), (40, 48), (57, 35)])
        # smooth blobs, not white noise: resizing must not decide the class
        small = Image.frombytes("RGB", (4, 4), bytes(rng.randrange(256) for _ in range(48)))
        img = small.resize((w, h), Image.BILINEAR)
        ext = "jpg" if i % 5 == 0 else "png"
        img.save(os.path.join(d, f"{i:04d}.{ext}"), quality=95)
    return tree


def cut(path, keep):
    """The first `keep` of the file's bytes, ending in half a line."""
    data = open(path, "rb").read()
    open(path, "wb").write(data[:int(len(data) * keep)])


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "random-gmlp24.safetensors")
    random_model(model)
    tree = random_tree(tmp)
    full, timm_full = compare("random gMLP, 24 classes", model, tree, tmp)
    check(full["top1"] < 100 and len(full["confusion"]) > 24, "random gMLP: errors to count")
    class_map = os.path.join(tmp, "classes.txt")
    with open(class_map, "w") as f:
        f.write("\n".join(f"c{c}" for c in reversed(range(2, 24))) + "\n")
    mapped, _ = compare("random gMLP, --class-map (22 classes, reversed)", model, tree, tmp,
                     ["--class-map", class_map], ["--class-map", class_map])
    check(mapped["outside"] == full["images"] - mapped["images"] > 0, f"--class-map: {mapped['outside']} images left out")

    # --resume of a cut output: the whole run's figures
    for ext in ("jsonl", "csv"):
        out = os.path.join(tmp, f"cut.{ext}")
        ours(model, ["-o", out, tree])
        cut(out, 0.4)
        again = summary(model, tree, ["-o", out, "--resume"])
        check(figures(again) == figures(full), f"--resume of a cut .{ext}: the whole run's figures")
    # two devices (PoCL's pthread and basic; elsewhere every device)
    env = dict(os.environ, POCL_DEVICES="pthread basic")
    r = subprocess.run([CLASSIFY, "-m", model, "--eval", "-q", "-j", "-d", "all", "-b", "7", tree], env=env,
                       capture_output=True, text=True)
    check(r.returncode == 0 and figures(json.loads(r.stdout)) == figures(full),
          f"--device all ({json.loads(r.stdout)['device'] if r.returncode == 0 else r.stderr}): the same figures")
    # a CSV of path,label lines (relative paths; labels by name and by index) is the tree
    csv = os.path.join(tmp, "labels.csv")
    with open(csv, "w") as f:
        f.write("path,label\n")
        for i, (name, (t, _)) in enumerate(sorted(timm_full["predictions"].items())):
            f.write(f"{os.path.relpath(os.path.join(tree, name), tmp)},{t if i % 2 else full['classes'][t]['name']}\n")
    check(figures(summary(model, csv)) == figures(full), "a CSV of path,label lines: the tree's figures")
    md = ours(model, [tree])
    check(f"| {full['images']} | 0 | {full['top1']:.2f} % | {full['top5']:.2f} % | 24 |" in md,
          "the Markdown's table holds the JSON's figures")

    # past 100 classes the table and the picture show the 100 with the most errors; the JSON has them all
    many = os.path.join(tmp, "random-gmlp150.safetensors")
    random_model(many, 150)
    with open(os.path.join(tmp, "many.csv"), "w") as f:
        for i, name in enumerate(sorted(timm_full["predictions"])[:400]):
            f.write(f"{os.path.relpath(os.path.join(tree, name), tmp)},{(i * 37) % 150}\n")
    svg = os.path.join(tmp, "many.svg")
    got = summary(many, os.path.join(tmp, "many.csv"), ["--svg", svg])
    md = ours(many, [os.path.join(tmp, "many.csv")])
    labels = [t for t in ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}text") if t.text and
              t.text.isdigit()]
    table = md.split("| class | name")[1].split("\n\n")[0].split("\n")[2:]  # its rows, after the header
    check(len(got["classes"]) > 100 and len(labels) == 200 and f"The 100 of {len(got['classes'])} classes" in md
          and len(table) == 100,
          f"150 classes, {len(got['classes'])} present: the SVG and the Markdown show 100, the JSON all")

    def refused(args, status, words):
        r = subprocess.run([CLASSIFY, "-m", model, *args], capture_output=True, text=True)
        check(r.returncode == status and words in r.stderr,
              f"{' '.join(args)}: exit {r.returncode} (want {status}): {r.stderr.strip().splitlines()[0][:120]}")
    refused(["--eval", "--features", tree], 2, "--eval with --features")
    refused(["--svg", "x.svg", tree], 2, "without --eval")
    refused(["--eval", model], 1, "not a folder")
    refused(["--eval", os.path.join(tree, "c1")], 1, "no labelled images")
    bad = os.path.join(tmp, "bad.csv")
    open(bad, "w").write("a.png\n")
    refused(["--eval", bad], 1, "expected path,label")

    n = int(os.environ.get("GMLP_TEST_IMAGES", "10000"))
    if os.access(os.path.join(FM_DATA, "t10k-images-idx3-ubyte.gz"), os.R_OK):
        compare(f"Fashion-MNIST, {n} test images", FM_MODEL, fashion_tree(tmp, n), tmp)
    else:
        print(f"SKIP: Fashion-MNIST: {FM_DATA} not readable (apt-get install dataset-fashion-mnist)")

print(f"{failures} failed")
sys.exit(1 if failures else 0)
