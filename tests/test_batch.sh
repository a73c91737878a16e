#!/bin/sh
# gmlp-classify's batch path: folders (nested, non-image files, a dotfile, a
# broken image, a name with a comma and a quote), --files-from -, JSONL and
# CSV read back and checked (batch_check.py), refusing an existing output,
# a model that does not load (no output is left behind to refuse the next run), --resume after a kill and
# after SIGINT/SIGTERM, --features to .npy, JSON lines and CSV (the same floats; --resume after a kill and from
# a cut file), two devices and an injected device failure giving the one-device rows.
set -u
app=$1
src=$2
check_py="$src/batch_check.py"
examples="$src/../examples"
fail=0
check() { if [ "$1" = 0 ]; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi; }
bc() { python3 "$check_py" "$@"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
in=$tmp/in
mkdir -p "$in/nested/deeper" "$in/.hidden-folder"
cp "$examples/bag-18.png" "$examples/coat-6.png" "$in/"
cp "$examples/dress-13.png" "$in/nested/B.PNG"
cp "$examples/sandal-8.png" "$in/nested/deeper/a.png"
cp "$examples/shirt-4.png" "$in/odd, \"name\".png"
cp "$examples/sneaker-9.png" "$in/.dotfile.png"
cp "$examples/trouser-2.png" "$in/.hidden-folder/x.png"
echo "not an image" >"$in/notes.txt"
echo "not an image either" >"$in/broken.png"
ln -s "$in/nested" "$in/zlink" # a symlinked folder: not followed

# a model that does not load: exit 1, and no output is left behind to refuse the next run
"$app" -q -m "$tmp/missing.safetensors" -o "$tmp/nomodel.jsonl" "$in" 2>/dev/null
[ $? = 1 ] && [ ! -e "$tmp/nomodel.jsonl" ] && [ ! -e "$tmp/nomodel.jsonl.gmlp-run.json" ]
check $? "a model that does not load: exit 1, no output file left"

# the expected order: given order, folder entries sorted bytewise, -r in place
cat >"$tmp/want-r" <<EOF2
$in/bag-18.png
$in/broken.png
$in/coat-6.png
$in/nested/B.PNG
$in/nested/deeper/a.png
$in/odd, "name".png
EOF2
grep -v nested "$tmp/want-r" >"$tmp/want"

"$app" -r --bench -o "$tmp/r.jsonl" "$in" 2>"$tmp/err"
[ $? = 1 ]; check $? "a folder with a broken image exits 1"
cat "$tmp/err"
bc "$tmp/r.jsonl" --files "$tmp/want-r" --errors broken; check $? "-r: the images of the nested folders, in order, JSONL"
# skipped: notes.txt, .dotfile.png and .hidden-folder (the symlinked folder is not followed, not counted)
grep -q "6 images, 1 errors, 3 skipped files" "$tmp/err"; check $? "the summary counts the errors and the skipped files"
grep -qE "6 images, 1 errors, 3 skipped files .*\); before them: OpenCL context [0-9]+\.[0-9]{3} s, model load [0-9]+\.[0-9]{3} s$" \
    "$tmp/err"
check $? "the summary ends with the start-up's split (context, model load)"
"$app" -q -o "$tmp/top.jsonl" "$in"
bc "$tmp/top.jsonl" --files "$tmp/want" --errors broken; check $? "without -r: the folder's own images"
"$app" -q -r -o "$tmp/r.csv" "$in"
bc "$tmp/r.csv" --files "$tmp/want-r" --errors broken --same-as "$tmp/r.jsonl"
check $? "CSV: the same rows as JSONL (RFC 4180 quoting read back by Python's csv)"
grep -q '^"'"$in"'/odd, ""name"".png",1,' "$tmp/r.csv"; check $? "CSV: the odd name quoted"
grep -q '^'"$in"'/broken.png,0,,,,' "$tmp/r.csv"; check $? "CSV: the error row"
"$app" -q -r -o - --format csv "$in" >"$tmp/stdout.csv"
cmp -s "$tmp/stdout.csv" "$tmp/r.csv"; check $? "--output - --format csv gives the file's bytes"

# on a terminal: an updating progress line, then the summary; -q silences both
python3 - "$app" "$in" <<'PY'
import os, pty, subprocess, sys
def stderr_on_a_tty(*args):
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.argv[1], *args], stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait()
    return out.decode(errors="replace")
err = stderr_on_a_tty("-r", "-b", "1", "-o", "-", sys.argv[2])
assert "\r6/6 images" in err and " images/s  elapsed 0:" in err and "ETA " in err, err
assert "6 images, 1 errors, 3 skipped files" in err, err
assert stderr_on_a_tty("-q", "-r", "-o", "-", sys.argv[2]) == "", "-q"
PY
check $? "a terminal gets the progress line (done/total, images/s, elapsed, ETA) and the summary; -q none"

# --files-from -: a folder, files, a repeat and an image named explicitly without an image extension
cp "$examples/pullover-1.png" "$tmp/pullover.data"
printf '%s\n%s\n%s\n%s\n\n%s\n' "$in/odd, \"name\".png" "$in/nested" "$tmp/pullover.data" "$in/coat-6.png" \
    "$in/odd, \"name\".png" | "$app" -q --files-from - -o "$tmp/list.jsonl"
check $? "--files-from -"
printf '%s\n%s\n%s\n%s\n' "$in/odd, \"name\".png" "$in/nested/B.PNG" "$tmp/pullover.data" "$in/coat-6.png" \
    >"$tmp/want-list"
bc "$tmp/list.jsonl" --files "$tmp/want-list"; check $? "--files-from: given order, a repeat once, explicit files tried"

# an existing output is refused, untouched
cp "$tmp/r.jsonl" "$tmp/r.before"
"$app" -q -r -o "$tmp/r.jsonl" "$in" 2>"$tmp/err"
[ $? = 2 ]; check $? "an existing output: exit 2"
cmp -s "$tmp/r.jsonl" "$tmp/r.before"; check $? "an existing output is not overwritten"
grep -q "resume" "$tmp/err"; check $? "the refusal names --resume"

# --resume after a kill: every image exactly once, the rows of a clean run
python3 - "$tmp/many" <<'PY'
import os, random, struct, sys, zlib
os.makedirs(sys.argv[1])
chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
r = random.Random(1)
for i in range(400):
    raw = b"".join(b"\0" + bytes(r.randrange(256) for _ in range(28)) for _ in range(28))
    open(f"{sys.argv[1]}/img{i:03d}.png", "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(
        b"IHDR", struct.pack(">IIBBBBB", 28, 28, 8, 0, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
PY
ls "$tmp"/many/*.png >"$tmp/want-many"
"$app" -q -b 4 -o "$tmp/clean.csv" "$tmp/many"
check $? "400 generated images (enough that a kill lands mid-run however fast the device)"
"$app" -q -b 4 -o "$tmp/clean.jsonl" "$tmp/many"
# waits until the output holds at least $2 lines (at most 60 s)
wait_lines() { i=0; while [ "$(cat "$1" 2>/dev/null | wc -l)" -lt "$2" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; }
for fmt in csv jsonl; do
    "$app" -q -b 1 -t 1 -o "$tmp/killed.$fmt" "$tmp/many" &
    pid=$!
    wait_lines "$tmp/killed.$fmt" 2 # the first image's row: killed within a tenth of a second of it
    kill -9 $pid
    wait $pid 2>/dev/null
    n=$(wc -l <"$tmp/killed.$fmt") full=$(wc -l <"$tmp/clean.$fmt")
    [ "$n" -lt "$full" ]; check $? "$fmt: killed mid-run ($n of $full lines written)"
    "$app" -q -b 4 --resume -o "$tmp/killed.$fmt" "$tmp/many"
    check $? "$fmt: --resume completes the run"
    bc "$tmp/killed.$fmt" --files "$tmp/want-many" --same-as "$tmp/clean.csv"
    check $? "$fmt: after the kill and --resume, every image once, as in a clean run"
done
# a torn last line (cut mid-write) is cut off and written again
for fmt in csv jsonl; do
    head -c 1000 "$tmp/clean.$fmt" >"$tmp/torn.$fmt"
    cp "$tmp/clean.$fmt.gmlp-run.json" "$tmp/torn.$fmt.gmlp-run.json"
    "$app" -q --resume -o "$tmp/torn.$fmt" "$tmp/many"
    cmp -s "$tmp/torn.$fmt" "$tmp/clean.$fmt"; check $? "$fmt: a torn last row is rewritten"
done
# SIGINT and SIGTERM: the finished rows are flushed, the run says so and exits 1
for sig in INT TERM; do
    "$app" -b 1 -t 1 -o "$tmp/sig$sig.jsonl" "$tmp/many" 2>"$tmp/err" &
    pid=$!
    wait_lines "$tmp/sig$sig.jsonl" 2
    kill -$sig $pid
    wait $pid
    [ $? = 1 ]; check $? "SIG$sig: exit 1"
    grep -q "interrupted" "$tmp/err"; check $? "SIG$sig: says it was interrupted"
    tail -c 1 "$tmp/sig$sig.jsonl" | od -c | grep -q '\\n'; check $? "SIG$sig: the output ends with a whole row"
    "$app" -q --resume -o "$tmp/sig$sig.jsonl" "$tmp/many"
    bc "$tmp/sig$sig.jsonl" --files "$tmp/want-many" --same-as "$tmp/clean.csv"; check $? "SIG$sig then --resume: every image once"
done

# --features: each image's pooled features to .npy (+ OUT.paths.txt), JSON lines and CSV, the same float32s in
# each (features_check.py reads them back); the rows of a failed image: none in .npy, an error row in the others
fc() { python3 "$src/features_check.py" "$@"; }
for fmt in npy jsonl csv; do
    "$app" -q -b 4 --features -o "$tmp/f.$fmt" "$tmp/many"; check $? "--features -o f.$fmt"
done
fc "$tmp/f.npy" --files "$tmp/want-many" --dim 128 --same-as "$tmp/f.jsonl" "$tmp/f.csv"
check $? "--features: .npy, .jsonl and .csv hold the same float32s, every image once, in order"
for fmt in npy csv; do
    "$app" -q -r --features -o "$tmp/fr.$fmt" "$in" 2>"$tmp/err.$fmt"
    [ $? = 1 ] && fc "$tmp/fr.$fmt" --files "$tmp/want-r" --errors broken --same-as "$tmp/fr.npy"
    check $? "--features .$fmt, a broken image: exit 1, $([ $fmt = npy ] && echo 'no row' || echo 'its error row')"
done
grep -q "broken.png: error: " "$tmp/err.npy"; check $? "--features .npy: the broken image named on stderr"
# interrupted (a kill after the first rows, or a file cut mid-row) and --resume: every image once, the same floats
rows_of() { if [ "${1%.npy}" != "$1" ]; then cat "${1%.npy}.paths.txt"; else tail -n +2 "$1"; fi 2>/dev/null | wc -l; }
for fmt in npy jsonl csv; do
    "$app" -q -b 1 -t 1 --features -o "$tmp/fk.$fmt" "$tmp/many" &
    pid=$!
    i=0; while [ "$(rows_of "$tmp/fk.$fmt")" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 $pid
    wait $pid 2>/dev/null
    n=$(rows_of "$tmp/fk.$fmt")
    "$app" -q -b 4 --features --resume -o "$tmp/fk.$fmt" "$tmp/many"
    [ $? = 0 ] && fc "$tmp/fk.$fmt" --files "$tmp/want-many" --same-as "$tmp/f.npy"
    check $? "--features .$fmt: killed after $n of 400 rows, --resume: every image once, the clean run's floats"
    head -c 30000 "$tmp/f.$fmt" >"$tmp/ft.$fmt"
    cp "$tmp/f.$fmt.gmlp-run.json" "$tmp/ft.$fmt.gmlp-run.json"
    [ $fmt = npy ] && head -c 3000 "$tmp/f.paths.txt" >"$tmp/ft.paths.txt" # cut mid-line, at another row
    "$app" -q --features --resume -o "$tmp/ft.$fmt" "$tmp/many"
    cmp -s "$tmp/ft.$fmt" "$tmp/f.$fmt"; check $? "--features .$fmt: cut mid-row, --resume: the clean run's bytes"
done
cmp -s "$tmp/ft.paths.txt" "$tmp/f.paths.txt"; check $? "--features .npy: the paths cut mid-line made whole"
for fmt in npy csv; do # a file that is not one it wrote (a short one too): refused, untouched
    printf 'not ours' >"$tmp/no.$fmt"
    cp "$tmp/f.$fmt.gmlp-run.json" "$tmp/no.$fmt.gmlp-run.json"
    "$app" -q --features --resume -o "$tmp/no.$fmt" "$tmp/many" 2>"$tmp/err"
    [ $? = 1 ] && grep -q "does not start with gmlp-classify's" "$tmp/err" && [ "$(cat "$tmp/no.$fmt")" = "not ours" ]
    check $? "--features .$fmt: --resume of a file it did not write: refused, the file untouched"
done
# a model without a classifier head: its features; classes refused, naming --features
"$app" -q --features -m "$src/data/e2e/gmlp_headless.safetensors" -o "$tmp/h.npy" "$examples"/*.png &&
    fc "$tmp/h.npy" --dim 12; check $? "--features on a headless model"
"$app" -q -m "$src/data/e2e/gmlp_headless.safetensors" "$examples/bag-18.png" 2>"$tmp/err"
[ $? = 1 ] && grep -q "no classifier head.*--features" "$tmp/err"; check $? "a headless model without --features: exit 1, naming --features"
for bad in "-k 3 --features -o $tmp/x.jsonl:--top with --features" "-o $tmp/x.npy:that one holds features: --features" \
    "--features -o - --format npy:npy needs an --output file" "--features --resume -o $tmp/r.jsonl:holds classes, not features"; do
    # shellcheck disable=SC2086
    "$app" -q ${bad%%:*} "$in" 2>"$tmp/err"
    [ $? = 2 ] && grep -q -- "${bad#*:}" "$tmp/err"; check $? "usage error: ${bad%%:*} (exit 2, '${bad#*:}')"
done

# --resume with another --top or model is refused; error rows are kept unless --retry-errors
"$app" -q -k 3 --resume -o "$tmp/r.jsonl" "$in" 2>"$tmp/err"
[ $? = 2 ] && grep -q -- "--top 5, not 3" "$tmp/err"; check $? "--resume with another --top: exit 2"
"$app" -q -m "$src/data/e2e/gmlp_gray_f16.safetensors" --resume -o "$tmp/r.jsonl" "$in" 2>"$tmp/err"
[ $? = 2 ] && grep -q "with the model" "$tmp/err"; check $? "--resume with another model: exit 2"
GMLP_PRECISION=bf16 "$app" -q --resume -o "$tmp/r.jsonl" "$in" 2>"$tmp/err"
[ $? = 2 ] && grep -q "in precision fp32, not bf16" "$tmp/err"; check $? "--resume in another precision (\$GMLP_PRECISION): exit 2"
cp "$examples/ankle_boot-0.png" "$in/broken.png"
"$app" -q -r --resume -o "$tmp/r.jsonl" "$in"
check $? "--resume: nothing left to do"
bc "$tmp/r.jsonl" --files "$tmp/want-r" --errors broken; check $? "--resume keeps the error row"
"$app" -q -r --resume --retry-errors -o "$tmp/r.jsonl" "$in"
check $? "--resume --retry-errors"
bc "$tmp/r.jsonl" --files "$tmp/want-r" --any-order; check $? "--retry-errors: the image classified, once"

# two devices, and a device failing mid-run: the one-device rows
export POCL_DEVICES="pthread basic"
if [ "$("$app" --list-devices 2>/dev/null | grep -c '^[0-9]*: ')" -ge 2 ]; then
    "$app" -q -d 0 -b 3 -o "$tmp/one.jsonl" "$tmp/many"
    "$app" -q -d all -b 3 -o "$tmp/two.jsonl" "$tmp/many"
    check $? "--device all"
    bc "$tmp/two.jsonl" --files "$tmp/want-many" --same-as "$tmp/one.jsonl"; check $? "two devices: the one-device rows"
    "$app" -q -d 0,1 -b 3 -t 2 -o "$tmp/two.csv" "$tmp/many"
    bc "$tmp/two.csv" --same-as "$tmp/one.jsonl"; check $? "--device 0,1 --threads 2: the one-device rows"
    GMLP_TEST_FAIL=1:2 "$app" -q -d all -b 3 -o "$tmp/failed.jsonl" "$tmp/many" 2>"$tmp/err"
    check $? "a device failing mid-run: exit 0 (its batch re-queued)"
    grep -q "device 1 (.*) failed: injected failure" "$tmp/err"; check $? "the failure is reported"
    bc "$tmp/failed.jsonl" --files "$tmp/want-many" --same-as "$tmp/one.jsonl"; check $? "the failure: every image once"
    GMLP_TEST_FAIL=0:3 "$app" -q -d 0 -b 3 -t 1 -o "$tmp/dead.jsonl" "$tmp/many" 2>"$tmp/err"
    [ $? = 1 ] && grep -q "no device is left" "$tmp/err"; check $? "every device failed: exit 1"
    [ "$(wc -l <"$tmp/dead.jsonl")" = 6 ]; check $? "every device failed: the rows before stay"
    "$app" -q -d 0,0 "$in/coat-6.png" 2>/dev/null
    [ $? = 2 ]; check $? "a device named twice: exit 2"
    "$app" -q -d 0,basic "$in/coat-6.png" 2>"$tmp/err"
    [ $? = 2 ] && grep -q twice "$tmp/err"; check $? "a device named twice by index and name: exit 2"
else
    echo "skip: two devices (POCL_DEVICES=\"pthread basic\" gives fewer)"
fi
exit $fail
