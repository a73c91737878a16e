#!/bin/sh
# gmlp-classify under mpirun (-Dmpi=enabled): 2 and 3 ranks give the output of
# one process (--features too, and --eval's report); a --resume run continues a partial output; a rank whose every
# device fails stops the job with a message naming the rank, and a --resume
# rerun completes it.  Skips (77) where gmlp-classify was built without MPI,
# except with CI=true, where that is a failure.
set -u
app=$1
src=$2
mpi=$3 # "true" when gmlp-classify was built with MPI
fail=0
check() { if [ "$1" = 0 ]; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi; }
if [ "$mpi" != true ] || ! command -v mpirun >/dev/null; then
    echo "gmlp-classify built without MPI (-Dmpi=enabled) or no mpirun"
    [ "${CI:-}" = true ] && { echo "FAIL: CI=true needs the MPI suite to run (scripts/test configures -Dmpi=enabled)"; exit 1; }
    exit 77
fi
run() { # run N ARGS...: mpirun with N ranks (as root in CI: --allow-run-as-root)
    n=$1
    shift
    root=""
    [ "$(id -u)" = 0 ] && root=--allow-run-as-root
    mpirun $root --oversubscribe -n "$n" "$app" "$@"
}
bc() { python3 "$src/batch_check.py" "$@"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/in"
for i in 0 1 2 3 4 5 6; do
    for f in "$src"/../examples/*.png; do cp "$f" "$tmp/in/$i-$(basename "$f")"; done
done
echo broken >"$tmp/in/3-broken.png"
ls "$tmp"/in/*.png >"$tmp/want"

"$app" -q -b 4 -o "$tmp/one.jsonl" "$tmp/in"
[ $? = 1 ]; check $? "one process (exit 1: a broken image)"
run 2 -q -b 4 -o "$tmp/two.jsonl" "$tmp/in"
[ $? != 0 ]; check $? "mpirun -n 2: non-zero exit (the broken image)"
bc "$tmp/two.jsonl" --files "$tmp/want" --errors broken --same-as "$tmp/one.jsonl"; check $? "mpirun -n 2: the one-process rows"
run 3 -q -b 3 -k 2 -o "$tmp/three.csv" "$tmp/in"
bc "$tmp/three.csv" --top 2 --files "$tmp/want" --errors broken --same-as "$tmp/one.jsonl"
check $? "mpirun -n 3, CSV: the one-process rows"

# --features: the ranks send their features with their results; rank 0 writes the one-process file
"$app" -q -b 4 --features -o "$tmp/one.npy" "$tmp/in" 2>/dev/null
run 3 -q -b 4 --features -o "$tmp/three.npy" "$tmp/in" 2>/dev/null
cmp -s "$tmp/three.npy" "$tmp/one.npy" && cmp -s "$tmp/three.paths.txt" "$tmp/one.paths.txt"
check $? "mpirun -n 3 --features: the one-process .npy and paths"

# --files-from -: mpirun gives stdin to rank 0, which enumerates
ls "$tmp"/in/*.png | run 2 -q -b 5 --files-from - -o "$tmp/list.jsonl"
bc "$tmp/list.jsonl" --files "$tmp/want" --errors broken --same-as "$tmp/one.jsonl"; check $? "mpirun -n 2 --files-from -"

# --resume: rank 0 reads the partial output and hands out the rest
head -n 20 "$tmp/one.jsonl" >"$tmp/part.jsonl"
cp "$tmp/one.jsonl.gmlp-run.json" "$tmp/part.jsonl.gmlp-run.json"
run 2 -q -b 4 --resume -o "$tmp/part.jsonl" "$tmp/in"
cmp -s "$tmp/part.jsonl" "$tmp/one.jsonl"; check $? "mpirun -n 2 --resume: the one-process file"

# --precision reaches every rank: the one-process bf16 rows, the mode and each rank's engine in --json
"$app" -q -j --precision bf16 "$src"/../examples/*.png >"$tmp/one-bf16.json"
run 3 -q -j --precision bf16 "$src"/../examples/*.png >"$tmp/mpi-bf16.json"
python3 - "$tmp/one-bf16.json" "$tmp/mpi-bf16.json" <<'PY'
import json, sys
one, mpi = (json.load(open(p)) for p in sys.argv[1:3])
assert one["precision"] == mpi["precision"] == "bf16", (one["precision"], mpi["precision"])
assert "rank 1: " + one["engine"] in mpi["engine"] and "rank 2: " in mpi["engine"], mpi["engine"]
assert mpi["results"] == one["results"]
PY
check $? "mpirun -n 3 --precision bf16: the one-process results, the mode and the ranks' engines"

# --eval: the ranks' typed results reach rank 0's report: the one-process figures (the examples in 3 classes)
for i in 0 1 2 3 4 5 6; do
    mkdir -p "$tmp/tree/class$((i % 3))"
    cp "$tmp/in/$i-"*.png "$tmp/tree/class$((i % 3))/"
done
"$app" -q -b 4 --eval -j "$tmp/tree" >"$tmp/one-eval.json" 2>/dev/null
run 3 -q -b 4 --eval -j "$tmp/tree" >"$tmp/mpi-eval.json" 2>/dev/null
python3 - "$tmp/one-eval.json" "$tmp/mpi-eval.json" <<'PY'
import json, sys
one, mpi = (json.load(open(p)) for p in sys.argv[1:3])
keys = ("images", "failed", "top1", "top5", "classes", "confusion")
assert one["images"] > 0 and one["failed"] == 1, (one["images"], one["failed"])
assert [one[k] for k in keys] == [mpi[k] for k in keys], [(one[k], mpi[k]) for k in keys]
PY
check $? "mpirun -n 3 --eval: the one-process report"

# a failing rank stops the job, naming it; --resume completes
GMLP_TEST_FAIL=0:3 run 2 -q -b 4 -t 1 -o "$tmp/failed.jsonl" "$tmp/in" 2>"$tmp/err"
[ $? != 0 ]; check $? "a failing rank: non-zero exit"
grep -q "rank 1 failed" "$tmp/err"; check $? "the message names the rank"
[ "$(wc -l <"$tmp/failed.jsonl")" -lt "$(wc -l <"$tmp/want")" ]; check $? "the job stopped early"
run 2 -q -b 4 --resume -o "$tmp/failed.jsonl" "$tmp/in"
bc "$tmp/failed.jsonl" --files "$tmp/want" --errors broken --same-as "$tmp/one.jsonl"; check $? "--resume after the failed rank"
exit $fail
