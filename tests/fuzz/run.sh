#!/bin/sh
# Builds the libFuzzer targets with meson (clang-15, -Dfuzzing=enabled, ASan +
# UBSan) and fuzzes each for SECONDS (default 20) from a seed corpus of the
# valid and broken test files (config.json's target: the model folders' and
# the broken configs; the image decoder's: the test images), with the
# allocation-failure hook that the gmlp_model_load_memory target arms.  A
# crash leaves its input in the work folder and fails the run: copy it to
# tests/data/fuzz-regressions/ with a line in its manifest (test_safetensors
# replays that folder).
# Only the named targets run when TARGETS says so (e.g. TARGETS="fuzz_server_json").
#   tests/fuzz/run.sh [SECONDS [WORKDIR]]      e.g. tests/fuzz/run.sh 3600
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-20}
# GMLP_TEST_TIER=quick (scripts/test's default tier): 5 s a target, each still built and fuzzed from its seeds
[ "${GMLP_TEST_TIER:-}" != quick ] || secs=5
work=${2:-$(mktemp -d)}
command -v clang-15 >/dev/null || { echo "SKIP: clang-15 is not installed"; exit 77; }
mkdir -p "$work/corpus"
cp "$root"/tests/data/e2e/*.safetensors "$root"/tests/data/lm/*.safetensors "$root"/tests/data/broken/*.safetensors \
    "$work/corpus/" 2>/dev/null || true
cp "$root"/tests/data/fuzz-regressions/*.bin "$work/corpus/" 2>/dev/null || true
if [ ! -f "$work/build/build.ninja" ]; then
    CC=clang-15 meson setup "$work/build" "$root" -Dfuzzing=enabled -Dalloc_fail=true -Dtests=false -Dapps=false \
        -Dbench=false -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debugoptimized >"$work/setup.log" 2>&1 ||
        { tail -n 30 "$work/setup.log"; echo "FAIL: meson setup of the fuzz build"; exit 1; }
fi
ninja -C "$work/build" >"$work/build.log" 2>&1 || { tail -n 30 "$work/build.log"; echo "FAIL: fuzz build"; exit 1; }
export ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$root/tests/lsan.supp UBSAN_OPTIONS=halt_on_error=1
# Intel's ICD cannot be loaded under ASan (RTLD_DEEPBIND); fuzz on PoCL
[ -f /etc/OpenCL/vendors/pocl.icd ] && export OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd
cd "$work"
# config.json's target starts from the folders' configs and the broken ones
mkdir -p "$work/corpus_config"
for f in "$root"/tests/data/hf/*/config.json; do cp "$f" "$work/corpus_config/$(basename "$(dirname "$f")").json"; done
cp "$root"/tests/data/broken/config/*.json "$work/corpus_config/"
# the tuning-file target starts from tests/data/tune (valid and invalid files for its made-up device)
mkdir -p "$work/corpus_tune"
cp "$root"/tests/data/tune/*.json "$work/corpus_tune/"
# the image target from the test images (PNG, JPEG baseline, progressive, grey, CMYK, Netpbm) and the examples
mkdir -p "$work/corpus_image"
cp "$root"/tests/data/preprocess/*.png "$root"/tests/data/preprocess/*.jpg "$root"/tests/data/preprocess/*.p?m \
    "$root"/tests/data/preprocess/*.webp "$root"/tests/data/preprocess/*.gif \
    "$root"/examples/*.png \
    "$root"/tests/data/fuzz-regressions/images/*.img "$work/corpus_image/"
# gmlp-server's request parsing (headers, multipart, JSON bodies) from tests/data/fuzz-server, made from
# test_server.py's hostile lists; a crash's input goes there too, as a regression seed (test_server_parse)
for d in head multipart json; do
    mkdir -p "$work/corpus_server_$d"
    cp "$root"/tests/data/fuzz-server/$d/* "$work/corpus_server_$d/"
done
# one target: its run, then its report (a crash: the log's tail)
fuzz() {
    t=$1 seeds=corpus
    mkdir -p "out_$t"
    [ "$t" = fuzz_config_json ] && seeds=corpus_config
    [ "$t" = fuzz_tune_file ] && seeds=corpus_tune
    [ "$t" = fuzz_image ] && seeds=corpus_image
    case $t in fuzz_server_*) seeds=corpus_server_${t#fuzz_server_} ;; esac
    if "build/tests/fuzz/$t" -max_total_time="$secs" -max_len=65536 -timeout=30 -rss_limit_mb=4096 \
        -print_final_stats=1 "out_$t" "$seeds" >"$t.log" 2>&1; then
        echo "$t: no crash in ${secs}s" >"$t.result"
    else
        tail -n 40 "$t.log" >"$t.result"
        echo "FAIL: $t crashed; input kept in $work" >>"$t.result"
    fi
}
# the targets side by side, as many at a time as there are cores (meson runs nothing else beside this test)
targets=""
for t in ${TARGETS:-fuzz_safetensors fuzz_model_load fuzz_config_json fuzz_tune_file fuzz_image fuzz_server_head \
    fuzz_server_multipart fuzz_server_json}; do
    if [ -x "build/tests/fuzz/$t" ]; then targets="$targets $t"; else echo "$t: not built (libmicrohttpd not found)"; fi
done
cores=$(nproc 2>/dev/null || echo 1)
running=0
for t in $targets; do
    fuzz "$t" &
    running=$((running + 1))
    [ "$running" -lt "$cores" ] || { wait; running=0; }
done
wait
rc=0
for t in $targets; do
    grep -E "stat::number_of_executed_units|cov:" "$t.log" | tail -n 2
    cat "$t.result"
    grep -q "^FAIL" "$t.result" && rc=1
done
exit $rc
