#!/bin/bash
# The wgmma splice on real compiler output (issue #53, item 4): clang-15's PTX
# of tests/data/wgmma/probe.cl rewritten to the form NVIDIA's OpenCL writes
# (.version 8.0, .target sm_90, texmode_independent; a sample from a GPU
# replaces it when the GPU window has one), spliced by the library
# (test_wgmma_splice --splice), then ptxas -arch=sm_90a: no spill, and as
# many HGMMA in the SASS (cuobjdump) as mma markers were spliced.  The
# spliced instruction itself is proven only by a GPU's self-test.  Exits 77
# (skip) without clang-15, libclc's nvptx64 library, ptxas or cuobjdump and
# nvdisasm; with CI set their absence fails.
#   test_wgmma_splice.sh TEST_WGMMA_SPLICE PROBE.cl
set -u
splicer=$1 probe=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/nv_tools.sh" # ptxas, nvbin
if ! command -v clang-15 >/dev/null || [ ! -f /usr/lib/clc/nvptx64--nvidiacl.bc ] || [ ! -x "$ptxas" ] ||
    [ -z "$nvbin" ]; then
    echo "SKIP: the wgmma splice's SASS needs clang-15, libclc-15's nvptx64 library, ptxas, cuobjdump and nvdisasm"
    [ -n "${CI:-}" ] && { echo "FAIL: missing under CI (scripts/setup.sh installs them)"; exit 1; }
    exit 77
fi
export PATH="$nvbin:$PATH"
clang-15 -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target nvptx64-nvidia-nvcl -march=sm_80 -O2 -S \
    "$probe" -o "$tmp/clang.ptx" || { echo "FAIL: clang-15 on $probe"; exit 1; }
sed -e 's/^\.version .*/.version 8.0/' -e 's/^\.target .*/.target sm_90, texmode_independent/' \
    "$tmp/clang.ptx" >"$tmp/nvcl.ptx"
grep -q '^\.target sm_90, texmode_independent$' "$tmp/nvcl.ptx" || { echo "FAIL: no .target to rewrite"; exit 1; }
mmas=$("$splicer" --splice "$tmp/nvcl.ptx" "$tmp/spliced.ptx") || { echo "$mmas"; exit 1; }
"$ptxas" -v -arch=sm_90a "$tmp/spliced.ptx" -o "$tmp/k.cubin" >"$tmp/log" 2>&1 || {
    echo "FAIL: ptxas -arch=sm_90a on the spliced PTX"; cat "$tmp/log"; exit 1; }
fail=0
grep -q ' 0 bytes spill stores, 0 bytes spill loads' "$tmp/log" || { fail=1; echo "FAIL: spills:"; cat "$tmp/log"; }
cuobjdump -sass "$tmp/k.cubin" >"$tmp/k.sass" || { echo "FAIL: cuobjdump"; exit 1; }
hgmma=$(grep -c 'HGMMA\.' "$tmp/k.sass")
regs=$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' "$tmp/log")
echo "probe: $mmas mma markers spliced, $hgmma HGMMA in sm_90a's SASS, $regs registers"
[ "$mmas" -ge 1 ] && [ "$hgmma" = "$mmas" ] || { fail=1; echo "FAIL: $mmas markers but $hgmma HGMMA"; }
# the same PTX unspliced: refused, not assembled into a kernel that computes nothing
if "$splicer" --splice "$tmp/spliced.ptx" "$tmp/twice.ptx" >/dev/null; then
    fail=1; echo "FAIL: spliced PTX (no marker left) spliced again"
fi
[ $fail = 0 ] && echo "PASS: the wgmma splice on clang-15's PTX in NVIDIA's OpenCL form"
exit $fail
