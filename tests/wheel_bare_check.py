"""The binary wheel on a bare machine: the checks scripts/wheel-check runs inside its Debian chroot
(python3 and python3-venv only: no compiler, nothing OpenCL), as an unprivileged user, with two
venvs installed by root (so their site-packages are read-only to the checks):
  BARE  the wheel alone: every program says in one line that there is no OpenCL device and how
        to get one, exits non-zero, no traceback;
  CPU   the wheel with its [cpu] extra (and pillow): the programs and the Python API on Intel's
        CPU runtime, against REF (the source build's gmlp-classify -o - on the same images).
Standard library only.  Prints one PASS/FAIL line per check, then "N passed, N failed, 0 skipped".
  python3 wheel_bare_check.py BARE CPU REF IMAGE...
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

bare, cpu, ref_path, images = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'}: {name}" + (f": {detail}" if detail and not ok else ""), flush=True)


def run(argv, timeout=600, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def tops(jsonl):
    """{file name: [(index, prob), ...]} of gmlp-classify's JSON lines."""
    out = {}
    for line in jsonl.splitlines():
        row = json.loads(line)
        out[os.path.basename(row["file"])] = [(t["index"], t["prob"]) for t in row["top"]]
    return out


def same_tops(got, want, tol=1e-4):
    """'' where every image has the reference's top-5, in order, probabilities within tol."""
    if set(got) != set(want):
        return f"images {sorted(got)} against {sorted(want)}"
    for f in want:
        gi, wi = [i for i, _ in got[f]], [i for i, _ in want[f]]
        dp = max(abs(g - w) for (_, g), (_, w) in zip(got[f], want[f]))
        if gi != wi or dp > tol:
            return f"{f}: classes {gi} probabilities {[p for _, p in got[f]]} against {wi} {[p for _, p in want[f]]}"
    return ""


ref = tops(open(ref_path).read())

# --- without the extra: no device, one line saying how to get one ---
hint = "pip install 'gmlp-cl[cpu]'"
for argv in (["gmlp-classify", *images[:1]], ["gmlp-generate", "-n", "5", "Q: "],
             ["gmlp-server", "--port", "0"], ["gmlp-bench", "--tiny"]):
    r = run([f"{bare}/bin/{argv[0]}", *argv[1:]], timeout=120)
    lines = r.stderr.strip().splitlines()
    ok = (r.returncode != 0 and len(lines) == 1 and "no OpenCL device" in lines[0] and hint in lines[0]
          and "Traceback" not in r.stderr and not r.stdout)
    check(f"bare: {argv[0]} says there is no device and how to get one", ok,
          f"status {r.returncode}, stderr {r.stderr!r}, stdout {r.stdout[:200]!r}")
r = run([f"{bare}/bin/gmlp-classify", "--version"])
check("bare: gmlp-classify --version works without a device", r.returncode == 0 and "0 OpenCL platform" in r.stdout,
      f"status {r.returncode}: {r.stdout!r} {r.stderr!r}")
r = run([f"{bare}/bin/python", "-m", "gmlp"])
check("bare: python -m gmlp: the version, no device and the hint",
      r.returncode == 1 and r.stdout.startswith("gmlp-cl ") and hint in r.stdout and "Traceback" not in r.stderr,
      f"status {r.returncode}: {r.stdout!r} {r.stderr!r}")

# --- with the extra ---
site = run([f"{cpu}/bin/python", "-c", "import os, gmlp; print(os.path.dirname(gmlp.__file__))"]).stdout.strip()
check("cpu: site-packages is read-only to this user", bool(site) and not os.access(site, os.W_OK), site)
r = run([f"{cpu}/bin/python", "-m", "gmlp"])
check("cpu: python -m gmlp lists Intel's CPU runtime",
      r.returncode == 0 and "Intel" in r.stdout and "gmlp-cl[cpu]" in r.stdout, f"{r.returncode}: {r.stdout!r} {r.stderr!r}")
print(r.stdout, end="")

t = time.time()
r = run([f"{cpu}/bin/gmlp-classify", "-o", "-", "--format", "jsonl", *images])
got = tops(r.stdout) if r.returncode == 0 else {}
diff = same_tops(got, ref) if r.returncode == 0 else f"status {r.returncode}: {r.stderr}"
check(f"cpu: gmlp-classify gives the source build's top-5 within 1e-4 ({len(images)} images, "
      f"{time.time() - t:.1f} s, kernel cache cold)", not diff, diff)
worst = max((abs(g - w) for f in ref if f in got for (_, g), (_, w) in zip(got[f], ref[f])), default=float("nan"))
print(f"  largest probability difference from the source build: {worst:.2e}")

r = run([f"{cpu}/bin/gmlp-generate", "-s", "1", "-n", "60", "Q: "])
check("cpu: gmlp-generate gives text for a seed", r.returncode == 0 and len(r.stdout.strip()) > len("Q: "),
      f"{r.returncode}: {r.stdout!r} {r.stderr!r}")
print(f"  {r.stdout.strip()!r}")
r2 = run([f"{cpu}/bin/gmlp-generate", "-s", "1", "-n", "60", "Q: "])
check("cpu: the same seed gives the same text", r2.stdout == r.stdout, f"{r2.stdout!r}")

api = f"""
import json, os, sys, gmlp
from PIL import Image
folder = os.path.join(os.path.dirname(gmlp.__file__), "models")
with gmlp.load(os.path.join(folder, "fashion-mnist-gmlp.safetensors")) as m:
    for path in sys.argv[1:]:
        top = m.topk(m.classify(m.preprocess(Image.open(path))), k=5)
        print(json.dumps({{"file": path, "top": [{{"index": i, "prob": p}} for i, _, p in top]}}))
"""
r = run([f"{cpu}/bin/python", "-c", api, *images])
diff = same_tops(tops(r.stdout), ref) if r.returncode == 0 else f"status {r.returncode}: {r.stderr}"
check("cpu: the Python API classifies as the source build does (within 1e-4)", not diff, diff)

server = subprocess.Popen([f"{cpu}/bin/gmlp-server", "--port", "0", "--host", "127.0.0.1"],
                          stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
port, status, seen = None, None, []
try:
    deadline = time.time() + 300
    for line in server.stderr:
        seen.append(line)
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        port = int(m.group(1)) if m else port
        if "ready" in line or time.time() > deadline:
            break
    if port:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=30) as resp:
            status = resp.status
except OSError as e:
    seen.append(f"{e}")
finally:
    server.terminate()
    server.wait(timeout=30)
check("cpu: gmlp-server answers /health", status == 200, f"port {port}, status {status}, {''.join(seen)!r}")

cache = os.path.join(os.environ["HOME"], ".cache", "gmlp")
check("cpu: the kernel cache and the driver list went to the user's cache folder",
      os.path.isdir(os.path.join(cache, "opencl-vendors")) and len(os.listdir(cache)) > 1, repr(os.listdir(cache)))

failed = results.count(False)
print(f"{len(results) - failed} passed, {failed} failed, 0 skipped")
sys.exit(1 if failed else 0)
