#!/bin/sh
# gmlp-classify's batch path (a folder to JSON lines) with the N-th host
# allocation of the library failing ($GMLP_TEST_ALLOC_FAIL, a build with
# -Dalloc_fail=true), for N = 1, 2, ... until a run completes: each run exits
# 1 with a message (on stderr, or an image's error row), or 0 with the rows
# of a run without failure; any other
# status is a crash or, under ASan (its status set apart here), a leak.  The
# count includes the program's own jansson allocations (jansson's allocator
# is the process's).
#   test_alloc_fail_apps.sh GMLP_CLASSIFY MODEL IMAGE...
set -u
app=$1
model=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/in"
cp "$@" "$tmp/in/"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:exitcode=86"
run() { GMLP_TEST_ALLOC_FAIL=$1 "$app" -q -m "$model" -o "$tmp/out.jsonl" "$tmp/in" 2>"$tmp/err"; }

rm -f "$tmp/out.jsonl"
GMLP_TEST_ALLOC_FAIL= "$app" -q -m "$model" -o "$tmp/want.jsonl" "$tmp/in" || { echo "FAIL: the run without failure"; exit 1; }
fail=0 refused=0 memory=0 fell_back=0 n=1
while :; do
    rm -f "$tmp/out.jsonl" "$tmp/out.jsonl.gmlp-run.json"
    run "$n"
    st=$?
    grep -q "^gmlp-alloc-fail:" "$tmp/err" || { echo "FAIL: no count: is the library built with -Dalloc_fail=true?"; exit 1; }
    grep -q "never came" "$tmp/err" && break
    touch "$tmp/out.jsonl"
    if [ "$st" = 1 ] && grep -q '^gmlp-classify: \|"error": ' "$tmp/err" "$tmp/out.jsonl"; then
        refused=$((refused + 1))
        ! grep -q memory "$tmp/err" "$tmp/out.jsonl" || memory=$((memory + 1))
    elif [ "$st" = 0 ] && cmp -s "$tmp/out.jsonl" "$tmp/want.jsonl"; then
        fell_back=$((fell_back + 1))
    else
        echo "FAIL: allocation $n failing: exit $st"
        { cat "$tmp/err"; [ "$st" != 0 ] || diff "$tmp/out.jsonl" "$tmp/want.jsonl"; } | sed 's/^/    /' | head -n 20
        fail=1
    fi
    n=$((n + 1))
done
[ "$st" = 0 ] && cmp -s "$tmp/out.jsonl" "$tmp/want.jsonl" || { echo "FAIL: the last run (no failure) differs"; fail=1; }
echo "gmlp-classify, batch path: $((n - 1)) allocations reached, each failed in turn: $refused exit 1 with a message" \
    "($memory of them saying memory), $fell_back fallbacks"
exit $fail
