#!/bin/sh
# The kernels under Oclgrind's simulator with its data-race and API checks
# (not --uninitialized: it fails on LLVM's freeze): each GEMM variant once
# on one awkward shape per transpose case and the CPUs' direct blocks in
# bands of a few block rows (test_gemm --oclgrind), then,
# where the apps are built, one whole forward of the bundled image model on
# one image and the bundled language model on a prompt and four decoding
# steps (every element-wise kernel, the GEMMs as the model calls them), and
# further image models on the same image: a gMLPVision with heads and a tiny
# attention, a ResMLP (its Affine kernel, the rank-1 GEMM); the bundled image
# model again with its LayerNorms fused (GMLP_FUSE=1).
# Fails on any report in Oclgrind's log (race, out-of-bounds access, API
# error).  Exits 77 (skip) without oclgrind.
#   test_oclgrind.sh TEST_GEMM [GMLP_CLASSIFY IMAGE_MODEL IMAGE GMLP_GENERATE LM [MORE_IMAGE_MODELS...]]
set -u
command -v oclgrind >/dev/null || { echo "SKIP: oclgrind is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# runs "$@" under Oclgrind; a non-zero exit or any log line fails
simulated() {
    rm -f "$tmp/log"
    oclgrind --data-races --check-api --log "$tmp/log" "$@"
    rc=$?
    if [ -s "$tmp/log" ]; then
        echo "FAIL: Oclgrind reported on $*:"
        head -c 20000 "$tmp/log"
        fail=1
    elif [ $rc != 0 ]; then
        echo "FAIL: $* (exit $rc)"
        fail=1
    else
        echo "ok: $* under Oclgrind, no report"
    fi
}
simulated "$1" --oclgrind
[ $# -ge 6 ] || exit $fail
classify=$2 bundled=$3 image=$4
simulated "$classify" -m "$3" "$image"
simulated "$5" -m "$6" -n 4 -s 1 "The "
shift 6
for model in "$@"; do
    simulated "$classify" -m "$model" "$image"
done
# the bundled image model with its LayerNorms fused into the products that read them
GMLP_FUSE=1 simulated "$classify" -m "$bundled" "$image"
exit $fail
