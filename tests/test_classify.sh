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
# damaged JPEGs, each refused as PIL refuses it (the scan cap is ours: PIL would decode those 600 scans)
python3 - "$src/data/preprocess" "$tmp" <<'PY'
import sys
src, tmp = sys.argv[1:]
base = open(f"{src}/rgb_photo.jpg", "rb").read()
prog = open(f"{src}/rgb_422_progressive.jpg", "rb").read()
open(f"{tmp}/cut_progressive.jpg", "wb").write(prog[:len(prog) * 2 // 3])
open(f"{tmp}/no_eoi.jpg", "wb").write(base[:-2])  # only the end marker missing
open(f"{tmp}/bad_marker.jpg", "wb").write(base[:-2] + b"\xff\x1c\x00\x02\xff\xd9")  # after the last row
last = prog.rindex(b"\xff\xda")  # the last scan, repeated 600 times
open(f"{tmp}/scans.jpg", "wb").write(prog[:-2] + prog[last:-2] * 600 + b"\xff\xd9")
# uncompressed formats stb_image would complete with zeros, where PIL refuses them: whole and cut short
import struct
w, h = 32, 20  # BMP rows of 96 bytes: no padding, so the last byte is a pixel
px = bytes((x * 7 + y * 13 + c * 50) % 256 for y in range(h) for x in range(w) for c in range(3))
ppm = b"P6\n%d %d\n255\n" % (w, h) + px
tga = struct.pack("<BBBHHBHHHHBB", 0, 0, 2, 0, 0, 0, 0, 0, w, h, 24, 0) + px
row = (3 * w + 3) // 4 * 4
bmp_px = b"".join(px[3 * w * y:3 * w * (y + 1)] + b"\0" * (row - 3 * w) for y in range(h))
bmp = b"BM" + struct.pack("<IHHIIiiHHIIiiII", 54 + len(bmp_px), 0, 0, 54, 40, w, h, 1, 24, 0, len(bmp_px),
                          2835, 2835, 0, 0) + bmp_px
for ext, data in (("ppm", ppm), ("tga", tga), ("bmp", bmp)):
    open(f"{tmp}/whole.{ext}", "wb").write(data)
    open(f"{tmp}/short.{ext}", "wb").write(data[:-1])
# Netpbm as PIL reads it (apps/pnm.c): 16-bit and plain files classified, what PIL refuses refused
open(f"{tmp}/pnm16.ppm", "wb").write(b"P6\n%d %d\n65535\n" % (w, h) + bytes(b * 2 % 256 for b in px) * 2)
open(f"{tmp}/plain.pgm", "wb").write(b"P2 # plain\n3 2 7\n0 1 2\n3 4 7\n")
# WebP through libwebp: a cut one refused as PIL refuses it
webp = open(f"{src}/rgb_lossy.webp", "rb").read()
open(f"{tmp}/cut.webp", "wb").write(webp[:len(webp) // 2])
for name, data in (("bad_value.pgm", b"P2\n2 1\n255\n1 abc\n"), ("bad_bit.pbm", b"P1\n2 1\n0 x\n"),
                   ("no_space.ppm", b"P6#\n1 1\n255\n\0\0\0"), ("maxval0.pgm", b"P5\n1 1\n0\n\0")):
    open(f"{tmp}/{name}", "wb").write(data)
PY
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
    "$tmp/cut.jpg" "$tmp/cut_progressive.jpg" "$tmp/no_eoi.jpg" "$tmp/bad_marker.jpg" "$tmp/scans.jpg" \
    "$tmp"/whole.* "$tmp"/short.* "$tmp"/pnm16.ppm "$tmp"/plain.pgm "$tmp"/bad_value.pgm "$tmp"/bad_bit.pbm \
    "$tmp"/no_space.ppm "$tmp"/maxval0.pgm "$tmp"/cut.webp "$src"/data/preprocess/rgba_lossless.webp \
    "$examples"/*.png >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ]; check $? "exit code 1 when an image fails"
cat "$tmp/err"
for bad in junk truncated empty huge zero missing; do
    grep -q "$bad.png: error:" "$tmp/err"; check $? "$bad image reported by name"
done
grep -q "cut.jpg: error:" "$tmp/err"; check $? "truncated JPEG reported by name"
for bad in cut_progressive no_eoi; do
    grep -q "$bad.jpg: error: JPEG: the file is truncated" "$tmp/err"; check $? "$bad.jpg refused as truncated"
done
grep -q "bad_marker.jpg: error: JPEG: Unsupported marker type 0x1c" "$tmp/err"; check $? "a bad marker after the last row"
grep -q "scans.jpg: error: JPEG: more than 500 progressive scans" "$tmp/err"; check $? "600 progressive scans refused"
for ext in ppm tga bmp; do
    grep -q "short.$ext: error: the file is truncated" "$tmp/err"; check $? "a $ext one byte short refused as truncated"
    grep -q "^$tmp/whole.$ext\$" "$tmp/out" && ! grep -q "whole.$ext: error" "$tmp/err"; check $? "the whole $ext classified"
done
for ok in "$tmp"/pnm16.ppm "$tmp"/plain.pgm "$src"/data/preprocess/rgba_lossless.webp; do
    grep -q "^$ok\$" "$tmp/out" && ! grep -q "$ok: error" "$tmp/err"; check $? "$(basename "$ok") classified"
done
grep -q "cut.webp: error: WebP: the file is damaged or truncated" "$tmp/err"; check $? "a cut WebP refused"
grep -q "bad_value.pgm: error: PNM: value abc is not a number" "$tmp/err"; check $? "a plain value that is no number"
grep -q "bad_bit.pbm: error: PNM: 'x' is no pixel" "$tmp/err"; check $? "a plain bitmap's bad pixel"
grep -q "no_space.ppm: error: PNM: no whitespace after the magic number P6" "$tmp/err"; check $? "a magic number without whitespace"
grep -q "maxval0.pgm: error: PNM: maxval 0 is not in" "$tmp/err"; check $? "maxval 0 refused"
grep -q "huge.png: error: image dimensions" "$tmp/err"; check $? "huge image refused before decoding"
[ "$(grep -c '%' "$tmp/out")" -ge 10 ]; check $? "the other images are still classified"

# what the image fuzz target found (tests/data/fuzz-regressions/images): each refused by name, no crash
"$app" -q "$src"/data/fuzz-regressions/images/*.img >/dev/null 2>"$tmp/err"
[ $? = 1 ]; check $? "the fuzz regressions: exit code 1"
for f in "$src"/data/fuzz-regressions/images/*.img; do
    grep -q "^$f: error: [ -~]*[A-Za-z]" "$tmp/err"; check $? "$(basename "$f") refused with a printable reason"
done
grep -q "ff_run_then_d8.img: error: JPEG: Not a JPEG file" "$tmp/err"; check $? "stb never decodes a JPEG"

"$app" --json "$examples"/*.png >"$tmp/json"
check $? "--json runs"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['results']) >= 10 and d['results'][0]['top'][0]['label']" "$tmp/json"
check $? "--json output parses"

# --precision reaches the library: the JSON names the mode and its engine; bf16 moves the
# probabilities a little and keeps every top class; GMLP_PRECISION is the default, --precision wins
for p in fp32 tf32 fp16 bf16; do
    "$app" -j --precision $p "$examples"/*.png >"$tmp/$p.json"; check $? "--precision $p runs"
done
GMLP_PRECISION=bf16 "$app" -j "$examples"/*.png >"$tmp/env-bf16.json"
GMLP_PRECISION=bf16 "$app" -j --precision fp16 "$examples"/*.png >"$tmp/env-fp16.json"
python3 - "$tmp" <<'PY'
import json, sys
run = {p: json.load(open(f"{sys.argv[1]}/{p}.json")) for p in ("fp32", "tf32", "fp16", "bf16", "env-bf16", "env-fp16")}
run["json"] = json.load(open(f"{sys.argv[1]}/json"))  # the run without --precision, above
for p in ("fp32", "tf32", "fp16", "bf16"):
    assert run[p]["precision"] == p and run[p]["engine"], (p, run[p]["precision"], run[p]["engine"])
assert run["json"]["precision"] == "fp32" and run["json"]["results"] == run["fp32"]["results"]
assert run["env-bf16"]["precision"] == "bf16" and run["env-fp16"]["precision"] == "fp16"
top = lambda p: [r["top"][0] for r in run[p]["results"]]
assert [t["index"] for t in top("bf16")] == [t["index"] for t in top("fp32")]
diff = max(abs(a["prob"] - b["prob"]) for a, b in zip(top("bf16"), top("fp32")))
assert 0 < diff < 0.02, diff
PY
check $? "--precision: the mode and engine in the JSON, bf16 a little off fp32, \$GMLP_PRECISION the default"
GMLP_PRECISION=bogus "$app" "$examples/bag-18.png" >/dev/null 2>"$tmp/err"
[ $? = 1 ] && grep -q "GMLP_PRECISION=bogus: expected fp32, tf32, fp16 or bf16" "$tmp/err"
check $? "GMLP_PRECISION=bogus: exit 1, the valid modes named"

"$app" --img-size 32 "$examples"/*.png >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q -- "--img-size: .*49 tokens" "$tmp/err"; check $? "--img-size that does not fit the model: exit 2"
"$app" >/dev/null 2>&1
[ $? = 2 ]; check $? "usage error exits 2"

# --help: exit 0, every option with its default
"$app" --help >"$tmp/help"
check $? "--help exits 0"
for o in model labels top device batch threads recursive files-from output format resume retry-errors json features quiet \
    fp16 precision bench list-devices img-size mean std crop-pct interpolation version help; do
    grep -q -- "--$o\b" "$tmp/help"; check $? "--help lists --$o"
done
[ "$(grep -c "default" "$tmp/help")" -ge 14 ]; check $? "--help gives the defaults"
# --version: two lines, exit 0
"$app" --version >"$tmp/version"
check $? "--version exits 0"
head -n 1 "$tmp/version" | grep -q "^gmlp-classify [0-9][0-9.]*$" && sed -n 2p "$tmp/version" | grep -q "^libgmlp [0-9.]*, [0-9]* OpenCL platform"
check $? "--version: program and library versions"
# usage errors: exit 2 naming the valid range; run-time errors: 1
usage_error() { # usage_error TEXT ARGS...: exit 2 and TEXT on stderr
    want=$1
    shift
    "$app" "$@" >/dev/null 2>"$tmp/err"
    [ $? = 2 ] && grep -q -- "$want" "$tmp/err"; check $? "usage error: $* (exit 2, '$want')"
}
one="$examples/bag-18.png"
usage_error "1..1048576" -k 0 "$one"
usage_error "1..4096" -b 5000 "$one"
usage_error "1..256" --threads abc "$one"
usage_error "(0, 4]" --crop-pct 5 "$one"
usage_error "bicubic, bilinear, nearest, box, hamming or lanczos" --interpolation cubic "$one"
usage_error "positive" --std 0 "$one"
usage_error "1 or 3" --mean 1,2 "$one"
usage_error "jsonl or csv" -o - --format xml "$one"
usage_error "invalid value 'fp64' for --precision: expected fp32, tf32, fp16 or bf16" --precision fp64 "$one"
usage_error "invalid value 'auto' for --precision" --precision auto "$one"
usage_error ".jsonl or .csv" -o "$tmp/out.txt" "$one"
usage_error "without --output" --resume "$one"
usage_error "--json and --output" --json -o - "$one"
usage_error "unrecognized" --no-such-option "$one"
usage_error "10 classes" --labels /dev/null "$one"
"$app" -m "$tmp/missing.safetensors" "$one" >/dev/null 2>&1
[ $? = 1 ]; check $? "a missing model: exit 1"
"$app" -m "$src/../models/fortunes-gmlp-lm.safetensors" "$one" >/dev/null 2>"$tmp/err"
[ $? = 1 ] && grep -q "a language model (use gmlp-generate)" "$tmp/err"; check $? "an LM: 'a language model (use gmlp-generate)'"

# probabilities: %.2f%% in text, the shortest float32 round trip (%.9g) in JSON
"$app" "$one" | grep -Eq "^ +[0-9]+\.[0-9]{2}%  "; check $? "text: %.2f%%"
python3 - "$tmp/json" <<'PY'
import re, struct, sys
for tok in re.findall(r'"prob": ([^,}\s]+)', open(sys.argv[1]).read()):
    f = struct.unpack("f", struct.pack("f", float(tok)))[0]
    assert "%.9g" % f == tok and len(re.sub(r"[-.]|e.*|^0\.0*", "", tok)) <= 9, tok
PY
check $? "JSON: probabilities as %.9g of a float32"

# preprocessing overrides go through gmlp_model_override and change the result
"$app" -j "$one" >"$tmp/base.json"
for o in "--mean 0.4" "--std 0.3" "--crop-pct 0.8"; do
    # shellcheck disable=SC2086
    "$app" -j $o "$one" >"$tmp/o.json"
    check $? "$o accepted"
    ! cmp -s "$tmp/o.json" "$tmp/base.json"; check $? "$o changes the probabilities"
done
# a 28 px image is not resized at crop_pct 1: the interpolation shows once it is (the model's is bilinear)
"$app" -j --crop-pct 0.8 "$one" >"$tmp/base.json"
for f in bicubic nearest box hamming lanczos; do
    "$app" -j --crop-pct 0.8 --interpolation $f "$one" >"$tmp/o.json"
    ! cmp -s "$tmp/o.json" "$tmp/base.json"; check $? "--interpolation $f changes the probabilities"
done
"$app" -j "$one" >"$tmp/base.json"
"$app" -j --img-size 28,28 "$one" >"$tmp/o.json"
cmp -s "$tmp/o.json" "$tmp/base.json"; check $? "--img-size equal to the model's: the same result"
seq 0 9 | sed 's/^/label /' >"$tmp/labels"
"$app" -k 1 --labels "$tmp/labels" "$one" | grep -q "label 8$"; check $? "--labels names the classes"
# a model without preprocessing metadata: one note naming the defaults applied (none for the bundled model)
"$app" "$one" 2>"$tmp/err" >/dev/null
! grep -q "note:" "$tmp/err"; check $? "the bundled model (gmlp.* metadata): no note"
"$app" -m "$src/data/e2e/gmlp_rgb.safetensors" "$one" "$examples/coat-6.png" 2>"$tmp/err" >/dev/null
[ "$(grep -c . "$tmp/err")" = 1 ] && grep -q "note: .* no preprocessing metadata .*mean 0.5,0.5,0.5, std 0.5,0.5,0.5, crop_pct 0.875.*interpolation bicubic" "$tmp/err"
check $? "no metadata: one line naming the defaults"
"$app" -m "$src/data/e2e/gmlp_rgb.safetensors" --mean 0.4 -q "$one" 2>"$tmp/err" >/dev/null
[ ! -s "$tmp/err" ]; check $? "-q silences the note"
"$app" -m "$src/data/e2e/gmlp_rgb.safetensors" --mean 0.4 "$one" 2>"$tmp/err" >/dev/null
grep -q "note:" "$tmp/err" && ! grep -q "mean" "$tmp/err"; check $? "the note leaves out what --mean gave"
# model folders as timm's save_for_hf writes them: the CLI gives timm's probabilities and labels
for ref in "$src"/data/hf/*.ref.json; do
    dir=${ref%.ref.json}
    name=$(basename "$dir")
    "$app" --model "$dir" --top 3 --output - --format jsonl "$src"/data/hf/images/*.png >"$tmp/hf.jsonl" 2>"$tmp/hf.err"
    [ $? = 0 ] && python3 - "$ref" "$dir/config.json" "$tmp/hf.jsonl" <<'PY'
import json, math, os, sys
ref, cfg, rows = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), [json.loads(l) for l in open(sys.argv[3])]
labels = cfg.get("label_names") or cfg.get("pretrained_cfg", {}).get("label_names")
want = {os.path.basename(p): lg for p, lg in zip(ref["inputs"], ref["logits"])}
assert len(rows) == len(want), rows
for r in rows:
    lg = want[os.path.basename(r["file"])]
    e = [math.exp(v - max(lg)) for v in lg]
    p = [v / sum(e) for v in e]
    for t in r["top"]:
        assert abs(t["prob"] - p[t["index"]]) <= 1e-4 * p[t["index"]], (r, p)
        if "conflict" not in sys.argv[1]:  # there the file's gmlp.labels win (checked below)
            assert t["label"] == (labels[t["index"]] if labels else f"class {t['index']}"), (t, labels)
    assert [t["index"] for t in r["top"]] == sorted(range(len(p)), key=lambda i: (-p[i], i))[:len(r["top"])]
PY
    check $? "model folder $name: timm's probabilities (1e-4) and labels"
done
# $GMLP_MODEL names a folder as --model does (and --model wins over it)
"$app" --model "$src/data/hf/mixer_miil" -j "$src"/data/hf/images/*.png >"$tmp/flag.json" 2>/dev/null &&
    GMLP_MODEL="$src/data/hf/mixer_miil" "$app" -j "$src"/data/hf/images/*.png >"$tmp/env.json" 2>/dev/null &&
    cmp -s "$tmp/flag.json" "$tmp/env.json" &&
    GMLP_MODEL="$src/data/hf/mixer_miil" "$app" --model "$src/data/hf/gmlp_squash" -j "$src"/data/hf/images/*.png >"$tmp/both.json" 2>/dev/null &&
    grep -q '"model": ".*/gmlp_squash"' "$tmp/both.json"
check $? "\$GMLP_MODEL=FOLDER: the same results as --model FOLDER; --model wins over it"
"$app" --model "$src/data/hf/gmlp_conflict" "$one" 2>"$tmp/err" >/dev/null
grep -q "warning: .*gmlp.mean '0.5,0.4,0.3' (used) and config.json pretrained_cfg.mean '0.485,0.456,0.406' differ" "$tmp/err" &&
    grep -q "warning: .*gmlp.labels (used) and config.json label_names differ" "$tmp/err"
check $? "gmlp.* metadata and config.json disagree: said on stderr"
"$app" --model "$src/data/hf/gmlp_squash" "$one" 2>"$tmp/err" >/dev/null
! grep -q "warning\|note" "$tmp/err"; check $? "a folder whose config.json agrees: no warning, no note"
"$app" --model "$src/data/hf/bin_only" "$one" 2>"$tmp/err" >/dev/null
[ $? = 1 ] && grep -q "export_vision.py" "$tmp/err"; check $? "a folder with only pytorch_model.bin: pointed to export_vision.py"
"$app" --model "$examples/coat-6.png" "$one" 2>"$tmp/err" >/dev/null
[ $? = 1 ] && grep -q "not a safetensors file" "$tmp/err"; check $? "a PNG as the model: not a safetensors file"
"$app" --list-devices | grep -q "^0: "; check $? "--list-devices"
exit $fail
