#!/bin/sh
# gmlp-generate end to end on the LM fixtures (tests/data/lm): byte-level
# prompts, seeds, greedy decoding, --json, --logits against the float64
# references, --stop, token-id models, bidirectional models, the sliding
# window past seq_len, and bad options (exit 2: usage, 1: runtime).
set -u
app=$1
lm="$2/data/lm"
fail=0
check() { if [ "$1" = 0 ]; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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

gen -m "$byte" -n 24 -t 0 -s 1 "Hello" >"$tmp/g1"
gen -m "$byte" -n 24 -t 0 -s 2 "Hello" >"$tmp/g2"
cmp -s "$tmp/g1" "$tmp/g2"; check $? "--temperature 0 is greedy: the seed does not matter"

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

# --- bad options and files ------------------------------------------------------------
expect() { # CODE WHAT FRAGMENT ARGS...: exit code CODE and FRAGMENT on stderr
    code=$1 what=$2 frag=$3
    shift 3
    "$app" -q "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc = "$code" ] && grep -q -- "$frag" "$tmp/err"
    check $? "$what: exit $rc (want $code): $(head -n 1 "$tmp/err")"
}
expect 2 "--top-p 0" "top-p" -m "$byte" --top-p 0 x
expect 2 "--top-p 1.5" "top-p" -m "$byte" --top-p 1.5 x
expect 2 "--top-k -1" "top-k" -m "$byte" --top-k -1 x
expect 2 "-n abc" "tokens-out" -m "$byte" -n abc x
expect 2 "--temperature -1" "temperature" -m "$byte" -t -1 x
expect 2 "--seed x" "seed" -m "$byte" -s x x
expect 2 "empty prompt" "empty" -m "$byte" ""
expect 2 "empty --tokens" "empty" -m "$byte" --tokens ""
expect 2 "a prompt and --tokens" "not both" -m "$byte" --tokens 1 x
expect 2 "no prompt" "prompt" -m "$byte"
expect 2 "two prompts" "prompt" -m "$byte" x y
expect 2 "empty --stop" "stop" -m "$byte" --stop "" x
expect 2 "unknown option" "bogus" -m "$byte" --bogus x
expect 1 "missing model file" "$tmp/none.safetensors" -m "$tmp/none.safetensors" x
expect 1 "an image model" "image model" -m "$2/data/e2e/gmlp_rgb.safetensors" x
expect 1 "a broken model" "gmlp.causal" -m "$2/data/broken/lm_causal_yes.safetensors" x
expect 1 "--tokens outside the vocabulary" "0..66" -m "$ids" --tokens 1,67
expect 1 "--tokens not a number" "abc" -m "$ids" --tokens 1,abc
expect 1 "--stop on a token-id model" "byte-level" -m "$ids" --stop x --tokens 1
"$app" --help | grep -q -- "--tokens IDS"; check $? "--help"
exit $fail
