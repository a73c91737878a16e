#!/bin/sh
# The GEMM kernels under Oclgrind's simulator with its data-race and API
# checks (not --uninitialized: it fails on LLVM's freeze): each variant once
# on one awkward shape per transpose case (test_gemm --oclgrind).  Fails on
# any report in Oclgrind's log (race, out-of-bounds access, API error).
# Exits 77 (skip) without oclgrind.
#   test_oclgrind.sh TEST_GEMM
set -u
command -v oclgrind >/dev/null || { echo "SKIP: oclgrind is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
oclgrind --data-races --check-api --log "$tmp/log" "$1" --oclgrind
rc=$?
if [ -s "$tmp/log" ]; then
    echo "FAIL: Oclgrind reported:"
    head -c 20000 "$tmp/log"
    exit 1
fi
exit $rc
