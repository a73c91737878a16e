#!/bin/sh
# gmlp-bench must work (not be fast): the tiny configurations with both weight
# storages and both GEMM backends, every output file (JSON, CSV, markdown,
# SVG) checked for content, the progress lines; --model with an image model
# under a long path (the table keeps its columns) and with a language model
# (its rows with warm-up, runs and spread); --compare against a file in
# bench_torch.py's schema, with --precision fp32,bf16 (rows per precision, each
# against PyTorch's in the same); --profile (per-kernel device time); --tune and
# --gemm auto after it (the full tier); --config; --help, --version, usage errors (exit 2, naming the
# range) and run-time errors (exit 1).  Built without CLBlast (CLBLAST
# false), the runs leave its backend out and --gemm clblast must fail saying so.
#   test_bench.sh GMLP_BENCH TESTS_SOURCE_DIR IMAGE_MODEL LM_MODEL CLBLAST(true|false)
set -u
bench=$1
image_model=$3
lm_model=$4
clblast=$5
if [ "$clblast" = true ]; then gemms=kernel,clblast; else gemms=kernel; fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cli_tmp=$out
. "$2/cli_check.sh"

"$bench" --tiny --runs 2 --batch 1,3 --weights f32,f16 --gemm $gemms --json "$out/r.json" \
    --csv "$out/r.csv" --svg "$out/r.svg" --md "$out/r.md" >"$out/stdout" 2>"$out/stderr"
check $? "--tiny with every weight storage and backend ($gemms)"
python3 - "$out" "$gemms" <<'PY'
import csv, json, re, sys, xml.dom.minidom
d, gemms = sys.argv[1], sys.argv[2].split(",")
rows = json.load(open(d + "/r.json"))["results"]
img = [r for r in rows if "images_per_s" in r]
got = {(r["model"], r["weights"], r["gemm"], r["batch"]) for r in img}
variants = [("f32", g) for g in gemms] + [("f16", "kernel")]
want = {(m, w, g, b) for m in ("gmlp_tiny", "mixer_tiny") for w, g in variants for b in (1, 3)}
assert got == want, f"rows {sorted(got)}"
for r in img:
    assert r["images_per_s"] > 0 and r["tflops"] > 0 and r["sgemm_peak_tflops"] > 0, r
    assert abs(r["images_per_s"] * r["median_s"] - r["batch"]) < 1e-3 * r["batch"] and r["e2e_median_s"] > 0, r
    assert r["first_result_cold_s"] > 0 and r["first_result_s"] > 0, r
    assert r["peak_device_bytes"] >= r["weight_bytes"] > 0, r
lm = [r for r in rows if "tokens_per_s" in r]
assert {r["mode"] for r in lm} == {"full", "cached", "uncached", "generate", "sampled"}, lm
for r in lm:  # the median of --runs, and their spread
    assert r["tokens_per_s"] > 0 and r["seconds"] > 0 and r["spread_s"] >= 0, r
table = list(csv.DictReader(open(d + "/r.csv")))
assert len(table) == len(rows) and all(t["device"] for t in table), len(table)
assert all(t["spread_s"] for t in table), "a CSV row without spread_s"
assert all(bool(t["e2e_median_s"]) == bool(t["images_per_s"]) for t in table), "e2e_median_s in the CSV"
svg = xml.dom.minidom.parse(d + "/r.svg")
lines = 2 * len(variants)  # a polyline per model and variant, a circle per batch size on it
assert len(svg.getElementsByTagName("polyline")) == lines and len(svg.getElementsByTagName("circle")) == 2 * lines
# markdown: an image table and a language-model table, a line per JSON row, every line as many cells as its header
tables = [t.strip().splitlines() for t in open(d + "/r.md").read().split("\n\n")]
assert len(tables) == 2, tables
for t, n in zip(tables, (len(img), len(lm))):
    assert re.fullmatch(r"\|( -+:? \|)+", t[1]), t[1]
    assert len(t) == 2 + n and len({line.count(" | ") for line in t}) == 1, t
assert any(re.search(r"\| gmlp_tiny \| f16 \| kernel \| fp32 \| [^|]+ \| 3 \|", x) for x in tables[0])
assert any(re.search(r"\| gmlp_lm_tiny \| fp32 \| [^|]+ \| 1 \| uncached \|", x) for x in tables[1])
# progress: a line per configuration (2 models x the variants + 1 LM), with the time left from the second on
n = 2 * len(variants) + 1
prog = [l for l in open(d + "/stderr") if re.match(rf"gmlp-bench: \[\d+/{n}\] ", l)]
assert len(prog) == n, prog
assert all(re.search(r": .* so far, about .* left$", l) for l in prog[1:]), prog
print(f"gmlp-bench: {len(img)} image rows, {len(lm)} LM rows; CSV, SVG and markdown consistent; {n} progress lines")
PY
check $? "JSON, CSV, SVG and markdown rows; progress lines"
grep -q "f32 *f16" "$out/stdout"
check $? "the storage comparison table"
if [ "$clblast" = true ]; then
    grep -q "clblast *kernel" "$out/stdout"
    check $? "the backend comparison table"
else
    echo "skip: the backend comparison table (built without CLBlast)"
    expect_exit 1 "--gemm clblast built without CLBlast" "built without CLBlast" "$bench" --tiny --runs 1 --gemm clblast
fi

# PyTorch's rows: one from before the precision modes (fp32), one in bf16 autocast
echo '{"results": [{"model": "gmlp_tiny", "batch": 3, "images_per_s": 100.0},
    {"model": "gmlp_tiny", "batch": 3, "precision": "bf16", "images_per_s": 50.0}]}' >"$out/torch.json"
"$bench" --tiny --runs 1 --warmup 0 --batch 3 --precision fp32,bf16 --compare "$out/torch.json" \
    --json "$out/c.json" --csv "$out/c.csv" --md "$out/c.md" >"$out/cmp" 2>"$out/cmp.err"
check $? "--precision fp32,bf16 --compare"
grep -q "^gmlp_tiny .* fp32 .* 100\.0 " "$out/cmp" && grep -q "^gmlp_tiny .* bf16 .* 50\.0 " "$out/cmp"
check $? "--compare: each precision against PyTorch's in the same"
grep -qE "^device .* fp32 +bf16 +speed" "$out/cmp"; check $? "the precision comparison table"
python3 - "$out" <<'PY'
import csv, json, sys
d = sys.argv[1]
rows = json.load(open(d + "/c.json"))["results"]
img = [r for r in rows if "images_per_s" in r]
assert sorted((r["model"], r["precision"]) for r in img) == [(m, p) for m in ("gmlp_tiny", "mixer_tiny") for p in ("bf16", "fp32")], img
assert {(r["precision"], r["mode"]) for r in rows if "tokens_per_s" in r} == {(p, m) for p in ("fp32", "bf16") for m in ("full", "cached", "uncached", "generate", "sampled")}
assert all(r["engine"] for r in rows), rows
torch = {r["precision"]: r.get("torch_images_per_s") for r in img if r["model"] == "gmlp_tiny"}
assert torch == {"fp32": 100.0, "bf16": 50.0}, torch
table = list(csv.DictReader(open(d + "/c.csv")))
assert [(t["precision"], t["engine"]) for t in table] == [(r["precision"], r["engine"]) for r in rows], table
md = [t.strip().splitlines() for t in open(d + "/c.md").read().split("\n\n")]
assert all("| precision | engine |" in t[0] and len({l.count(" | ") for l in t}) == 1 for t in md), md
assert sum(" | bf16 | " in l for t in md for l in t) == len(rows) // 2, md
PY
check $? "--precision: the rows of each, its engine, in JSON, CSV and markdown"

# --profile: a row per kernel the forward launches (each entry point, the GEMMs' launch count: one per
# linear layer), shares summing to 100%, the text table and the markdown tables
"$bench" --tiny --runs 1 --warmup 0 --batch 2 --gemm $gemms --profile --json "$out/p.json" \
    --md "$out/p.md" >"$out/p" 2>"$out/p.err"
check $? "--profile"
python3 - "$out" "$gemms" <<'PY'
import json, re, sys
d, n_gemms = sys.argv[1], len(sys.argv[2].split(","))
rows = [r for r in json.load(open(d + "/p.json"))["results"] if "images_per_s" in r]
assert len(rows) == 2 * n_gemms and all("profile" in r for r in rows), rows
# gmlp: stem, fc1, spatial, fc2 per block, head; Mixer: stem, 2 token and 2 channel GEMMs per block, head
entries = {"gmlp_tiny": {"gmlp_patchify", "gmlp_mean_tokens"},  # the gate: in the spatial GEMM
           "mixer_tiny": {"gmlp_patchify", "gmlp_mean_tokens"}}
norms = {"gmlp_layernorm", "gmlp_layernorm_rows"}  # GPUs' work-group kernel, CPUs' row per work-item
linear = {"gmlp_tiny": 1 + 3 * 2 + 1, "mixer_tiny": 1 + 4 * 2 + 1}
text = open(d + "/p").read()
for r in rows:
    p = r["profile"]
    names = {k["kernel"] for k in p}
    assert entries[r["model"]] <= names and len(norms & names) == 1, (r["model"], names)
    gemms = [k for k in p if k["gemm"]]
    assert all(k["kernel"].startswith(("gmlp_gemm ", "gmlp_gemm_direct ") if r["gemm"] == "kernel" else "CLBlast") for k in gemms), gemms
    assert sum(k["launches"] for k in gemms) == linear[r["model"]], (r["model"], r["gemm"], gemms)
    assert abs(sum(k["share"] for k in p) - 100) < 1, p
    assert all(k["total_us"] > 0 and abs(k["mean_us"] * k["launches"] - k["total_us"]) < 1e-6 * k["total_us"] for k in p), p
    assert abs(sum(k["total_us"] for k in p) - r["profile_kernel_us"]) < 1e-6 * r["profile_kernel_us"], r
    assert 0 < r["profile_gemm_us"] <= r["profile_kernel_us"] and r["profile_gemm_gflops"] > 0, r
    # every kernel of an image forward says what its operands move, and the forward's total is their sum
    assert all(k["bytes"] > 0 and abs(k["gb_per_s"] - k["bytes"] / k["total_us"] / 1e3) < 1e-6 * k["gb_per_s"]
               for k in p), p
    assert abs(sum(k["bytes"] for k in p) - r["profile_bytes"]) < 1e-9 * r["profile_bytes"], r
    head = f"# profile {r['device']}: {r['model']} f32 {r['gemm']} {r['precision']} batch 2: kernels "
    table = text[text.index(head):].split("\n\n")[0].splitlines()
    assert table[1].split() == ["kernel", "launches", "total", "us", "mean", "us", "share", "MB", "moved", "GB/s"], table
    assert len(table) == 2 + len(p) and table[2].startswith(p[0]["kernel"]), table
md = open(d + "/p.md").read().split("\n\n")
kernel_tables = [t for t in md if t.startswith("| kernel | launches |")]
assert len(kernel_tables) == len(rows) and all(len(t.strip().splitlines()) == 2 + len(r["profile"])
                                       for t, r in zip(kernel_tables, rows)), kernel_tables
print(f"--profile: {len(rows)} rows, kernel sets, GEMM launches, shares, text and markdown tables")
PY
check $? "--profile: kernels, launches, shares; JSON, text and markdown"

# --model: a long path keeps the table's columns, the model named by its file name
long="$out/a-folder-with-a-rather-long-name/and-another-one-below-it"
mkdir -p "$long"
cp "$image_model" "$long/fashion-mnist-gmlp.safetensors"
"$bench" --model "$long/fashion-mnist-gmlp.safetensors" --runs 1 --warmup 0 --batch 2 --json "$out/m.json" \
    >"$out/m" 2>"$out/m.err"
check $? "--model FILE (an image model)"
python3 - "$out/m" "$out/m.json" "$long/fashion-mnist-gmlp.safetensors" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if not l.startswith("#") and l.strip()]
head, row = lines[0], lines[1]
assert row.index("fashion-mnist-gmlp.safetensors ") == head.index("model") and "/" not in row, (head, row)
for col, val in (("wts", "f32"), ("batch", "     2")):
    assert row.index(val) == head.index(col) - (len(val) - len(col) if col == "batch" else 0), (head, row)
assert len(row) == len(head), (len(row), len(head))
r = json.load(open(sys.argv[2]))["results"]
assert len(r) == 1 and r[0]["model"] == sys.argv[3] and r[0]["batch"] == 2, r
PY
check $? "--model under a long path: the file name in the model column, the columns in line"
"$bench" --model "$lm_model" --runs 3 --warmup 1 --json "$out/lm.json" >"$out/lm" 2>"$out/lm.err"
check $? "--model FILE (a language model)"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert [(x["batch"], x["mode"]) for x in r] == [(1, "full"), (8, "full"), (1, "cached"), (1, "uncached"),
                                                  (1, "generate"), (1, "sampled")], r
assert all(x["tokens_per_s"] > 0 and x["spread_s"] >= 0 for x in r), r
' "$out/lm.json"
check $? "--model LM: full, cached, uncached, generate and sampled rows with their spread"

# --tune: in a cache directory of its own (a tuning file in the shared one would change the other tests);
# not in the quick tier (GMLP_TEST_TIER=quick): every tiling's cold build, minutes on PoCL, where the
# tuning suite tunes through the same gmlp_tune
if [ "${GMLP_TEST_TIER:-}" = quick ]; then
    echo "skip: --tune and --gemm auto after it (the quick tier; scripts/test --full runs them)"
else
    GMLP_CACHE_DIR="$out/tune-cache" "$bench" --tune --model "$image_model" --batch 2 >"$out/tune" 2>"$out/tune.err"
    check $? "--tune --model FILE --batch 2"
    grep -q "batch 2: tuned GEMM winners" "$out/tune" && [ "$(grep -cE '^(small|large|narrow|deep) .* [0-9.]+$' "$out/tune")" -ge 1 ] &&
        ls "$out"/tune-cache/*.tune.json >/dev/null && grep -q "tuning .*: 1/" "$out/tune.err"
    check $? "--tune: the winners on stdout, progress on stderr, the tuning file in the cache directory"
    # the rows are timed with the user's cache directory, so its tuning file applies (GMLP_LOG says so);
    # auto (the tuned choice) beside the kernel, half weights on the kernel alone
    GMLP_LOG=info GMLP_CACHE_DIR="$out/tune-cache" "$bench" --model "$image_model" --batch 2 --runs 1 --warmup 0 \
        --weights f32,f16 --gemm auto,kernel --json "$out/auto.json" >"$out/auto" 2>"$out/auto.err"
    check $? "--gemm auto,kernel after --tune"
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert sorted((x["weights"], x["gemm"]) for x in r) == [("f16", "kernel"), ("f32", "auto"), ("f32", "kernel")], r
' "$out/auto.json" && grep -q "GEMM tuning file .*tune-cache.*: used" "$out/auto.err" &&
        grep -qE "^device .* kernel +auto +speed" "$out/auto"
    check $? "--gemm auto: its rows (f32 only), the tuning file used, auto against the kernel"
fi

# --help, --version
check_help "$bench" -d --device -m --model -t --tiny -b --batch -r --runs --warmup -w --weights -g --gemm -j --json \
    -c --csv --md -s --svg -C --compare --profile --tune -h --help --version --precision
for d in "default 1,64" "default 10" "default 3" "default f32" "default kernel" "default: \$GMLP_DEVICE"; do
    grep -q "$d" "$out/help" || { echo "FAIL: --help does not say '$d'"; fail=1; }
done
check_version gmlp-bench "$bench"

# --config: only the named random-weight configurations, an image model and a language model
"$bench" --tiny --config gmlp_lm_tiny,gmlp_tiny --runs 1 --warmup 0 --batch 1 --json "$out/c.json" >/dev/null 2>&1
check $? "--config gmlp_lm_tiny,gmlp_tiny"
python3 -c "import json, sys; r = json.load(open(sys.argv[1]))['results']; \
assert {x['model'] for x in r} == {'gmlp_tiny', 'gmlp_lm_tiny'}, r" "$out/c.json"
check $? "--config: the rows of the two configurations named, no other"
expect_exit 1 "--config nope" "--config: 'nope' is none of the --tiny configurations" "$bench" --tiny --config nope
expect_exit 1 "--config named twice" "--config: 'gmlp_tiny' named twice" "$bench" --tiny --config gmlp_tiny,gmlp_tiny
expect_exit 2 "--config with --model" "--config names random-weight" "$bench" --config gmlp_tiny --model x

# usage errors: exit 2, naming what is valid, before any device is touched
expect_exit 2 "--batch -5" "--batch: expected .* 1 to 65536" "$bench" --batch -5
expect_exit 2 "--batch 0" "--batch: expected .* 1 to 65536" "$bench" --batch 0
expect_exit 2 "--batch 1,x" "--batch: expected" "$bench" --batch 1,x
expect_exit 2 "--batch 1,,2" "--batch: expected" "$bench" --batch 1,,2
expect_exit 2 "17 batch sizes" "up to 16" "$bench" --batch 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17
expect_exit 2 "--runs abc" "--runs: expected an integer from 1 to 100000" "$bench" --runs abc
expect_exit 2 "--runs 0" "--runs: expected an integer from 1 to 100000" "$bench" --runs 0
expect_exit 2 "--warmup -1" "--warmup: expected an integer from 0 to 100000" "$bench" --warmup -1
expect_exit 2 "--gemm cublas" "takes auto, kernel, clblast" "$bench" --gemm cublas
expect_exit 2 "--gemm kernel,kernel" "each once; not 'kernel'" "$bench" --gemm kernel,kernel
expect_exit 2 "--weights f64" "takes f32, f16" "$bench" --weights f64
expect_exit 2 "--precision fp64" "--precision takes fp32, tf32, fp16, bf16 or a comma list" "$bench" --precision fp64
expect_exit 2 "--precision bf16,bf16" "each once; not 'bf16'" "$bench" --precision bf16,bf16
expect_exit 2 "an unknown option" "bogus" "$bench" --bogus
expect_exit 2 "an argument" "unexpected argument 'model.safetensors'" "$bench" model.safetensors
# run-time errors: exit 1, before anything is timed
expect_exit 1 "a missing --model" "cannot read $out/none.safetensors" "$bench" --model "$out/none.safetensors"
printf 'not a model' >"$out/junk.safetensors"
expect_exit 1 "a --model that is no model" "junk.safetensors" "$bench" --model "$out/junk.safetensors"
expect_exit 1 "an unwritable --json" "cannot write $out/no/r.json" "$bench" --tiny --json "$out/no/r.json"
expect_exit 1 "an unwritable --md" "cannot write $out/no/r.md" "$bench" --tiny --md "$out/no/r.md"
expect_exit 1 "a missing --compare file" "cannot read $out/none.json" "$bench" --tiny --compare "$out/none.json"
expect_exit 1 "no such device" "no-such-device" "$bench" --tiny --device no-such-device
# what the failed runs said (a sanitizer's report among it: scripts/test runs a test again whose output
# shows LeakSanitizer's own crash)
if [ "$fail" != 0 ]; then
    for f in "$out/stderr" "$out"/*.err; do
        [ -s "$f" ] && { echo "stderr of the run into ${f##*/}:"; grep -v '^gmlp-bench: \[' "$f" | tail -n 20; }
    done
fi
exit $fail
