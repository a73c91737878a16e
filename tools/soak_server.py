#!/usr/bin/env python3
"""A mixed soak of gmlp-server (issue #57; outside CI): many clients, each picking at random among
classify (raw and multipart), embeddings, completions (greedy, streamed and not), chat, the GET routes,
hostile requests, bodies cut off and streams dropped mid-way, for --minutes.  Every reply that should
succeed is checked against the CLIs run first (gmlp-classify --json and --features, gmlp-generate
greedy); the server's RSS, open descriptors and p50/p99 latency are sampled every --sample-s seconds.
Prints a markdown summary; exits 1 on any mismatch or if the server does not stop cleanly.
  tools/soak_server.py BUILD_DIR [--minutes 30] [--clients 16] [--sample-s 10] [--svg FILE] [--json FILE]
                       [--seed S] [-- SERVER OPTIONS]
The server is started on a free port with the bundled models and the options after --."""
import argparse
import collections
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time

import requests

import server_start

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--minutes", type=float, default=30)
ap.add_argument("--clients", type=int, default=16)
ap.add_argument("--sample-s", type=float, default=10)
ap.add_argument("--svg")
ap.add_argument("--json")
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("server_args", nargs="*")
a = ap.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
apps = os.path.join(a.build, "apps")
examples = sorted(os.path.join(root, "examples", f) for f in os.listdir(os.path.join(root, "examples"))
                  if f.endswith(".png"))
images = {os.path.basename(f): open(f, "rb").read() for f in examples}
names = sorted(images)
PROMPTS = ["Life is ", "You will ", "A man who ", "Q: How many "]  # greedy texts that differ, not blanks
MAX_TOKENS = 16
PROB_TOL = 1e-5  # the server batches images dynamically: other batch sizes, other float rounding
socket.setdefaulttimeout(120)  # requests and http.client: a reply that never comes is a failure, not a hang

# --- references, from the CLIs -------------------------------------------------------------------------
out = subprocess.run([os.path.join(apps, "gmlp-classify"), "-q", "--json", *examples],
                     check=True, capture_output=True, text=True).stdout
ref_top = {os.path.basename(r["file"]): r["top"] for r in json.loads(out)["results"]}
out = subprocess.run([os.path.join(apps, "gmlp-classify"), "-q", "--features", "--output", "-", *examples],
                     check=True, capture_output=True, text=True).stdout
ref_emb = {os.path.basename(r["file"]): r["embedding"] for r in map(json.loads, out.splitlines())}


def generate(prompt):
    out = subprocess.run([os.path.join(apps, "gmlp-generate"), "-q", "--json", "-n", str(MAX_TOKENS),
                          "--temp", "0", "-p", prompt], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["text"]


ref_text = {p: generate(p) for p in PROMPTS}
# docs/server.md: a chat becomes "ROLE: CONTENT\n" per message, then "assistant: "
ref_chat = {p: generate(f"user: {p}\nassistant: ") for p in PROMPTS}

# --- the server ----------------------------------------------------------------------------------------
proc, port, stderr_tail = server_start.start(
    os.path.join(apps, "gmlp-server"),
    ["--model", os.path.join(root, "models", "fashion-mnist-gmlp.safetensors"),
     "--lm", os.path.join(root, "models", "fortunes-gmlp-lm.safetensors"), *a.server_args], keep=50)
url = f"http://127.0.0.1:{port}"
grace_s = float(a.server_args[a.server_args.index("--grace-s") + 1]) if "--grace-s" in a.server_args else 10


def rss_mib():
    with open(f"/proc/{proc.pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) / 1024


def fds():
    return len(os.listdir(f"/proc/{proc.pid}/fd"))


# --- bookkeeping ---------------------------------------------------------------------------------------
class Mismatch(Exception):
    pass


lock = threading.Lock()
counts = collections.Counter()       # (kind, "ok" | "fail")
latencies = collections.defaultdict(list)  # kind -> seconds, the successful requests
interval = []                        # (kind, seconds) completed since the last sample
failures = []                        # (kind, detail)


def check(cond, detail):
    if not cond:
        raise Mismatch(detail)


def json_error(r, status):
    """The reply is `status` with OpenAI's error shape (docs/server.md, "Errors")."""
    check(r.status_code == status, f"status {r.status_code}, not {status}: {r.text[:200]}")
    e = r.json().get("error")
    check(isinstance(e, dict) and {"message", "type", "param", "code"} <= e.keys(), f"not the error shape: {r.text[:200]}")


def same_top(got, name):
    want = ref_top[name]
    check(len(got) == len(want), f"{name}: {len(got)} classes, not {len(want)}")
    for g, w in zip(got, want):
        check(g["index"] == w["index"] and g["label"] == w["label"] and abs(g["prob"] - w["prob"]) <= PROB_TOL,
              f"{name}: {g} where gmlp-classify says {w}")


def raw(request, read=True):
    """Sends bytes on a fresh connection; the status line of the reply (None when not read)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        return s.makefile("rb").readline().decode("latin-1") if read else None


def sse(lines, chat):
    """The text of a stream of SSE lines, checking it ends with one [DONE]."""
    text, done = "", False
    for line in lines:
        if not line.startswith("data: "):
            continue  # blank separators and ": waiting" comments
        check(not done, "data after [DONE]")
        if line == "data: [DONE]":
            done = True
            continue
        c = json.loads(line[6:])["choices"][0]
        text += c["delta"].get("content", "") if chat else c["text"]
    check(done, "no [DONE]")
    return text


# --- the traffic: each job takes the client's session and random generator -----------------------------
def classify(s, rng):
    name = rng.choice(names)
    r = s.post(url + "/v1/classify", data=images[name], headers={"Content-Type": "image/png"})
    check(r.status_code == 200, f"status {r.status_code}: {r.text[:200]}")
    rows = r.json()["results"]
    check(len(rows) == 1 and rows[0]["file"] == "-", f"rows {rows}")
    same_top(rows[0]["top"], name)


def classify_multipart(s, rng):
    parts = rng.sample(names, rng.randint(2, 3))
    r = s.post(url + "/v1/classify", files=[(f"f{i}", (n, images[n], "image/png")) for i, n in enumerate(parts)])
    check(r.status_code == 200, f"status {r.status_code}: {r.text[:200]}")
    rows = r.json()["results"]
    check([row["file"] for row in rows] == parts, f"rows {[row.get('file') for row in rows]} for parts {parts}")
    for row, n in zip(rows, parts):
        same_top(row["top"], n)


def embeddings(s, rng):
    name = rng.choice(names)
    r = s.post(url + "/v1/embeddings", data=images[name], headers={"Content-Type": "image/png"})
    check(r.status_code == 200, f"status {r.status_code}: {r.text[:200]}")
    data = r.json()["data"]
    check(len(data) == 1 and data[0]["index"] == 0, f"{len(data)} embeddings")
    got, want = data[0]["embedding"], ref_emb[name]
    check(len(got) == len(want), f"{name}: {len(got)} floats, not the model's dim {len(want)}")
    worst = max(abs(g - w) for g, w in zip(got, want))
    check(worst <= PROB_TOL, f"{name}: {worst:.3g} from gmlp-classify --features")


def completion_body(rng, stream, chat=False, max_tokens=MAX_TOKENS, temperature=0):
    p = rng.choice(PROMPTS)
    body = {"max_tokens": max_tokens, "temperature": temperature, "stream": stream}
    body.update({"messages": [{"role": "user", "content": p}]} if chat else {"prompt": p})
    return p, body


def completion(s, rng):
    p, body = completion_body(rng, False)
    r = s.post(url + "/v1/completions", json=body)
    check(r.status_code == 200, f"status {r.status_code}: {r.text[:200]}")
    text = r.json()["choices"][0]["text"]
    check(text == ref_text[p], f"{p!r}: {text!r}, gmlp-generate {ref_text[p]!r}")


def completion_stream(s, rng):
    p, body = completion_body(rng, True)
    with s.post(url + "/v1/completions", json=body, stream=True) as r:
        check(r.status_code == 200, f"status {r.status_code}: {r.text[:200]}")
        text = sse(r.iter_lines(decode_unicode=True), False)
    check(text == ref_text[p], f"{p!r}: streamed {text!r}, gmlp-generate {ref_text[p]!r}")


def chat(s, rng):
    stream = rng.random() < 0.5
    p, body = completion_body(rng, stream, chat=True)
    with s.post(url + "/v1/chat/completions", json=body, stream=stream) as r:
        check(r.status_code == 200, f"status {r.status_code}: {r.text[:200]}")
        text = sse(r.iter_lines(decode_unicode=True), True) if stream else r.json()["choices"][0]["message"]["content"]
    check(text == ref_chat[p], f"{p!r}: {text!r} (stream {stream}), gmlp-generate {ref_chat[p]!r}")


def models(s, rng):
    r = s.get(url + "/v1/models")
    check(r.status_code == 200 and len(r.json()["data"]) == 2, f"status {r.status_code}: {r.text[:200]}")


def health(s, rng):
    r = s.get(url + "/health")
    check(r.status_code == 200 and r.json() == {"status": "ok"}, f"status {r.status_code}: {r.text[:200]}")


def metrics(s, rng):
    r = s.get(url + "/metrics")
    check(r.status_code == 200 and "gmlp_requests_total" in r.text, f"status {r.status_code}: {r.text[:200]}")


# hostile requests: the refusals docs/server.md promises
def bad_json(s, rng):
    json_error(s.post(url + "/v1/completions", data=b'{"prompt": "x",', headers={"Content-Type": "application/json"}), 400)


def wrong_type(s, rng):
    json_error(s.post(url + "/v1/completions", data=b'{"prompt": "x"}', headers={"Content-Type": "text/plain"}), 415)


def unknown_route(s, rng):
    json_error(s.get(url + "/v1/nowhere"), 404)


def not_image(s, rng):
    """Not a refusal: the request is answered, the image an error row."""
    r = s.post(url + "/v1/classify", data=b"not an image", headers={"Content-Type": "application/octet-stream"})
    check(r.status_code == 200 and "error" in r.json()["results"][0], f"status {r.status_code}: {r.text[:200]}")


def long_header(s, rng):
    """libmicrohttpd's own 431 (its HTML, not the JSON error)."""
    line = raw(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 40000 + b"\r\n\r\n")
    check(" 431 " in line, f"status line {line!r}")


def bad_length(s, rng):
    """libmicrohttpd's own 400 for a Content-Length that is not a number."""
    line = raw(b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Length: 12x\r\n\r\n")
    check(" 400 " in line, f"status line {line!r}")


def cut_off(s, rng):
    """A body that stops before its Content-Length, the connection closed; then the server still answers."""
    body = images[rng.choice(names)]
    raw(b"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: %d\r\n\r\n"
        % len(body) + body[:len(body) // 2], read=False)
    health(s, rng)


def disconnect(s, rng):
    """A streamed completion left after its first chunk; then the server still answers."""
    p, body = completion_body(rng, True, max_tokens=256, temperature=0.8)
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    check(r.status == 200, f"status {r.status}")
    while not r.readline().startswith(b"data: "):
        pass
    c.close()
    health(s, rng)


JOBS = [(classify, 4), (classify_multipart, 2), (embeddings, 2), (completion, 1), (completion_stream, 1),
        (chat, 1), (models, 1), (health, 1), (metrics, 1), (bad_json, 1 / 3), (wrong_type, 1 / 3),
        (unknown_route, 1 / 3), (not_image, 1 / 3), (long_header, 1 / 3), (bad_length, 1 / 3), (cut_off, 1),
        (disconnect, 1)]
UNTIMED = {"cut_off", "disconnect"}  # not one request and its reply: left out of the latencies

stop = threading.Event()


def client(i):
    rng = random.Random(a.seed * 1000 + i)
    s = requests.Session()  # kept alive across requests, as a real client would
    jobs, weights = zip(*JOBS)
    while not stop.is_set():
        job = rng.choices(jobs, weights)[0]
        kind = job.__name__
        t = time.perf_counter()
        try:
            job(s, rng)
            outcome = "ok"
        except Exception as e:  # a mismatch, or the server not answering as it should
            outcome = "fail"
            with lock:
                failures.append((kind, f"{type(e).__name__}: {e}"[:500]))
            s = requests.Session()
        dt = time.perf_counter() - t
        with lock:
            counts[kind, outcome] += 1
            if outcome == "ok" and kind not in UNTIMED:
                latencies[kind].append(dt)
                interval.append((kind, dt))


def pct(xs, q):
    xs = sorted(xs)
    return 1e3 * xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None


samples = []
t0 = time.monotonic()


def sample():
    global interval
    if proc.poll() is not None:
        return
    with lock:
        done, interval = interval, []
        total = sum(counts.values())
    lat = [dt for _, dt in done]
    cls = [dt for k, dt in done if k == "classify"]
    samples.append({"t_s": round(time.monotonic() - t0, 1), "requests": total, "rss_mib": round(rss_mib(), 1),
                    "fds": fds(), "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99),
                    "classify_p50_ms": pct(cls, 0.5), "classify_p99_ms": pct(cls, 0.99)})


sample()
threads = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
for t in threads:
    t.start()
end = t0 + 60 * a.minutes
next_sample = t0 + a.sample_s
while proc.poll() is None and time.monotonic() < end:
    time.sleep(max(0.0, min(next_sample, end) - time.monotonic()))
    if next_sample < end and time.monotonic() >= next_sample:
        sample()
        next_sample += a.sample_s
stop.set()
for t in threads:
    t.join()
wall = time.monotonic() - t0
if proc.poll() is not None:
    failures.append(("server", f"exited with {proc.returncode} during the soak"))
else:
    sample()
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(grace_s + 5)
        if rc != 0:
            failures.append(("server", f"exited with {rc} on SIGTERM"))
    except subprocess.TimeoutExpired:
        failures.append(("server", f"still running {grace_s + 5:g} s after SIGTERM"))
        proc.kill()
        proc.wait()

# --- the report ----------------------------------------------------------------------------------------
kinds = sorted({k for k, _ in counts})
total = sum(counts.values())
all_lat = [dt for k in kinds for dt in latencies[k]]
rss = [s["rss_mib"] for s in samples]
fd = [s["fds"] for s in samples]
summary = {"minutes": a.minutes, "clients": a.clients, "requests": total, "requests_per_s": total / wall,
           "rss_mib": {"first": rss[0], "last": rss[-1], "max": max(rss)},
           "fds": {"first": fd[0], "last": fd[-1], "max": max(fd)},
           "p50_ms": pct(all_lat, 0.5), "p99_ms": pct(all_lat, 0.99), "failures": len(failures)}
table = {k: {"ok": counts[k, "ok"], "fail": counts[k, "fail"], "p50_ms": pct(latencies[k], 0.5),
             "p99_ms": pct(latencies[k], 0.99)} for k in kinds}


def ms(x):
    return "-" if x is None else f"{x:.1f}"


print("| kind | ok | failed | p50 ms | p99 ms |")
print("|---|---:|---:|---:|---:|")
for k, row in table.items():
    print(f"| {k} | {row['ok']} | {row['fail']} | {ms(row['p50_ms'])} | {ms(row['p99_ms'])} |")
print(f"\n{total} requests from {a.clients} clients in {wall:.0f} s ({total / wall:.1f}/s); "
      f"p50 {ms(summary['p50_ms'])} ms, p99 {ms(summary['p99_ms'])} ms (the {len(all_lat)} timed replies)")
print(f"RSS MiB first {rss[0]:.1f}, last {rss[-1]:.1f}, max {max(rss):.1f}; "
      f"open descriptors first {fd[0]}, last {fd[-1]}, max {max(fd)}")
print(f"failures: {len(failures)}")
for k, d in failures[:50]:
    print(f"  {k}: {d}")
if failures and proc.returncode not in (0, None):
    print("the server's last stderr lines:\n" + "".join(stderr_tail), end="")

if a.json:
    with open(a.json, "w") as f:
        json.dump({"summary": summary, "kinds": table, "samples": samples, "failures": failures}, f, indent=1)


def svg(path):
    """Three panels over time: RSS, descriptors, latency; hand-written SVG."""
    W, H, L, R, T, B = 760, 210, 70, 150, 30, 40
    tmax = max(samples[-1]["t_s"], 1) / 60
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{3 * H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{3 * H}" fill="white"/>']

    def panel(y0, title, unit, series):
        values = [v for _, _, pts in series for _, v in pts if v is not None]
        vmax = max(values, default=1) * 1.1 or 1
        step = next(m * 10 ** e for e in range(-3, 9) for m in (1, 2, 5) if vmax / (m * 10 ** e) <= 6)
        vmax = step * -(-vmax // step)
        x = lambda t: L + (W - L - R) * t / tmax
        y = lambda v: y0 + H - B - (H - T - B) * v / vmax
        out.append(f'<text x="{L}" y="{y0 + 18}" font-weight="bold">{title}</text>')
        out.append(f'<line x1="{L}" y1="{y(0)}" x2="{W - R}" y2="{y(0)}" stroke="black"/>')
        out.append(f'<line x1="{L}" y1="{y(0)}" x2="{L}" y2="{y0 + T}" stroke="black"/>')
        v = 0.0
        while v <= vmax:
            out.append(f'<line x1="{L}" y1="{y(v):.1f}" x2="{W - R}" y2="{y(v):.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{L - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
            v += step
        for i in range(6):
            t = tmax * i / 5
            out.append(f'<text x="{x(t):.1f}" y="{y(0) + 16}" text-anchor="middle">{t:.3g}</text>')
        out.append(f'<text x="{(L + W - R) / 2}" y="{y0 + H - 6}" text-anchor="middle">minutes</text>')
        out.append(f'<text transform="translate(16 {y0 + H / 2}) rotate(-90)" text-anchor="middle">{unit}</text>')
        for j, (name, color, pts) in enumerate(series):
            pts = [(t / 60, v) for t, v in pts if v is not None]
            out.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="'
                       + " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts) + '"/>')
            out.append(f'<line x1="{W - R + 10}" y1="{y0 + T + 10 + 18 * j}" x2="{W - R + 30}" '
                       f'y2="{y0 + T + 10 + 18 * j}" stroke="{color}" stroke-width="2"/>')
            out.append(f'<text x="{W - R + 36}" y="{y0 + T + 14 + 18 * j}">{name}</text>')

    col = lambda key: [(s["t_s"], s[key]) for s in samples]
    panel(0, "gmlp-server resident memory", "RSS (MiB)", [("RSS", "#1f77b4", col("rss_mib"))])
    panel(H, "gmlp-server open descriptors", "descriptors", [("fds", "#2ca02c", col("fds"))])
    panel(2 * H, "latency of the replies in each interval", "ms",
          [("p50 all", "#1f77b4", col("p50_ms")), ("p99 all", "#d62728", col("p99_ms")),
           ("p50 classify", "#17becf", col("classify_p50_ms")), ("p99 classify", "#ff7f0e", col("classify_p99_ms"))])
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


if a.svg:
    svg(a.svg)
sys.exit(1 if failures else 0)
