#!/usr/bin/env python3
"""The Windows build under Wine (scripts/windows-test): its unit suites, then the zip as a user gets it
(unpacked), each check against the Linux build's gmlp-classify on the same inputs in the same run:
  windows_check.py SRC_ROOT WIN_BUILD_DIR ZIP LINUX_CLASSIFY LINUX_GENERATE LINUX_BENCH
Prints "ok: CHECK" or "FAIL: CHECK: why" for each, then "N passed, N failed, N skipped"."""
import atexit
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

src, build, zip_path, linux_classify, linux_generate, linux_bench = sys.argv[1:7]
results = {"ok": 0, "fail": 0, "skip": 0}


def report(name, ok, detail=""):
    results["ok" if ok else "fail"] += 1
    print(f"ok: {name}{' (' + detail + ')' if detail else ''}" if ok else f"FAIL: {name}: {detail}", flush=True)


def run(cmd, env=None, cwd=None):
    """(status, stdout, stderr) of a program; Windows' line ends read as Linux's."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})}, cwd=cwd)
    return p.returncode, p.stdout.replace("\r\n", "\n"), p.stderr.replace("\r\n", "\n")


# One Wine session for the whole run: a persistent wineserver whose services (winedevice.exe, plugplay.exe,
# rpcss.exe) a first command starts, its output dropped. Otherwise every program checked here starts them
# anew, they inherit its stderr, and a service's own crash (winedevice.exe in ntoskrnl.exe, seen once in CI
# while a hostile model was refused) reads as the program's message.
subprocess.run(["wineserver", "-k"], stderr=subprocess.DEVNULL)  # one left by an earlier run, or by the build
subprocess.run(["wineserver", "-p"], check=True)
atexit.register(subprocess.run, ["wineserver", "-k"], stderr=subprocess.DEVNULL)
subprocess.run(["wine", "cmd", "/c", "exit", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

# The unit suites (no device) under Wine: meson runs them through the cross file's exe_wrapper.
subprocess.run(["meson", "test", "-C", os.path.join(build, "meson"), "--no-rebuild", "--print-errorlogs",
                "--suite", "unit"], stdout=subprocess.DEVNULL)
for line in open(os.path.join(build, "meson", "meson-logs", "testlog.json")):
    r = json.loads(line)
    report(f"unit test {r['name']} under Wine", r["result"] == "OK", r["result"])

unpacked = tempfile.mkdtemp(prefix="gmlp-win-")
with zipfile.ZipFile(zip_path) as z:
    z.extractall(unpacked)
top = os.path.join(unpacked, os.listdir(unpacked)[0])
dll = glob.glob(os.path.join(top, "bin", "libgmlp-*.dll"))[0]


def win(program, *args, env=None, cwd=None):
    return run(["wine", os.path.join(top, "bin", program + ".exe"), *args], env, cwd)


# The DLL exports exactly the API the installed headers declare (tests/test_install.sh's check on Linux).
table = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", dll], capture_output=True, text=True, check=True).stdout
exports = set(re.findall(r"^\s*\[\s*\d+\]\s+(\w+)$", table.split("[Ordinal/Name Pointer] Table")[1], re.M))
headers = "".join(open(h).read() for h in glob.glob(os.path.join(top, "include", "gmlp*.h")))
declared = set(re.findall(r"GMLP_API\b[^;{]*?\b(gmlp_\w+)\s*\(", headers))
report("the DLL exports exactly the headers' GMLP_API functions", exports == declared and len(declared) > 0,
       f"{len(exports)} exports" if exports == declared else
       f"exported, not declared: {sorted(exports - declared)}; declared, not exported: {sorted(declared - exports)}")

# Nothing in the zip names the machine that built it (the source tree, the third-party cache).
paths = [os.path.realpath(src).encode(), os.path.realpath(os.environ["GMLP_MINGW_CACHE"]).encode()]
naming = [os.path.relpath(os.path.join(d, f), top) for d, _, fs in os.walk(top) for f in fs
          if any(p in open(os.path.join(d, f), "rb").read() for p in paths)]
report("no build path in the zip", not naming, ", ".join(naming))

rc, out, err = win("gmlp-classify", "--list-devices")
report("gmlp-classify --list-devices", rc == 0 and out.startswith("0: "),
       out.splitlines()[0] if rc == 0 and out else f"status {rc}: {err.strip()}")

# The bundled model (found beside the programs: share/gmlp-cl/models) on the examples: the same classes in
# the same order as the Linux build's, each probability within 1e-4 of its.
images = sorted(glob.glob(os.path.join(src, "examples", "*.png")))
lin, wine = run([linux_classify, "-q", "-j", *images]), win("gmlp-classify", "-q", "-j", *images)
if lin[0] or wine[0]:
    report("the bundled model's top-5 as on Linux", False, f"status {lin[0]} on Linux, {wine[0]} under Wine: {wine[2]}")
else:
    a, b = json.loads(lin[1]), json.loads(wine[1])
    ra, rb = a["results"], b["results"]
    worst, why = 0.0, ""
    for x, y in zip(ra, rb):
        ca, cb = [(c["index"], c["label"]) for c in x["top"]], [(c["index"], c["label"]) for c in y["top"]]
        if ca != cb:
            why = f"{x['file']}: {ca} on Linux, {cb} under Wine"
        worst = max([worst] + [abs(c["prob"] - d["prob"]) for c, d in zip(x["top"], y["top"])])
    if len(ra) != len(images) or len(rb) != len(images):
        why = f"{len(ra)} results on Linux, {len(rb)} under Wine, for {len(images)} images"
    report(f"the bundled model's top-5 as on Linux ({len(images)} images)", not why and worst <= 1e-4,
           why or f"largest probability difference {worst:.2e}")

# Hostile model files: refused as on Linux, with the same status and message.
image = images[0]
for name in ["header_len_2p63", "header_deep_nesting", "header_len_past_end", "length_mismatch", "dtype_unknown",
             "is_a_directory"]:
    model = os.path.join(src, "tests", "data", "broken", name + ".safetensors")
    lin, wine = run([linux_classify, "-q", "-m", model, image]), win("gmlp-classify", "-q", "-m", model, image)
    same = lin[0] == wine[0] == 1 and lin[2].replace("gmlp-classify", "") == wine[2].replace("gmlp-classify.exe", "").replace("gmlp-classify", "")
    report(f"hostile model {name} refused as on Linux", same,
           f"status {wine[0]}: {wine[2].strip()}" if same else
           f"Linux: status {lin[0]}: {lin[2].strip()}; Wine: status {wine[0]}: {wine[2].strip()}")

# No OpenCL platform at all (the ICD loader's vendors folder empty): the same clear message as on Linux.
with tempfile.TemporaryDirectory() as empty:
    env = {"OCL_ICD_VENDORS": empty}
    lin, wine = run([linux_classify, "-q", image], env), win("gmlp-classify", "-q", image, env=env)
    report("no OpenCL device: the message as on Linux", lin[0] == wine[0] == 1 and lin[2] == wine[2] and
           "no OpenCL" in wine[2], f"status {wine[0]}: {wine[2].strip()}" if lin[2] == wine[2] else
           f"Linux: status {lin[0]}: {lin[2].strip()}; Wine: status {wine[0]}: {wine[2].strip()}")

# gmlp-generate: the bundled language model's seeded text as on Linux.
args = ["--seed", "7", "-n", "48", "Q: "]
lin, wine = run([linux_generate, *args]), win("gmlp-generate", *args)
report("gmlp-generate's seeded text as on Linux", lin[0] == wine[0] == 0 and lin[1] == wine[1] and lin[1] != "",
       repr(wine[1][:60]) if lin[1] == wine[1] else f"Linux: {lin[0]} {lin[1]!r}; Wine: {wine[0]} {wine[1]!r} {wine[2]}")

# --files-from (a list with Windows' line ends) and --output, then --resume over the examples' folder: the
# rows written in binary mode (no \r), the file continued where it ended, the folder's images alone.
with tempfile.TemporaryDirectory() as tmp:
    out, listed = os.path.join(tmp, "out.jsonl"), os.path.join(tmp, "list.txt")
    with open(listed, "wb") as f:
        f.write("".join(path + "\r\n" for path in images[:4]).encode())
    first = win("gmlp-classify", "-q", "--files-from", listed, "-o", out)
    again = win("gmlp-classify", "-q", "-o", out, "--resume", os.path.join(src, "examples"))
    data = open(out, "rb").read()
    files = [r["file"] for r in (json.loads(line) for line in data.decode().split("\n") if line) if "file" in r]
    report("gmlp-classify --files-from, --output, then --resume on a folder",
           first[0] == again[0] == 0 and sorted(files) == images and b"\r" not in data,
           f"{len(files)} rows" if sorted(files) == images else
           f"status {first[0]}, {again[0]}: {first[2].strip()} {again[2].strip()}; rows for {files}")

# --resume after a torn last row (truncated away) with --retry-errors (the file rewritten without its error
# rows, replacing it): the rows and statuses of the Linux build's.
def torn_and_retried(cmd):
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "bad.png"), "w") as f:
            f.write("not an image")
        first = run(cmd + ["-q", "-o", "out.jsonl", images[0], "bad.png"], cwd=tmp)[0]
        with open(os.path.join(tmp, "out.jsonl"), "ab") as f:
            f.write(b'{"file": "' + images[1][:10].encode())
        again = run(cmd + ["-q", "-o", "out.jsonl", "--resume", "--retry-errors", images[0], images[1], "bad.png"],
                    cwd=tmp)
        rows = [jsonl_row(line) for line in open(os.path.join(tmp, "out.jsonl"), "rb").read().decode().split("\n")
                if line]
        return first, again[0], again[2], [(r.get("file"), r.get("error"), [c["index"] for c in r.get("top", [])])
                                           for r in rows if "file" in r]


def jsonl_row(line):
    try:
        return json.loads(line)
    except ValueError:
        return {"file": "(a row that does not parse: " + line + ")"}


lin, wine = torn_and_retried([linux_classify]), torn_and_retried(["wine", os.path.join(top, "bin", "gmlp-classify.exe")])
report("gmlp-classify --resume --retry-errors after a torn row, as on Linux", lin == wine and len(wine[3]) == 3,
       f"{len(wine[3])} rows, one an error" if lin == wine else f"Linux: {lin}; Wine: {wine}")

# --features into .npy, then --resume with one image more (the file truncated to its rows, the shape rewritten
# in place): the same bytes as the Linux build's.
def features_resumed(cmd):
    with tempfile.TemporaryDirectory() as tmp:
        statuses = [run(cmd + ["-q", "--features", "-o", "f.npy", *more], cwd=tmp)[0]
                    for more in (images[:2], ["--resume", *images[:3]])]
        return statuses, open(os.path.join(tmp, "f.npy"), "rb").read(), open(os.path.join(tmp, "f.paths.txt")).read()


lin, wine = features_resumed([linux_classify]), features_resumed(["wine", os.path.join(top, "bin", "gmlp-classify.exe")])
report("gmlp-classify --features into .npy, then --resume: the Linux build's bytes",
       lin == wine and wine[0] == [0, 0], f"{len(wine[1])} bytes" if lin == wine else f"Linux: {lin}; Wine: {wine}")

# gmlp-bench --tiny: the rows of the Linux build's (configurations, batches, device memory), each timed,
# the first results' too (their scratch kernel cache: a temporary folder, made and removed).
with tempfile.TemporaryDirectory() as tmp:
    rows = {}
    for where, cmd in [("Linux", [linux_bench]), ("Wine", ["wine", os.path.join(top, "bin", "gmlp-bench.exe")])]:
        out = os.path.join(tmp, where + ".json")
        rc, _, err = run(cmd + ["--tiny", "-j", out])
        rows[where] = json.load(open(out))["results"] if rc == 0 else err.strip()
    key = ("model", "weights", "gemm", "precision", "batch", "mode", "peak_device_bytes", "weight_bytes")
    same = [[r.get(k) for k in key] for r in rows["Wine"]] == [[r.get(k) for k in key] for r in rows["Linux"]] \
        if isinstance(rows["Wine"], list) and isinstance(rows["Linux"], list) else False
    timed = same and all((r.get("images_per_s") or r.get("tokens_per_s") or 0) > 0 for r in rows["Wine"]) and all(
        r["first_result_cold_s"] > 0 for r in rows["Wine"] if "first_result_cold_s" in r)
    report("gmlp-bench --tiny: the Linux build's rows, each timed", timed,
           f"{len(rows['Wine'])} rows" if timed else f"Linux: {rows['Linux']}; Wine: {rows['Wine']}")

print(f"{results['ok']} passed, {results['fail']} failed, {results['skip']} skipped")
sys.exit(1 if results["fail"] else 0)
