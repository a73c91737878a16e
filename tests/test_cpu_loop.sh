#!/bin/bash
# The CPUs' 16-wide NN block in PoCL's machine code (issue #61): each form of
# it (test_gemm --cpu-loop: fp32, BF16 on B's pairs, BF16 on B's rows) built
# in a PoCL cache of its own, checked against the reference, then its k loop
# read from the kernel's object (objdump; tests/asm_loop.py: of the innermost
# loops holding the instruction, the fewest instructions for each) and bounded
# in instructions per FMA (vfmadd231ps, vdpbf16ps).  The bounds leave room
# for other PoCL and LLVM versions above what PoCL 3.1 makes here (bench/
# NOTES.md, "The direct kernel's k loop on its own": 2.0, 2.0, 5.9); inside
# the generic loop the fp32 one once took 108 for 12 FMAs (9.0 each),
# 3.4x slower forwards that no test saw.  Exits 77 (skip) where no form
# runs: not PoCL, an AVX2 host, no objdump.
#   test_cpu_loop.sh TEST_GEMM
set -u
test_gemm=$1
here=$(dirname "$0")
command -v objdump >/dev/null || { echo "SKIP: no objdump"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 ran=0
# form, instruction, bound on instructions per instruction
for row in "fp32 vfmadd231ps 3.0" "pairs vdpbf16ps 3.0" "rows vdpbf16ps 8.0"; do
    read -r form op bound <<<"$row"
    mkdir "$tmp/$form"
    POCL_CACHE_DIR=$tmp/$form "$test_gemm" --cpu-loop "$form" >"$tmp/$form.log" 2>&1
    rc=$?
    [ $rc = 77 ] && { echo "$form: $(tail -1 "$tmp/$form.log")"; continue; }
    [ $rc = 0 ] || { fail=1; echo "FAIL: test_gemm --cpu-loop $form:"; cat "$tmp/$form.log"; continue; }
    ran=$((ran + 1))
    # every GEMM program PoCL built in that process (the capability ladder's self-test's too): the best loop
    best=
    for so in $(find "$tmp/$form" -path '*gmlp_gemm_direct*' -name '*.so'); do
        objdump -d --no-show-raw-insn "$so" >"$tmp/k.objdump" || { fail=1; echo "FAIL: objdump $so"; continue; }
        read -r ins n per <<<"$(python3 "$here/asm_loop.py" "$tmp/k.objdump" "$op")"
        [ "$per" = none ] && continue
        [ -z "$best" ] || awk -v a="$per" -v b="${best##* }" 'BEGIN { exit !(a < b) }' && best="$ins $n $per"
    done
    [ -n "$best" ] || { fail=1; echo "FAIL: $form: no loop of $op in PoCL's objects"; continue; }
    read -r ins n per <<<"$best"
    echo "$form: the k loop $ins instructions for $n $op, $per each (bound $bound)"
    awk -v a="$per" -v b="$bound" 'BEGIN { exit !(a <= b) }' || {
        fail=1; echo "FAIL: $form: $per instructions per $op over its bound $bound"; }
done
[ $ran = 0 ] && [ $fail = 0 ] && { echo "SKIP: no form of the block for this device"; exit 77; }
exit $fail
