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

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'not an image' >"$tmp/junk.png"
head -c 100 "$(ls "$examples"/*.png | head -n 1)" >"$tmp/truncated.png"
"$app" "$tmp/junk.png" "$tmp/truncated.png" "$examples"/*.png >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ]; check $? "exit code 1 when an image fails"
grep -q "junk.png: error:" "$tmp/err"; check $? "junk file reported by name"
grep -q "truncated.png: error:" "$tmp/err"; check $? "truncated file reported by name"
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
