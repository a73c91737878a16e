#!/bin/sh
# gmlp-bench must work (not be fast): the tiny configurations with both weight
# storages and both GEMM backends, every output file checked for content;
# --compare against a file in bench_torch.py's schema; a bad option refused.
#   test_bench.sh GMLP_BENCH
set -eu
bench=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bench" --tiny --runs 2 --batch 1,3 --weights f32,f16 --gemm kernel,clblast --json "$out/r.json" \
    --csv "$out/r.csv" --svg "$out/r.svg" >"$out/stdout"
python3 - "$out" <<'PY'
import csv, json, sys, xml.dom.minidom
d = sys.argv[1]
rows = json.load(open(d + "/r.json"))["results"]
img = [r for r in rows if "images_per_s" in r]
got = {(r["model"], r["weights"], r["gemm"], r["batch"]) for r in img}
want = {(m, w, g, b) for m in ("gmlp_tiny", "mixer_tiny") for w, g in (("f32", "kernel"), ("f32", "clblast"),
        ("f16", "kernel")) for b in (1, 3)}
assert got == want, f"rows {sorted(got)}"
for r in img:
    assert r["images_per_s"] > 0 and r["tflops"] > 0 and r["sgemm_peak_tflops"] > 0, r
    assert r["first_result_cold_s"] > 0 and r["first_result_s"] > 0, r
    assert r["peak_device_bytes"] >= r["weight_bytes"] > 0, r
lm = [r for r in rows if "tokens_per_s" in r]
assert {r["mode"] for r in lm} == {"full", "cached", "uncached"}, lm
table = list(csv.DictReader(open(d + "/r.csv")))
assert len(table) == len(rows) and all(t["device"] for t in table), len(table)
svg = xml.dom.minidom.parse(d + "/r.svg")
assert len(svg.getElementsByTagName("polyline")) == 6 and len(svg.getElementsByTagName("circle")) == 12
print(f"gmlp-bench: {len(img)} image rows, {len(lm)} LM rows, CSV and SVG consistent")
PY
grep -q "clblast *kernel" "$out/stdout" && grep -q "f32 *f16" "$out/stdout" ||
    { echo "FAIL: no backend or storage comparison table"; cat "$out/stdout"; exit 1; }
echo '{"results": [{"model": "gmlp_tiny", "batch": 3, "images_per_s": 100.0}]}' >"$out/torch.json"
"$bench" --tiny --runs 1 --batch 3 --compare "$out/torch.json" >"$out/cmp"
grep -q "^gmlp_tiny .* 100\.0 " "$out/cmp" || { echo "FAIL: --compare"; cat "$out/cmp"; exit 1; }
if "$bench" --gemm cublas 2>"$out/err"; then
    echo "FAIL: --gemm cublas accepted"
    exit 1
fi
grep -q "takes kernel, clblast" "$out/err"
echo "bench test passed"
