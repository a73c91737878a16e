#!/usr/bin/env python3
"""gmlp-generate --eval against g-mlp-pytorch in float64 (tools/lm_eval_ref.py)
on the same windows: the summed -ln p within 1e-3 relative, the same window and
scored-token counts (every token but the first scored once), for disjoint and
overlapping windows on the bundled byte-level LM (a slice of its held-out
text) and on a random LM with everything at once (kitchen_sink: heads, tiny
attention, token shift, tanh, half weights; token ids); the held-out figure of
the bundled LM's metadata (PyTorch float64, stride seq_len) within 0.01; and
the refusals.

    test_lm_eval.py GMLP_GENERATE TESTS_DIR

Without torch + g-mlp-pytorch + safetensors it skips (exit 77), or fails when
CI is set."""
import json
import os
import random
import subprocess
import sys
import tempfile

from tools_needed import missing

try:
    import torch  # noqa: F401
    import g_mlp_pytorch  # noqa: F401
    import safetensors  # noqa: F401
except ImportError as e:
    missing(e)

GENERATE, TESTS = sys.argv[1], sys.argv[2]
ROOT = os.path.join(TESTS, "..")
REF = os.path.join(ROOT, "tools", "lm_eval_ref.py")
FORTUNES = os.path.join(ROOT, "models", "fortunes-gmlp-lm.safetensors")
HELDOUT = os.path.join(ROOT, "models", "fortunes-heldout.txt")
SINK = os.path.join(TESTS, "data", "lm", "kitchen_sink.safetensors")
failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    failures += not ok


def ours(model, source, stride=None, extra=()):
    args = [GENERATE, "-m", model, "--eval", "--json", "-q", *source, *extra]
    if stride:
        args += ["--stride", str(stride)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"FAIL: {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)["eval"]


def reference(model, source, stride=None):
    args = [sys.executable, REF, model, *source] + (["--stride", str(stride)] if stride else [])
    return json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)


def compare(name, model, source, stride=None):
    got, want = ours(model, source, stride), reference(model, source, stride)
    rel = abs(got["nll"] - want["nll"]) / want["nll"]
    same = all(got[k] == want[k] for k in ("tokens", "scored", "windows", "seq_len", "stride"))
    check(same and got["scored"] == got["tokens"] - 1 and rel <= 1e-3,
          f"{name}, stride {got['stride']}: {got['windows']} windows, {got['scored']} scored, "
          f"{got['bits_per_token']:.6f} bits per token against g-mlp-pytorch's {want['bits_per_token']:.6f} "
          f"(relative {rel:.1e})")
    return got


def refused(args, status, words):
    r = subprocess.run([GENERATE, *args], capture_output=True, text=True)
    check(r.returncode == status and words in r.stderr,
          f"{' '.join(args[-4:])}: exit {r.returncode} (want {status}): {r.stderr.strip()[:160]}")


with tempfile.TemporaryDirectory() as tmp:
    text = os.path.join(tmp, "slice.txt")
    with open(HELDOUT, "rb") as f, open(text, "wb") as g:
        g.write(f.read(1500))
    for stride in (None, 50, 7):  # disjoint; overlapping; many windows with a short last one
        got = compare("fortunes LM, 1500 bytes", FORTUNES, ["-f", text], stride)
        check(got["bits_per_byte"] == got["bits_per_token"], "byte-level: bits per byte are per token")
    rng = random.Random(5)
    ids = ",".join(str(rng.randrange(67)) for _ in range(45))
    for stride in (None, 3):
        got = compare("kitchen_sink, 45 token ids", SINK, ["--tokens", ids], stride)
        check(got["bits_per_byte"] is None, "a vocabulary of 67: no bits per byte")

    # the whole held-out text, disjoint windows: the figure tools/train_lm.py stored
    got = ours(FORTUNES, ["-f", HELDOUT])
    meta = json.loads(subprocess.run([sys.executable, "-c", "import sys, json; from safetensors import safe_open; "
                                      "print(json.dumps(safe_open(sys.argv[1], 'pt').metadata()))", FORTUNES],
                                     capture_output=True, text=True, check=True).stdout)
    want = float(meta["gmlp.heldout_bpb"])
    check(abs(got["bits_per_byte"] - want) <= 0.01,
          f"held-out: {got['bits_per_byte']:.6f} bits per byte, {want:.6f} by PyTorch (float64)")

    one = os.path.join(tmp, "one.txt")
    with open(one, "wb") as f:
        f.write(b"Q")
    refused(["-m", os.path.join(TESTS, "data", "lm", "bidir.safetensors"), "--eval", "--tokens", "1,2,3"], 1,
            "needs a causal model")
    refused(["-m", FORTUNES, "--eval", "--stride", "129", "-f", text], 2, "past the model's window")
    refused(["-m", FORTUNES, "--eval", "--stride", "0", "-f", text], 2, "--stride")
    refused(["-m", FORTUNES, "--stride", "5", "-f", text], 2, "give --eval too")
    refused(["-m", FORTUNES, "--eval", "--logits", "-f", text], 2, "give one")
    refused(["-m", FORTUNES, "--eval", "-f", one], 1, "at least 2 tokens")

print(f"{failures} failed")
sys.exit(1 if failures else 0)
