#!/bin/sh
# Builds the libFuzzer targets with clang-15 (+ ASan/UBSan) and fuzzes each
# for SECONDS (default 20) from a seed corpus of the valid and broken test
# files.  A crash leaves its input in the work folder and fails the run: copy
# it to tests/data/fuzz-regressions/ (test_safetensors replays that folder).
#   tests/fuzz/run.sh [SECONDS [WORKDIR]]      e.g. tests/fuzz/run.sh 3600
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-20}
work=${2:-$(mktemp -d)}
command -v clang-15 >/dev/null || { echo "SKIP: clang-15 is not installed"; exit 77; }
mkdir -p "$work/corpus"
cp "$root"/tests/data/e2e/*.safetensors "$root"/tests/data/lm/*.safetensors "$root"/tests/data/broken/*.safetensors \
    "$work/corpus/" 2>/dev/null || true
cp "$root"/tests/data/fuzz-regressions/* "$work/corpus/" 2>/dev/null || true
# the shared program's sources, then the one built alone (as cl_kernels/meson.build lists them)
python3 "$root/cl_kernels/embed.py" "$work/cl_sources.c" $(ls "$root"/cl_kernels/*.cl | grep -v '/gemm\.cl$') \
    --solo "$root/cl_kernels/gemm.cl"
cflags="-g -O1 -std=c11 -D_GNU_SOURCE -DCL_TARGET_OPENCL_VERSION=120 -DGMLP_BUILDING_LIBRARY -DGMLP_VERSION_STRING=\"fuzz\"
        -I$root/include -I$root/lib -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
parser="$root/lib/format/safetensors.c $root/lib/model/config.c $root/lib/model/lm_config.c $root/lib/model/tensors.c
        $root/lib/core/error.c $root/lib/core/half.c"
# shellcheck disable=SC2086
clang-15 $cflags "$root/tests/fuzz/fuzz_safetensors.c" $parser -ljansson -lm -o "$work/fuzz_safetensors"
# shellcheck disable=SC2086
clang-15 $cflags "$root/tests/fuzz/fuzz_model_load.c" $(find "$root/lib" -name '*.c') "$work/cl_sources.c" \
    -lOpenCL -lclblast -ljansson -lm -lpthread -o "$work/fuzz_model_load"
export ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$root/tests/lsan.supp
# Intel's ICD cannot be loaded under ASan (RTLD_DEEPBIND); fuzz on PoCL
[ -f /etc/OpenCL/vendors/pocl.icd ] && export OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd
cd "$work"
for t in fuzz_safetensors fuzz_model_load; do
    mkdir -p "out_$t"
    "./$t" -max_total_time="$secs" -max_len=65536 -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
        "out_$t" corpus >"$t.log" 2>&1 || { tail -n 40 "$t.log"; echo "FAIL: $t crashed; input kept in $work"; exit 1; }
    grep -E "stat::number_of_executed_units|cov:" "$t.log" | tail -n 2
    echo "$t: no crash in ${secs}s"
done
