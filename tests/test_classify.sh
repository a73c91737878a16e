#!/bin/sh
# gmlp-classify end to end with the bundled model: every example image is
# classified as the class its file name says; a bad file is reported by
# name, the others still classified, and the exit code is 1; --json parses.
set -u
app=$1
src=$2
examples="$src/../examples"
fail=0
check() { if [ "$1" = 0 ]; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi; }

out=$("$app" -k 1 "$examples"/*.png)
check $? "classify the examples"
echo "$out"
for f in "$examples"/*.png; do
    want=$(basename "$f" .png | sed 's/-[0-9]*$//')
    got=$(echo "$out" | grep -A1 "^$f\$" | tail -n 1 | sed 's/^ *[0-9.]*% *#* *//' | tr 'A-Z/ -' 'a-z___')
    [ "$got" = "$want" ]; check $? "$(basename "$f"): $got"
done

# weights stored as half: the same class for every example
out16=$("$app" -k 1 --fp16 "$examples"/*.png)
check $? "classify the examples with --fp16"
[ "$(echo "$out16" | sed 's/^ *[0-9.]*% *#* *//')" = "$(echo "$out" | sed 's/^ *[0-9.]*% *#* *//')" ]
check $? "--fp16 gives the same top class for every example"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'not an image' >"$tmp/junk.png"
head -c 100 "$(ls "$examples"/*.png | head -n 1)" >"$tmp/truncated.png"
: >"$tmp/empty.png"
head -c 2000 "$src/data/preprocess/rgb_photo.jpg" >"$tmp/cut.jpg"
# valid PNG headers declaring 100000 x 100000 and 0 x 7 pixels: refused before decoding
python3 - "$tmp" <<'PY'
import struct, sys, zlib
chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
for name, w, h in (("huge", 100000, 100000), ("zero", 0, 7)):
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    open(f"{sys.argv[1]}/{name}.png", "wb").write(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)))
PY
"$app" "$tmp/junk.png" "$tmp/truncated.png" "$tmp/empty.png" "$tmp/huge.png" "$tmp/zero.png" "$tmp/missing.png" \
    "$tmp/cut.jpg" \
    "$examples"/*.png >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ]; check $? "exit code 1 when an image fails"
cat "$tmp/err"
for bad in junk truncated empty huge zero missing; do
    grep -q "$bad.png: error:" "$tmp/err"; check $? "$bad image reported by name"
done
grep -q "cut.jpg: error:" "$tmp/err"; check $? "truncated JPEG reported by name"
grep -q "huge.png: error: image dimensions" "$tmp/err"; check $? "huge image refused before decoding"
[ "$(grep -c '%' "$tmp/out")" -ge 10 ]; check $? "the other images are still classified"

"$app" --json "$examples"/*.png >"$tmp/json"
check $? "--json runs"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['results']) >= 10 and d['results'][0]['top'][0]['label']" "$tmp/json"
check $? "--json output parses"

"$app" --img-size 32 "$examples"/*.png >/dev/null 2>&1
[ $? = 1 ]; check $? "--img-size that does not fit the model is refused"
"$app" >/dev/null 2>&1
[ $? = 2 ]; check $? "usage error exits 2"
"$app" --list-devices | grep -q "^0: "; check $? "--list-devices"
exit $fail
