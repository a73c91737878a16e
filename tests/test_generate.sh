#!/bin/sh
# gmlp-generate end to end on the LM fixtures (tests/data/lm): byte-level
# prompts, seeds, greedy decoding, --json, --logits against the float64
# references, --stop, token-id models, bidirectional models, the sliding
# window past seq_len and its warning, the prompt from -p, -f and stdin,
# random seeds, --help and --version, and bad options (exit 2: usage, 1:
# runtime); the bundled LM for its 128-token window.
#   test_generate.sh GMLP_GENERATE TESTS_SOURCE_DIR BUNDLED_LM
set -u
app=$1
lm="$2/data/lm"
bundled=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cli_tmp=$tmp
. "$2/cli_check.sh"
gen() { "$app" -q "$@"; }

byte="$lm/causal.safetensors" # vocab 256 = bytes, seq_len 12
ids="$lm/kitchen_sink.safetensors" # vocab 67, causal, seq_len 16
bidir="$lm/bidir.safetensors" # vocab 61, seq_len 12

# --- byte-level prompts --------------------------------------------------------
gen -m "$byte" -n 16 "Hello" >"$tmp/a"
check $? "generate from a prompt"
[ "$(head -c 5 "$tmp/a")" = "Hello" ] && [ "$(wc -c <"$tmp/a")" -eq 22 ]
check $? "the output is the prompt, 16 bytes and a newline"

gen -m "$byte" -n 24 -s 7 "Hello" >"$tmp/s7a"
gen -m "$byte" -n 24 -s 7 "Hello" >"$tmp/s7b"
gen -m "$byte" -n 24 -s 8 "Hello" >"$tmp/s8"
cmp -s "$tmp/s7a" "$tmp/s7b"; check $? "the same seed gives the same text"
! cmp -s "$tmp/s7a" "$tmp/s8"; check $? "another seed gives another text"

gen -m "$byte" -n 24 --temp 0 -s 1 "Hello" >"$tmp/g1"
gen -m "$byte" -n 24 --temperature 0 -s 2 "Hello" >"$tmp/g2"
cmp -s "$tmp/g1" "$tmp/g2"; check $? "--temp 0 (and its alias --temperature) is greedy: the seed does not matter"

gen -m "$byte" -n 0 "Hello" >"$tmp/n0"
check $? "-n 0 runs"
printf 'Hello\n' | cmp -s - "$tmp/n0"; check $? "-n 0 prints the prompt alone"

# --json: only JSON on stdout; tokens as asked; text = those bytes (as UTF-8 if
# they are, else one code point per byte); the streamed text is the same run
gen -m "$byte" -n 24 -s 7 --json "Hello" >"$tmp/j"
check $? "--json runs"
python3 -c 'import json,sys; json.load(sys.stdin)' <"$tmp/j"; check $? "--json output parses"
python3 - "$tmp/j" "$tmp/s7a" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["tokens"]
assert len(t) == 24 and all(0 <= x < 256 for x in t), t
b = bytes(t)
try:
    want = b.decode("utf-8")
except UnicodeDecodeError:
    want = b.decode("latin-1")
assert d["text"] == want, (d["text"], want)
assert open(sys.argv[2], "rb").read() == b"Hello" + b + b"\n", "streamed text differs from --json"
PY
check $? "--json: 24 tokens, their text, the same as the streamed run"
gen -m "$byte" -n 0 --json "Hello" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["tokens"] == [] and d["text"] == ""'
check $? "--json -n 0: no tokens"

# --stop: the same run, cut right after the first time the text ends with STR
python3 - "$app" "$byte" <<'PY'
import json, subprocess, sys
app, model = sys.argv[1:3]
run = lambda *a: subprocess.run([app, "-q", "-m", model, "-s", "3", *a], capture_output=True, check=True).stdout
full = bytes(json.loads(run("-n", "40", "--json", "Hi"))["tokens"])
k = next(i for i in range(8, 38) if full[i] and full[i + 1])  # argv cannot hold NUL
stop = full[k:k + 2]
cut = next(i for i in range(1, 41) if full[:i].endswith(stop))
got = bytes(json.loads(run("-n", "40", "--json", "--stop", stop, "Hi"))["tokens"])
assert got == full[:cut], (got, full[:cut], stop)
assert run("-n", "40", "--stop", stop, "Hi") == b"Hi" + full[:cut] + b"\n"
PY
check $? "--stop ends the text at the stop string"

# --- logits against the float64 references ----------------------------------------
cat >"$tmp/ref.py" <<'PY'
# ref.py REF ROW tokens: prints row ROW of the reference tokens as ID,ID,...
# ref.py REF ROW check FIRST: compares the logits on stdin (one line per position,
# from position FIRST on) with the reference, to float32 accuracy
import json, struct, sys
buf = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", buf[:8])[0]
hdr = json.loads(buf[8:8 + n])
def tensor(name, fmt, size):
    e = hdr[name]
    s, t = e["data_offsets"]
    return e["shape"], struct.unpack(f"<{(t - s) // size}{fmt}", buf[8 + n + s:8 + n + t])
(B, N), tok = tensor("tokens", "i", 4)
(_, _, V), ref = tensor("logits", "d", 8)
row = int(sys.argv[2])
if sys.argv[3] == "tokens":
    print(",".join(map(str, tok[row * N:(row + 1) * N])))
    sys.exit(0)
first = int(sys.argv[4])
lines = sys.stdin.read().splitlines()
assert len(lines) == N - first, f"{len(lines)} lines, expected {N - first}"
for i, line in enumerate(lines):
    got = [float(x) for x in line.split()]
    want = ref[(row * N + first + i) * V:(row * N + first + i + 1) * V]
    assert len(got) == V, f"{len(got)} numbers, expected {V}"
    err = max(abs(g - w) / (1 + abs(w)) for g, w in zip(got, want))
    assert err < 1e-4, f"position {first + i}: error {err}"
PY
for m in causal kitchen_sink; do
    t=$(python3 "$tmp/ref.py" "$lm/$m.ref.safetensors" 1 tokens)
    n=$(echo "$t" | tr ',' '\n' | wc -l)
    gen -m "$lm/$m.safetensors" --tokens "$t" --logits | python3 "$tmp/ref.py" "$lm/$m.ref.safetensors" 1 check $((n - 1))
    check $? "--logits of $m: one line of vocab_size numbers, the reference's last position"
done
gen -m "$byte" --logits --json "Hello" | python3 -c 'import json,sys; l=json.load(sys.stdin)["logits"]; assert len(l) == 1 and len(l[0]) == 256'
check $? "--logits --json: one row of vocab_size logits"
# --precision reaches the library: the mode and its engine in --json; bf16 logits a little off fp32's
for p in fp32 tf32 fp16 bf16; do
    gen -m "$byte" --logits --json --precision $p "Hello" >"$tmp/$p.json"; check $? "--precision $p runs"
done
python3 - "$tmp" <<'PY'
import json, sys
d = {p: json.load(open(f"{sys.argv[1]}/{p}.json")) for p in ("fp32", "tf32", "fp16", "bf16")}
for p, v in d.items():
    assert v["precision"] == p and v["engine"], (p, v["precision"], v["engine"])
a, b = d["fp32"]["logits"][0], d["bf16"]["logits"][0]
err = max(abs(x - y) for x, y in zip(a, b)) / max(map(abs, a))
assert 0 < err < 1.5e-2, err
PY
check $? "--precision: the mode and engine in --json, bf16 logits within 1.5e-2 of fp32's, not equal"

# --- token-id models ------------------------------------------------------------
for m in "$ids" "$lm/vocab50_bf16.safetensors"; do
    gen -m "$m" -n 4 "Hello" >/dev/null 2>"$tmp/err"
    [ $? = 1 ] && grep -q -- "--tokens" "$tmp/err"; check $? "$(basename "$m"): a text prompt is refused, pointing at --tokens"
done
gen -m "$ids" -n 12 -s 5 --tokens 1,2,3 >"$tmp/ids"
check $? "--tokens on a 67-token model"
python3 -c 'import sys; t=[int(x) for x in open(sys.argv[1]).read().split()]; assert len(t) == 12 and all(0 <= x < 67 for x in t), t' "$tmp/ids"
check $? "--tokens: 12 token ids in the vocabulary printed"
gen -m "$ids" -n 12 -s 5 --tokens 1,2,3 --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["tokens"] == [int(x) for x in open(sys.argv[1]).read().split()] and "text" not in d' "$tmp/ids"
check $? "--tokens --json: the same ids, no text"

# --- bidirectional: no generation, logits of exactly seq_len tokens ------------
gen -m "$bidir" --tokens 1,2,3 >/dev/null 2>"$tmp/err"
[ $? = 1 ] && grep -q "bidirectional" "$tmp/err"; check $? "a bidirectional model refuses to generate"
t=$(python3 "$tmp/ref.py" "$lm/bidir.ref.safetensors" 0 tokens)
gen -m "$bidir" --tokens "$t" --logits | python3 "$tmp/ref.py" "$lm/bidir.ref.safetensors" 0 check 0
check $? "bidirectional --logits: seq_len lines, every position as the reference"
gen -m "$bidir" --tokens 1,2,3 --logits >/dev/null 2>"$tmp/err"
[ $? = 1 ] && grep -q "12 tokens" "$tmp/err"; check $? "bidirectional --logits with fewer than seq_len tokens is refused"

# --- past seq_len: the last 12 tokens are the window --------------------------------
long="The quick brown fox jumps over the lazy dog"
tail12=$(printf %s "$long" | tail -c 12)
gen -m "$byte" -n 10 "$long" >"$tmp/long"
check $? "a prompt longer than seq_len"
[ "$(head -c ${#long} "$tmp/long")" = "$long" ] && [ "$(wc -c <"$tmp/long")" -eq $((${#long} + 11)) ]
check $? "it is continued by 10 bytes"
gen -m "$byte" -n 20 -s 4 --json "$long" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens"])' >"$tmp/w1"
gen -m "$byte" -n 20 -s 4 --json "$tail12" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens"])' >"$tmp/w2"
cmp -s "$tmp/w1" "$tmp/w2"; check $? "continuing a long prompt = continuing its last seq_len bytes"
gen -m "$byte" --logits "$long" >"$tmp/l1"
gen -m "$byte" --logits "$tail12" >"$tmp/l2"
cmp -s "$tmp/l1" "$tmp/l2"; check $? "--logits of a long prompt = of its last seq_len bytes"

# --- the prompt: an argument, -p, -f FILE, -f - (stdin): the same bytes, the same text -----
printf 'Hello' >"$tmp/prompt.txt"
gen -m "$byte" -n 24 -s 7 -p "Hello" >"$tmp/p"
cmp -s "$tmp/p" "$tmp/s7a"; check $? "-p PROMPT = the prompt as the argument"
gen -m "$byte" -n 24 -s 7 --prompt "Hello" >"$tmp/p"
cmp -s "$tmp/p" "$tmp/s7a"; check $? "--prompt PROMPT = the prompt as the argument"
gen -m "$byte" -n 24 -s 7 -f "$tmp/prompt.txt" >"$tmp/p"
cmp -s "$tmp/p" "$tmp/s7a"; check $? "-f FILE = the file's bytes as the prompt"
gen -m "$byte" -n 24 -s 7 -f - <"$tmp/prompt.txt" >"$tmp/p"
cmp -s "$tmp/p" "$tmp/s7a"; check $? "-f - reads the prompt from stdin"
printf 'Two\nlines\n' >"$tmp/prompt2.txt"
gen -m "$byte" -n 4 -s 7 --json --file "$tmp/prompt2.txt" >"$tmp/j2"
gen -m "$byte" -n 4 -s 7 --json "$(printf 'Two\nlines\n.')" >/dev/null # a prompt with newlines is fine as an argument
gen -m "$byte" -n 4 -s 7 --tokens 84,119,111,10,108,105,110,101,115,10 --json >"$tmp/j3"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["tokens"] == json.load(open(sys.argv[2]))["tokens"]' \
    "$tmp/j2" "$tmp/j3"
check $? "--file: every byte, the newlines included, is a prompt token"

# --- seeds: default random, -1 random, the seed used on stderr and in --json -------------
"$app" -m "$byte" -n 24 "Hello" >"$tmp/r1" 2>"$tmp/r1.err"
check $? "no -s: runs"
seed=$(sed -n 's/^gmlp-generate: seed \([0-9]*\)$/\1/p' "$tmp/r1.err")
[ -n "$seed" ]; check $? "no -s: the seed used is printed on stderr ($seed)"
gen -m "$byte" -n 24 -s "$seed" "Hello" >"$tmp/r1b"
cmp -s "$tmp/r1" "$tmp/r1b"; check $? "-s with the printed seed gives the same text again"
"$app" -m "$byte" -n 24 -s -1 "Hello" >"$tmp/r2" 2>"$tmp/r2.err"
seed2=$(sed -n 's/^gmlp-generate: seed \([0-9]*\)$/\1/p' "$tmp/r2.err")
"$app" -m "$byte" -n 24 -s -1 "Hello" >/dev/null 2>"$tmp/r3.err"
seed3=$(sed -n 's/^gmlp-generate: seed \([0-9]*\)$/\1/p' "$tmp/r3.err")
[ -n "$seed2" ] && [ -n "$seed3" ] && [ "$seed2" != "$seed" ] && [ "$seed2" != "$seed3" ]
check $? "-s -1: a random seed each run, printed ($seed2, $seed3)"
gen -m "$byte" -n 24 -s "$seed2" "Hello" | cmp -s - "$tmp/r2"; check $? "-s -1's printed seed repeats its text"
"$app" -m "$byte" -n 24 -s 7 "Hello" 2>&1 >/dev/null | grep -q "^gmlp-generate: seed 7$"
check $? "-s 7: 'seed 7' on stderr"
"$app" -q -m "$byte" -n 4 "Hello" 2>&1 >/dev/null | grep -q "seed"
[ $? = 1 ]; check $? "-q: no seed on stderr"
gen -m "$byte" -n 4 -s 9007199254740992 --json "Hello" | python3 -c 'import json,sys; assert json.load(sys.stdin)["seed"] == 2**53'
check $? "--json has the seed given (2^53, the largest)"
gen -m "$byte" -n 24 --json "Hello" >"$tmp/jr"
python3 - "$tmp/jr" "$app" "$byte" <<'PY'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d["seed"], int) and 0 <= d["seed"] <= 2**53, d["seed"]
again = subprocess.run([sys.argv[2], "-q", "-m", sys.argv[3], "-n", "24", "-s", str(d["seed"]), "--json", "Hello"],
                       capture_output=True, check=True).stdout
assert json.loads(again)["tokens"] == d["tokens"]
PY
check $? "--json without -s: the random seed used, which repeats the tokens"

# --- the window warning: fixture seq_len 12, the bundled LM's 128 ------------------------
window() { # MODEL N PROMPT: whether gmlp-generate -q warns about the window (0: it does)
    "$app" -q -m "$1" -n "$2" -s 1 "$3" 2>&1 >/dev/null | grep "window" >"$tmp/warn"
}
window "$byte" 8 "Hello"; [ $? = 1 ]; check $? "5 prompt + 8 new tokens (12 read) stay in a 12-token window: no warning"
window "$byte" 9 "Hello"; check $? "5 prompt + 9 new tokens pass a 12-token window: a warning (-q keeps it)"
grep -q "window of 12 tokens (seq_len)" "$tmp/warn"; check $? "the warning names the window: $(cat "$tmp/warn")"
window "$bundled" 128 "A"; [ $? = 1 ]; check $? "the bundled LM: 1 + 128 tokens stay in its window"
window "$bundled" 129 "A"; check $? "the bundled LM: 1 + 129 tokens pass its window"
grep -q "window of 128 tokens" "$tmp/warn"; check $? "the bundled LM's warning names 128 tokens"
"$app" -q -m "$byte" --logits "The quick brown fox" 2>&1 >/dev/null | grep -q "longer than the model's window of 12"
check $? "--logits of a prompt longer than the window warns"
GMLP_LM_MODEL=$bundled "$app" -q -n 8 -s 3 "Hello" >"$tmp/b1" && gen -m "$bundled" -n 8 -s 3 "Hello" | cmp -s - "$tmp/b1"
check $? "\$GMLP_LM_MODEL is the default model"

# --- numbers: logits as float32 in 9 significant digits, text and JSON --------------------
gen -m "$byte" --logits "Hello" >"$tmp/lt"
gen -m "$byte" --logits --json "Hello" >"$tmp/lj"
python3 - "$tmp/lt" "$tmp/lj" <<'PY'
import json, re, struct, sys
text = open(sys.argv[1]).read().split()
js = re.findall(r"-?\d[\d.e+-]*", open(sys.argv[2]).read().split('"logits"')[1])
f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
for vals in (text, js):
    assert len(vals) == 256, len(vals)
    for s in vals:
        digits = re.sub(r"e.*", "", s).replace("-", "").replace(".", "").lstrip("0")
        assert len(digits) <= 9, s
assert all(s == "%.9g" % f32(float(s)) for s in text), "text logits are not float32 in %.9g"
assert [float(v) for v in text] == [float(v) for v in js]
PY
check $? "--logits, text and --json: the same float32 values, at most 9 significant digits"

# --- bad options and files ------------------------------------------------------------
expect() { # CODE WHAT FRAGMENT ARGS...: exit code CODE and FRAGMENT on stderr
    code=$1 what=$2 frag=$3
    shift 3
    expect_exit "$code" "$what" "$frag" "$app" -q "$@"
}
# usage errors name the valid range
expect 2 "--top-p 0" "top-p.*(0, 1]" -m "$byte" --top-p 0 x
expect 2 "--top-p 1.5" "top-p.*(0, 1]" -m "$byte" --top-p 1.5 x
expect 2 "--top-k -1" "top-k.*0 .*1073741824" -m "$byte" --top-k -1 x
expect 2 "-n abc" "tokens-out.*0 to 1048576" -m "$byte" -n abc x
expect 2 "-n 1048577" "tokens-out.*0 to 1048576" -m "$byte" -n 1048577 x
expect 2 "--temp -1" "temp.*from 0 (greedy) to 1e6" -m "$byte" --temp -1 x
expect 2 "--temperature x" "temp.*from 0 (greedy) to 1e6" -m "$byte" --temperature x x
# above 1e6, and a finite double that is an infinite float
expect 2 "--temp 1000001" "temp.*to 1e6" -m "$byte" --temp 1000001 x
expect 2 "--temp 1e300" "temp.*to 1e6" -m "$byte" --temp 1e300 x
expect 2 "--seed x" "seed.*-1 (random) or an integer from 0 to 9007199254740992" -m "$byte" -s x x
expect 2 "--seed -2" "seed.*-1 (random)" -m "$byte" -s -2 x
expect 2 "--seed 2^53+1" "seed.*9007199254740992" -m "$byte" -s 9007199254740993 x
expect 2 "-t (removed: llama.cpp's threads)" "invalid option -- 't'" -m "$byte" -t 1 x
expect 2 "-k (removed)" "invalid option -- 'k'" -m "$byte" -k 1 x
expect 2 "-p and a prompt argument" "given twice" -m "$byte" -p x y
expect 2 "-p and -f" "not both" -m "$byte" -p x -f "$tmp/a"
expect 2 "-f and --tokens" "not both" -m "$byte" -f "$tmp/a" --tokens 1
expect 2 "an empty -p" "empty" -m "$byte" -p ""
expect 2 "empty prompt" "empty" -m "$byte" ""
expect 2 "empty --tokens" "empty" -m "$byte" --tokens ""
expect 2 "a prompt and --tokens" "not both" -m "$byte" --tokens 1 x
expect 2 "no prompt" "prompt" -m "$byte"
expect 2 "two prompts" "prompt" -m "$byte" x y
expect 2 "empty --stop" "stop" -m "$byte" --stop "" x
expect 2 "unknown option" "bogus" -m "$byte" --bogus x
expect 2 "--precision fp64" "invalid value 'fp64' for --precision: expected fp32, tf32, fp16 or bf16" -m "$byte" --precision fp64 x
expect_exit 1 "GMLP_PRECISION=bogus" "GMLP_PRECISION=bogus: expected fp32, tf32, fp16 or bf16" \
    env GMLP_PRECISION=bogus "$app" -q -m "$byte" x
expect 1 "missing model file" "$tmp/none.safetensors" -m "$tmp/none.safetensors" x
expect 1 "missing -f file" "$tmp/none.txt" -m "$byte" -f "$tmp/none.txt"
: >"$tmp/empty.txt"
expect 1 "an empty -f file" "empty" -m "$byte" -f "$tmp/empty.txt"
expect_exit 1 "empty stdin for -f -" "empty" "$app" -q -m "$byte" -f - </dev/null
expect 1 "-d: no such device" "no-such-device" -m "$byte" -d no-such-device x
expect 1 "an image model" "image model" -m "$2/data/e2e/gmlp_rgb.safetensors" x
expect 1 "a broken model" "gmlp.causal" -m "$2/data/broken/lm_causal_yes.safetensors" x
expect 1 "--tokens outside the vocabulary" "0..66" -m "$ids" --tokens 1,67
expect 1 "--tokens not a number" "abc" -m "$ids" --tokens 1,abc
for t in 1,2, ,1 1,,2 ,; do
    expect 1 "--tokens $t" "--tokens '$t': an empty id" -m "$ids" --tokens "$t"
done
expect 1 "--stop on a token-id model" "byte-level" -m "$ids" --stop x --tokens 1

# --- --help and --version ----------------------------------------------------------------
check_help "$app" -m --model -d --device -p --prompt -f --file --tokens -n --tokens-out --temp --temperature \
    --top-k --top-p -s --seed --stop --logits --json -q --quiet -h --help --version --precision
for d in "default 200" "default 0.8" "default 40" "default 0.95" "default -1" "default: \$GMLP_LM_MODEL" \
    "default: \$GMLP_DEVICE"; do
    grep -q "$d" "$tmp/help" || { echo "FAIL: --help does not say '$d'"; fail=1; }
done
grep -q "^Exit status: 0 .*1 .*2 " "$tmp/help"; check $? "--help states the exit statuses"
check_version gmlp-generate "$app"
exit $fail
