#!/usr/bin/env python3
"""gmlp-server end to end, on loopback, bounded in time: health while loading,
curl and Python requests against gmlp-classify's rows for the same images,
concurrent clients (every reply equal to gmlp-classify's, none lost or
duplicated, the metrics' counts adding up, RSS flat over a second round),
hostile requests each getting its status while the server keeps serving,
embeddings equal to gmlp-classify --features' bit for bit (multipart, JSON base64 input, float and base64
encodings, curl and the openai package), mixed with classify requests, their refusals, a headless model,
completions equal to gmlp-generate's (plain, streamed, through the openai
package where the tools Python has it), a device failing mid-batch, the API
key, libmicrohttpd's own refusals counted, TLS (curl and Python's ssl against
certificates made with openssl: a wrong one, plain HTTP to the TLS port,
handshakes cut short), and SIGTERM.
  test_server.py GMLP_SERVER GMLP_CLASSIFY GMLP_GENERATE SOURCE_DIR
Environment: GMLP_SERVER_CLIENTS x GMLP_SERVER_REQUESTS (default 32 x 25; CI's
ASan pass uses fewer; scripts/test's quick tier, GMLP_TEST_TIER=quick, 16 x 10:
the same checks, every one still under concurrent clients, on a fifth of the
load), GMLP_TOOLS_PYTHON (the openai client)."""
import atexit
import base64
import concurrent.futures
import json
import os
import random
import re
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

import requests

server_bin, classify_bin, generate_bin, src = sys.argv[1:5]
models = os.path.join(src, "models")
examples = os.path.join(src, "examples")
lm_path = os.path.join(models, "fortunes-gmlp-lm.safetensors")
QUICK = os.environ.get("GMLP_TEST_TIER") == "quick"
CLIENTS = int(os.environ.get("GMLP_SERVER_CLIENTS", "16" if QUICK else "32"))
REQUESTS = int(os.environ.get("GMLP_SERVER_REQUESTS", "10" if QUICK else "25"))
failures = 0


T0 = time.time()


def check(ok, what):
    global failures
    print(f"{'ok' if ok else 'FAIL'} ({time.time() - T0:.1f} s): {what}", flush=True)
    failures += not ok


class Server:
    """A gmlp-server on a free port; its stderr collected."""

    def __init__(self, *args, env=None, verify=True):
        self.verify = verify  # requests' verify: the CA file of a TLS server's certificate
        self.proc = subprocess.Popen([server_bin, "--port", "0", *args], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
        atexit.register(lambda: self.proc.poll() is None and self.proc.kill())  # a failed check leaves none behind
        self.log, self.port = [], None
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.time() + 60
        while self.port is None and self.proc.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        if self.port is None:
            sys.exit(f"test_server: the server did not start: {''.join(self.log)}")
        self.url = f"{self.scheme}://127.0.0.1:{self.port}"

    def _read(self):
        for line in self.proc.stderr:
            self.log.append(line)
            m = re.search(r"listening on (https?)://127\.0\.0\.1:(\d+)", line)
            if m:
                self.scheme, self.port = m.group(1), int(m.group(2))

    def wait_ready(self):
        """The first /health answer, once it says 200; None when the server ended (a model or device failed)."""
        first = None
        for _ in range(1200):
            try:
                r = requests.get(self.url + "/health", timeout=10, verify=self.verify)
            except requests.ConnectionError:
                r = None
            if self.proc.poll() is not None:
                return None
            first = first or r
            if r is not None and r.status_code == 200:
                return first
            time.sleep(0.05)
        sys.exit("test_server: the models did not load in 60 s")

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.exit_status()

    def exit_status(self):
        """Its exit status; what it wrote on stderr goes to ours when that is not 0."""
        rc = self.proc.wait(timeout=30)
        if rc:
            time.sleep(0.2)  # the reader thread's last lines
            sys.stderr.write("".join(self.log[-40:]))
        return rc


def png(path, seed):
    """A 28x28 grey PNG of random pixels."""
    r = random.Random(seed)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    raw = b"".join(b"\0" + bytes(r.randrange(256) for _ in range(28)) for _ in range(28))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 28, 28, 8, 0, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def same_row(got, want):
    """Same file, same top-k indices and labels, probabilities within 1e-6."""
    return (got.get("file") == want["file"] and len(got.get("top", [])) == len(want["top"]) and
            all(g["index"] == w["index"] and g["label"] == w["label"] and abs(g["prob"] - w["prob"]) <= 1e-6
                for g, w in zip(got["top"], want["top"])))


def raw_http(port, data, read_timeout=10):
    """Sends bytes as they are; what came back before the server closed (or the timeout)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(read_timeout)
    try:
        s.sendall(data)
        out = b""
        while True:
            got = s.recv(65536)
            if not got:
                break
            out += got
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return out


def metric(text, name, **labels):
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in text.splitlines():
        head, _, value = line.rpartition(" ")
        if head == (f"{name}{{{want}}}" if labels else name):
            return float(value)
    return 0.0


tmp = tempfile.mkdtemp()
gen_dir = os.path.join(tmp, "generated")
os.makedirs(gen_dir)
for i in range(24):
    png(os.path.join(gen_dir, f"gen{i:02d}.png"), i)
images = {}
for d in (examples, gen_dir):
    for name in sorted(os.listdir(d)):
        if name.endswith(".png"):
            images[name] = open(os.path.join(d, name), "rb").read()

# gmlp-classify's rows: what every reply must equal
ref = subprocess.run([classify_bin, "-q", "--json", "-k", "5", examples, gen_dir], capture_output=True, text=True)
check(ref.returncode == 0, "gmlp-classify gives the reference rows")
want = {os.path.basename(r["file"]): dict(r, file=os.path.basename(r["file"])) for r in json.loads(ref.stdout)["results"]}
check(set(want) == set(images), f"a reference row for each of the {len(images)} images")

srv = Server("--lm", lm_path, "--batch", "8", "--max-delay-ms", "5", "--timeout-s", "2", "--max-body-mb", "1",
             "--queue", "4096", "-v")
first = srv.wait_ready() or sys.exit(f"test_server: the server failed: {''.join(srv.log)}")
check(first.status_code in (200, 503) and (first.status_code == 200 or first.json()["status"] == "loading"),
      f"/health before the models loaded: 503 loading, or 200 if they were quick (got {first.status_code})")
url = srv.url

# --- real clients -----------------------------------------------------------------------------
name = "bag-18.png"
out = subprocess.run(["curl", "-sS", "--data-binary", "@" + os.path.join(examples, name), "-H",
                      "Content-Type: image/png", url + "/v1/classify"], capture_output=True, text=True)
row = json.loads(out.stdout)["results"][0] if out.returncode == 0 else {}
check(same_row(row, dict(want[name], file="-")), "curl, a raw body: gmlp-classify's row, file '-'")
out = subprocess.run(["curl", "-sS", "-F", "a=@" + os.path.join(examples, name), "-F",
                      "b=@" + os.path.join(examples, "coat-6.png"), url + "/v1/classify?top=3"],
                     capture_output=True, text=True)
rows = json.loads(out.stdout)["results"] if out.returncode == 0 else []
check(len(rows) == 2 and all(same_row(r, dict(want[n], top=want[n]["top"][:3]))
                             for r, n in zip(rows, [name, "coat-6.png"])),
      "curl -F, two parts, ?top=3: their rows in order, three classes each")
r = requests.get(url + "/v1/models")
check(r.status_code == 200 and [m["id"] for m in r.json()["data"]] ==
      ["fashion-mnist-gmlp.safetensors", "fortunes-gmlp-lm.safetensors"], "/v1/models lists both models")


# --- concurrent clients ------------------------------------------------------------------------
def client(base, seed, n_requests):
    """n_requests of 1..4 random images to the server at base; (requests answered right, images sent)."""
    rnd = random.Random(seed)
    names = sorted(images)
    good = sent = 0
    with requests.Session() as s:
        for _ in range(n_requests):
            pick = [rnd.choice(names) for _ in range(rnd.randint(1, 4))]
            files = [(f"f{i}", (n, images[n], "image/png")) for i, n in enumerate(pick)]
            r = s.post(base + "/v1/classify", files=files, timeout=60)
            sent += len(pick)
            rows = r.json().get("results", []) if r.status_code == 200 else []
            good += len(rows) == len(pick) and all(same_row(g, want[n]) for g, n in zip(rows, pick))
    return good, sent


def load_round(seed):
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        done = list(pool.map(lambda c: client(url, seed * 1000 + c, REQUESTS), range(CLIENTS)))
    return sum(g for g, _ in done), sum(s for _, s in done), time.time() - t0


before = requests.get(url + "/metrics").text
good, sent, secs = load_round(1)
total = CLIENTS * REQUESTS
check(good == total, f"{CLIENTS} clients x {REQUESTS} requests ({sent} images, {secs:.1f} s): every reply is "
                     f"gmlp-classify's rows, in order ({good} of {total})")
after = requests.get(url + "/metrics").text
delta = lambda name, **l: metric(after, name, **l) - metric(before, name, **l)
check(delta("gmlp_requests_total", endpoint="/v1/classify", status="200") == total,
      "metrics: the classify requests counted once each")
check(delta("gmlp_images_total") == sent and delta("gmlp_batch_images_sum") == sent,
      "metrics: the images served and the batches' images add up to those sent (none lost or duplicated)")
check(delta("gmlp_request_seconds_count", endpoint="/v1/classify") == total,
      "metrics: the latency histogram counts every request")
check(metric(after, "gmlp_queue_images") == 0, "metrics: the queue is empty after the round")
check(metric(after, "gmlp_batch_images_count") < metric(after, "gmlp_batch_images_sum"),
      "concurrent requests were gathered: fewer batches than images")
rss1 = srv.rss_kib()
good2, _, _ = load_round(2)
rss2 = srv.rss_kib()
check(good2 == total, "a second round: every reply right")
check(rss2 <= rss1 * 1.1 + 8192, f"RSS flat over the second round ({rss1} KiB, then {rss2} KiB)")

# --- embeddings: gmlp-classify --features' floats, bit for bit ---------------------------------------
paths = {n: os.path.join(d, n) for d in (examples, gen_dir) for n in os.listdir(d) if n.endswith(".png")}
emb = sorted(images)[:8]  # 8 = --batch: one request's images make one batch, as in the reference run


def f32s(values):
    return struct.pack(f"<{len(values)}f", *values)


def features_of(batch, *args):
    """gmlp-classify --features' rows for the emb images, -b batch: each image's float32 bytes."""
    out = subprocess.run([classify_bin, "-q", "--features", "-b", str(batch), *args, *[paths[n] for n in emb]],
                         capture_output=True, text=True)
    return [f32s(json.loads(line)["embedding"]) for line in out.stdout.splitlines()] if out.returncode == 0 else []


ref8, ref1 = features_of(8), features_of(1)
check(len(ref8) == len(ref1) == 8, "gmlp-classify --features gives the reference features")
b64 = {n: base64.b64encode(images[n]).decode() for n in emb}
r = requests.post(url + "/v1/embeddings", files=[(f"f{i}", (n, images[n], "image/png")) for i, n in enumerate(emb)])
doc = r.json() if r.status_code == 200 else {}
check(doc.get("object") == "list" and doc.get("model") == "fashion-mnist-gmlp.safetensors" and
      doc.get("usage") == {"prompt_tokens": 8, "total_tokens": 8} and
      [(d["object"], d["index"]) for d in doc["data"]] == [("embedding", i) for i in range(8)] and
      [f32s(d["embedding"]) for d in doc["data"]] == ref8,
      "embeddings, 8 multipart parts: OpenAI's shape, usage counting images, gmlp-classify's float32s bit for bit")
r = requests.post(url + "/v1/embeddings", json={"model": "any", "input": [b64[n] for n in emb],
                                                "encoding_format": "base64"})
got = [base64.b64decode(d["embedding"]) for d in r.json()["data"]] if r.status_code == 200 else []
check(got == ref8, "JSON input, 8 base64 images, encoding_format base64: the same float32s, little-endian")
out = subprocess.run(["curl", "-sS", "--data-binary", "@" + paths[emb[0]], "-H", "Content-Type: image/png",
                      url + "/v1/embeddings"], capture_output=True, text=True)
r = requests.post(url + "/v1/embeddings", json={"input": "data:image/png;base64," + b64[emb[0]]})
check(out.returncode == 0 and f32s(json.loads(out.stdout)["data"][0]["embedding"]) == ref1[0] and
      r.status_code == 200 and f32s(r.json()["data"][0]["embedding"]) == ref1[0],
      "curl, a raw body; JSON input one data: URL: gmlp-classify's floats (-b 1)")
tools_python = os.environ.get("GMLP_TOOLS_PYTHON")
if tools_python and subprocess.run([tools_python, "-c", "import openai"], capture_output=True).returncode == 0:
    code = ("import openai, struct, sys\nc = openai.OpenAI(base_url=sys.argv[1], api_key='none')\n"
            "e = c.embeddings.create(model='m', input=[sys.argv[2]])\n"  # base64 on the wire, decoded by the client
            "sys.stdout.write(struct.pack('<%df' % len(e.data[0].embedding), *e.data[0].embedding).hex())\n")
    out = subprocess.run([tools_python, "-c", code, url + "/v1", b64[emb[0]]], capture_output=True, text=True)
    check(out.returncode == 0 and bytes.fromhex(out.stdout) == ref1[0], "the openai package's embeddings.create")
else:
    print("skip: the openai client for embeddings (the tools Python has no openai package)")
for body, param, what in (({"input": []}, "input", "an empty input array"),
                          ({"input": "iVBOR*w0K"}, "input", "bad base64"),
                          ({"input": [b64[emb[0]], 7]}, "input", "a number in input"),
                          ({"input": base64.b64encode(b"not an image").decode()}, "input", "a non-image"),
                          ({"input": b64[emb[0]], "encoding_format": "int8"}, "encoding_format", "encoding_format int8"),
                          ({"input": b64[emb[0]], "dimensions": 3}, "dimensions", "dimensions 3")):
    r = requests.post(url + "/v1/embeddings", json=body)
    check(r.status_code == 400 and r.json()["error"]["param"] == param, f"embeddings, {what}: 400 naming {param}")
r = requests.post(url + "/v1/embeddings", files=[("a", (emb[0], images[emb[0]])), ("b", ("broken.png", b"\x89PNG"))])
check(r.status_code == 400 and r.json()["error"]["message"].startswith("broken.png: "),
      "embeddings, a broken image among good ones: 400 naming it")
r = requests.post(url + "/v1/embeddings", json={"input": "A" * (1 << 20)})
check(r.status_code == 413, "embeddings, a body over --max-body-mb: 413")
r = requests.post(url + "/v1/embeddings", data="x", headers={"Content-Type": "text/plain"})
check(r.status_code == 415, "embeddings, text/plain: 415")


def mixed(seed):
    """Classify and embeddings requests from one client, alternately: every reply right."""
    rnd, good = random.Random(seed), 0
    for k in range(6):
        pick = [rnd.choice(emb) for _ in range(rnd.randint(1, 3))]
        files = [(f"f{i}", (n, images[n], "image/png")) for i, n in enumerate(pick)]
        if k % 2:
            rows = requests.post(url + "/v1/classify", files=files).json()["results"]
            good += all(same_row(g, want[n]) for g, n in zip(rows, pick))
        else:
            data = requests.post(url + "/v1/embeddings", files=files).json()["data"]
            good += all(max(abs(a - b) for a, b in zip(d["embedding"], struct.unpack("<128f", ref8[emb.index(n)])))
                        <= 1e-5 for d, n in zip(data, pick))
    return good


with concurrent.futures.ThreadPoolExecutor(6) as pool:
    good = sum(pool.map(mixed, range(6)))
check(good == 36, f"6 clients mixing classify and embeddings: every reply right ({good} of 36)")

# --- hostile requests ----------------------------------------------------------------------------
def status_of(reply):
    m = re.match(rb"HTTP/1\.[01] (\d+)", reply)
    return int(m.group(1)) if m else None


head = f"POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\n".encode()
body = images[name]
reply = raw_http(srv.port, head + f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:100], read_timeout=6)
check(reply == b"", "a truncated body: no reply, the connection closed at the idle timeout")
reply = raw_http(srv.port, head + b"Content-Length: 10\r\nConnection: close\r\n\r\n" + body)
check(status_of(reply) == 200 and b'"error"' in reply, "a Content-Length shorter than the body: 200, the image's "
                                                       "error entry (the bytes after it are not an image)")
# libmicrohttpd's own refusals (docs/server.md): its HTML reply, yet counted by route (and in the access log, below)
before = requests.get(url + "/metrics").text
json_post = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
for data, status, what in (
        (b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n", 431, "giant headers"),
        (json_post + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400, "a malformed chunk"),
        (json_post + b"Content-Length: 1x\r\n\r\n{}", 400, "a Content-Length that is not a number"),
        (json_post + b"Content-Length: 99999999999999999999999\r\n\r\n", 413, "a Content-Length over 2^64")):
    reply = raw_http(srv.port, data)
    check(status_of(reply) == status and b"<html>" in reply and b"\r\nConnection: close\r\n" in reply,
          f"{what}: libmicrohttpd's {status}, the connection closed")
after = requests.get(url + "/metrics").text
check(delta("gmlp_requests_total", endpoint="/health", status="431") == 1 and
      delta("gmlp_requests_total", endpoint="/v1/completions", status="400") == 2 and
      delta("gmlp_requests_total", endpoint="/v1/completions", status="413") == 1,
      "libmicrohttpd's refusals: counted in gmlp_requests_total by route")
r = requests.post(url + "/v1/classify", data=body, headers={"Content-Type": "multipart/form-data"})
check(r.status_code == 400 and r.json()["error"]["param"] == "Content-Type", "multipart without a boundary: 400")
r = requests.post(url + "/v1/classify", data=b"--other\r\n" + body,
                  headers={"Content-Type": "multipart/form-data; boundary=zzz"})
check(r.status_code == 400, "multipart with a boundary that never comes: 400")


def form(boundary, *parts, preamble=b""):
    """A multipart/form-data body of (disposition parameters, bytes) parts."""
    b = boundary.encode()
    return preamble + b"".join(b"--" + b + b"\r\nContent-Disposition: form-data; " + d + b"\r\n\r\n" + data + b"\r\n"
                               for d, data in parts) + b"--" + b + b"--\r\n"


data = form("x", (f'name="a"; filename="{name}"'.encode(), body), (b'name="f"', b"a\r\n--xy, not a delimiter"),
            preamble=b"ignored\r\n")
r = requests.post(url + "/v1/classify", data=data, headers={"Content-Type": "multipart/form-data; boundary=x"})
rows = r.json()["results"] if r.status_code == 200 else []
check(len(rows) == 2 and same_row(rows[0], want[name]) and rows[1]["file"] == "f" and "error" in rows[1],
      "multipart, a 1-character boundary (RFC 2046: 1 to 70), a preamble, '--x' inside a part: two rows")
r = requests.post(url + "/v1/classify", data=form("a b", (f'filename="{name}"'.encode(), body)),
                  headers={"Content-Type": 'multipart/form-data; boundary="a b"; charset=utf-8'})
check(r.status_code == 200 and same_row(r.json()["results"][0], want[name]),
      "multipart, a quoted boundary followed by another parameter: the row")
r = requests.post(url + "/v1/classify", data=b"", headers={"Content-Type": "multipart/form-data; boundary=" + "b" * 71})
check(r.status_code == 400 and r.json()["error"]["param"] == "Content-Type", "multipart, a 71-character boundary: 400")
r = requests.post(url + "/v1/classify", files=[("a", (name, body)), ("b", ("broken.png", body[:300])),
                                               ("c", ("coat-6.png", images["coat-6.png"]))])
rows = r.json()["results"] if r.status_code == 200 else []
check(len(rows) == 3 and same_row(rows[0], want[name]) and "error" in rows[1] and rows[1]["file"] == "broken.png" and
      same_row(rows[2], want["coat-6.png"]), "a broken image among good ones: its error entry, the others' rows")
r = requests.post(url + "/v1/classify?top=-1", data=body, headers={"Content-Type": "image/png"})
check(r.status_code == 400 and r.json()["error"]["param"] == "top", "a negative top: 400 naming top")
r = requests.post(url + "/v1/classify", data=b"x" * (1 << 20 | 1), headers={"Content-Type": "image/png"})
check(r.status_code == 413, "a body over --max-body-mb: 413")
r = requests.post(url + "/v1/classify", data={"a": "1"})
check(r.status_code == 415, "a form body: 415")
r = requests.post(url + "/v1/classify", json={"a": 1})
check(r.status_code == 415 and "takes an image (image/*, application/octet-stream) or multipart/form-data, not "
      "application/json" in r.json()["error"]["message"], "JSON to /v1/classify: 415 naming the types it takes")
r = requests.get(url + "/v1/nothing")
check(r.status_code == 404 and r.json()["error"]["message"] == "no endpoint /v1/nothing (POST /v1/classify, "
      "/v1/embeddings, /v1/completions, /v1/chat/completions; GET /v1/models, /health, /metrics)", "an unknown path: 404 listing the routes")
r = requests.post(url + "/v1/completions", data=b'{"prompt": "a\xff"}', headers={"Content-Type": "application/json"})
check(r.status_code == 400 and r.json()["error"]["param"] == "body", "invalid UTF-8 in the prompt: 400")
r = requests.post(url + "/v1/completions", json={"prompt": "a", "max_tokens": 10**9})
check(r.status_code == 400 and r.json()["error"]["param"] == "max_tokens", "max_tokens 10^9: 400 naming max_tokens")
r = requests.post(url + "/v1/completions", json={"max_tokens": 4})
check(r.status_code == 400 and r.json()["error"]["param"] == "prompt", "no prompt: 400 naming prompt")
r = requests.post(url + "/v1/completions", json={"prompt": "a", "temperature": "hot"})
check(r.status_code == 400 and r.json()["error"]["param"] == "temperature", "a string temperature: 400")
r = requests.post(url + "/v1/completions", json={"prompt": "a", "temperature": 1e7})
check(r.status_code == 400 and "to 1e6" in r.json()["error"]["message"], "temperature 1e7: 400 stating the range")

# request smuggling: a body whose end is ambiguous is refused, the connection closed, what follows never served
doc = b'{"prompt": "a", "max_tokens": 1}'
hidden = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(doc), doc)
for framing, payload, status, what in (
        (b"Content-Length: %d\r\nContent-Length: %d\r\n" % (len(doc), len(doc) + len(hidden)), doc, 400,
         "two Content-Lengths that differ"),
        (b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", chunked, 400, "Content-Length and Transfer-Encoding"),
        (b"Transfer-Encoding: gzip\r\n", doc, 501, "Transfer-Encoding gzip"),
        (b"Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n", chunked, 501, "two Transfer-Encodings")):
    t0 = time.time()
    reply = raw_http(srv.port, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
                     framing + b"\r\n" + payload + hidden, read_timeout=5)
    check(status_of(reply) == status and reply.count(b"HTTP/1.1 ") == 1 and b"\r\nConnection: close\r\n" in reply and
          b'"error"' in reply and time.time() - t0 < 4, f"{what}: {status} once, the connection closed")

# HEAD wherever GET goes: GET's status and headers, no body
for path in ("/health", "/v1/models", "/metrics"):
    got, head_reply = requests.get(url + path), requests.head(url + path)
    check(head_reply.status_code == got.status_code == 200 and
          head_reply.headers.get("Content-Type") == got.headers.get("Content-Type"), f"HEAD {path}: GET's status, type")
reply = raw_http(srv.port, b"HEAD /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check(status_of(reply) == 200 and reply.endswith(b"\r\n\r\n"), "HEAD: no body")
r = requests.post(url + "/health")
check(r.status_code == 405 and r.headers.get("Allow") == "GET, HEAD", "POST /health: 405, Allow: GET, HEAD")
reply = raw_http(srv.port, b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
check(status_of(reply) == 200, "a GET with a body: the body dropped, 200")

# slow-loris: headers a byte every 0.2 s, never idle as long as the timeout (2 s), never finished
loris = socket.create_connection(("127.0.0.1", srv.port))
loris.sendall(b"GET /health HTTP/1.1\r\n")
r = requests.get(url + "/health", timeout=10)
check(r.status_code == 200, "a slow client does not block the others")
t0, dropped = time.time(), False
while not dropped and time.time() - t0 < 8:
    try:
        loris.sendall(b"X-Slow: 1\r\n"[int((time.time() - t0) * 5) % 11:][:1])
        time.sleep(0.2)
    except OSError:
        dropped = True
check(dropped and time.time() - t0 < 6, f"a slow client is dropped at --timeout-s however it trickles "
                                        f"({time.time() - t0:.1f} s)")
loris.close()
r = requests.post(url + "/v1/classify", data=body, headers={"Content-Type": "image/png"})
check(r.status_code == 200 and same_row(r.json()["results"][0], dict(want[name], file="-")),
      "after all that the server still serves")

# --- completions -------------------------------------------------------------------------------
opts = {"prompt": "The cat ", "max_tokens": 48, "seed": 7, "temperature": 0.9, "top_k": 20, "top_p": 0.9}
ref = subprocess.run([generate_bin, "-q", "--json", "-m", lm_path, "-n", "48", "-s", "7", "--temp", "0.9",
                      "--top-k", "20", "--top-p", "0.9", "-p", "The cat "], capture_output=True, text=True)
want_text = json.loads(ref.stdout)["text"] if ref.returncode == 0 else None
r = requests.post(url + "/v1/completions", json=opts)
doc = r.json() if r.status_code == 200 else {}
check(doc.get("choices", [{}])[0].get("text") == want_text and doc["choices"][0]["finish_reason"] == "length" and
      doc["usage"] == {"prompt_tokens": 8, "completion_tokens": 48, "total_tokens": 56},
      "a completion: gmlp-generate's text for the same seed and options, its usage")
r = requests.post(url + "/v1/completions", json=dict(opts, stream=True), stream=True)
events = [line[6:] for line in r.iter_lines(decode_unicode=False) if line.startswith(b"data: ")]
chunks = [json.loads(e) for e in events[:-1]]
check(r.headers.get("Content-Type") == "text/event-stream" and events[-1] == b"[DONE]" and len(chunks) > 2 and
      "".join(c["choices"][0]["text"] for c in chunks) == want_text and
      chunks[-1]["choices"][0]["finish_reason"] == "length", "streamed: data: chunks, then [DONE], the same text")
cut = want_text[10:13] if want_text else "x"
r = requests.post(url + "/v1/completions", json=dict(opts, stop=[cut]))
text = r.json()["choices"][0]["text"] if r.status_code == 200 else None
check(text == want_text[:want_text.index(cut)] and r.json()["choices"][0]["finish_reason"] == "stop",
      "stop: the text ends before the stop sequence, finish_reason stop")
r = requests.post(url + "/v1/completions", json=dict(opts, stop=[cut], stream=True), stream=True)
chunks = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith(b"data: {")]
check("".join(c["choices"][0]["text"] for c in chunks) == text and chunks[-1]["choices"][0]["finish_reason"] == "stop",
      "stop, streamed: the same text, no piece of the stop sequence sent")
r = requests.post(url + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "Hi"}],
                                                      "max_tokens": 8, "seed": 1, "stream": True}, stream=True)
events = [line[6:] for line in r.iter_lines() if line.startswith(b"data: ")]
check(r.status_code == 200 and events[-1] == b"[DONE]" and
      json.loads(events[0])["choices"][0]["delta"]["role"] == "assistant", "chat completions stream deltas")
# a client that leaves mid-stream stops its generation: the tokens counted stay far below max_tokens
tokens_before = metric(requests.get(url + "/metrics").text, "gmlp_tokens_total")
s = socket.create_connection(("127.0.0.1", srv.port))
req = json.dumps({"prompt": "A", "max_tokens": 4000, "seed": 3, "stream": True}).encode()
s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
          str(len(req)).encode() + b"\r\n\r\n" + req)
s.recv(4096)
s.close()
for _ in range(100):  # counted once the generation ended
    tokens = metric(requests.get(url + "/metrics").text, "gmlp_tokens_total") - tokens_before
    if tokens:
        break
    time.sleep(0.1)
check(0 < tokens < 4000, f"a client that disconnects stops its generation ({int(tokens)} of 4000 tokens)")
tools_python = os.environ.get("GMLP_TOOLS_PYTHON")
if tools_python and subprocess.run([tools_python, "-c", "import openai"], capture_output=True).returncode == 0:
    code = ("import openai, sys\nc = openai.OpenAI(base_url=sys.argv[1], api_key='none')\n"
            "s = c.completions.create(model='lm', prompt='The cat ', max_tokens=48, seed=7, temperature=0.9,"
            " top_p=0.9, extra_body={'top_k': 20}, stream=True)\n"
            "sys.stdout.write(''.join(e.choices[0].text for e in s))\n")
    out = subprocess.run([tools_python, "-c", code, url + "/v1"], capture_output=True, text=True)
    check(out.returncode == 0 and out.stdout == want_text, "the openai package streams the same text")
else:
    print("skip: the openai client (the tools Python, GMLP_TOOLS_PYTHON, has no openai package)")

# --- metrics' statuses, then SIGTERM ---------------------------------------------------------------
m = requests.get(url + "/metrics").text
check(metric(m, "gmlp_requests_total", endpoint="/v1/classify", status="400") >= 3 and
      metric(m, "gmlp_requests_total", endpoint="/v1/classify", status="413") == 1 and
      metric(m, "gmlp_requests_total", endpoint="other", status="404") >= 1 and
      metric(m, "gmlp_requests_total", endpoint="/v1/embeddings", status="400") == 7 and
      metric(m, "gmlp_requests_total", endpoint="/v1/embeddings", status="200") >= 22,
      "metrics count the refusals by status, an unknown path's as endpoint \"other\"")
# SIGTERM while a completion streams: it ends whole, then the server exits 0
r = requests.post(url + "/v1/completions", json={"prompt": "A", "max_tokens": 600, "seed": 4, "stream": True},
                  stream=True)
lines = r.iter_lines()
next(lines)
srv.proc.send_signal(signal.SIGTERM)
refused, t0 = False, time.time()
while not refused and srv.proc.poll() is None and time.time() - t0 < 3:
    try:
        socket.create_connection(("127.0.0.1", srv.port), timeout=1).close()
        time.sleep(0.05)
    except (ConnectionRefusedError, ConnectionResetError):  # reset: accepted into the backlog as the listener closed
        refused = srv.proc.poll() is None
check(refused and time.time() - t0 < 1, f"SIGTERM: a new connection is refused at once while the requests in flight "
                                        f"finish ({time.time() - t0:.2f} s)")
events = [line[6:] for line in lines if line.startswith(b"data: ")]
check(events[-1] == b"[DONE]" and json.loads(events[-2])["usage"]["completion_tokens"] == 600,
      "SIGTERM: the completion in flight streams to its end")
check(srv.exit_status() == 0, "SIGTERM: exit 0")
check(any(re.match(r"gmlp-server: POST /v1/classify 200 ", l) for l in srv.log), "-v: an access log line per request")
check(any(re.match(r"gmlp-server: \? /health 431 .*\(libmicrohttpd's reply\)", l) for l in srv.log),
      "-v: libmicrohttpd's own refusals in the access log")

# --- a stream that waits in the queue longer than the idle timeout: kept open by comments -------------
srv = Server("--lm", lm_path, "--parallel", "1", "--timeout-s", "1", "-q")
srv.wait_ready() or sys.exit(f"test_server: the server failed: {''.join(srv.log)}")
with concurrent.futures.ThreadPoolExecutor(1) as pool:
    blocker = pool.submit(requests.post, srv.url + "/v1/completions", json={"prompt": "A", "max_tokens": 600})
    time.sleep(0.3)
    r = requests.post(srv.url + "/v1/completions", json=dict(opts, stream=True), stream=True)
    lines = list(r.iter_lines())
    check(blocker.result().status_code == 200, "--parallel 1: the first completion done")
events = [line[6:] for line in lines if line.startswith(b"data: ")]
text = "".join(json.loads(e)["choices"][0]["text"] for e in events[:-1])
check(events[-1:] == [b"[DONE]"] and text == want_text,
      f"a stream queued behind another outlives --timeout-s 1 whole "
      f"({sum(line.startswith(b':') for line in lines)} keep-alive comments)")
check(srv.stop() == 0, "SIGTERM: exit 0")

# --- a model without a classifier head: embeddings served, classify refused -----------------------------
headless = os.path.join(src, "tests", "data", "e2e", "gmlp_headless.safetensors")
srv = Server("-m", headless, "-q")
srv.wait_ready() or sys.exit(f"test_server: the server failed: {''.join(srv.log)}")
href = features_of(1, "-m", headless)
r = requests.post(srv.url + "/v1/embeddings", data=images[emb[0]], headers={"Content-Type": "image/png"})
check(r.status_code == 200 and f32s(r.json()["data"][0]["embedding"]) == href[0],
      "a headless model: its embeddings, gmlp-classify --features' floats")
r = requests.post(srv.url + "/v1/classify", data=images[emb[0]], headers={"Content-Type": "image/png"})
check(r.status_code == 400 and "/v1/embeddings" in r.json()["error"]["message"], "a headless model: classify 400")
check(requests.get(srv.url + "/v1/models").json()["data"][0]["kind"] == "feature-extractor",
      "a headless model: /v1/models says feature-extractor")
check(srv.stop() == 0, "SIGTERM: exit 0")

# --- TLS (--tls-cert, --tls-key): curl and Python's ssl against certificates made here ------------------
def openssl_cert(name, cn="localhost"):
    """A self-signed EC certificate for 127.0.0.1 and localhost: (cert, key) paths."""
    cert, key = os.path.join(tmp, name + ".pem"), os.path.join(tmp, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=" + cn,
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], check=True, capture_output=True)
    return cert, key


def handshake(cafile, hostname="127.0.0.1"):
    """A TLS handshake and GET /v1/models with Python's ssl: (status line, TLS version), or the ssl error."""
    ctx = ssl.create_default_context(cafile=cafile)
    try:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as raw, \
                ctx.wrap_socket(raw, server_hostname=hostname) as t:
            t.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return t.recv(4096).split(b"\r\n")[0], t.version()
    except ssl.SSLError as e:
        return e


def closed_by_server(data):
    """Sends data, reads until the server closes (True) or 20 s pass (False): (what came back, closed)."""
    with socket.create_connection(("127.0.0.1", srv.port)) as s:
        s.settimeout(20)
        s.sendall(data)
        out = b""
        try:
            while True:
                got = s.recv(65536)
                if not got:
                    return out, True
                out += got
        except ConnectionResetError:
            return out, True
        except socket.timeout:
            return out, False


cert, key = openssl_cert("server")
other, other_key = openssl_cert("other")
usage = subprocess.run([server_bin, "--tls-cert", cert], capture_output=True, text=True)
check(usage.returncode == 2 and "--tls-cert needs --tls-key" in usage.stderr, "--tls-cert alone: usage error 2")
mismatch = subprocess.run([server_bin, "--port", "0", "--tls-cert", cert, "--tls-key", other_key], capture_output=True,
                          text=True, timeout=60)
if "built without TLS" in mismatch.stderr:  # a libmicrohttpd without GnuTLS: the options refused, saying so
    check(mismatch.returncode == 1, "--tls-cert: this libmicrohttpd has no TLS: refused, exit 1")
else:
    check(mismatch.returncode == 1 and "do not match" in mismatch.stderr,
          "a key that is not the certificate's: exit 1, GnuTLS' reason on stderr")
    srv = Server("--tls-cert", cert, "--tls-key", key, "--timeout-s", "1", "-q", verify=cert)
    srv.wait_ready() or sys.exit(f"test_server: the TLS server failed: {''.join(srv.log)}")
    check(srv.url.startswith("https://"), "--tls-cert: the server listens on https://")
    out = subprocess.run(["curl", "-sS", "--cacert", cert, "--data-binary", "@" + os.path.join(examples, name), "-H",
                          "Content-Type: image/png", srv.url + "/v1/classify"], capture_output=True, text=True)
    check(out.returncode == 0 and same_row(json.loads(out.stdout)["results"][0], dict(want[name], file="-")),
          "TLS: curl --cacert classifies, gmlp-classify's row")
    out = subprocess.run(["curl", "-sS", "--cacert", other, srv.url + "/health"], capture_output=True, text=True)
    check(out.returncode == 60, "TLS: curl refuses a certificate its CA file did not sign (exit 60)")
    got = handshake(cert)
    check(not isinstance(got, Exception) and got[0] == b"HTTP/1.1 200 OK" and got[1] in ("TLSv1.2", "TLSv1.3"),
          f"TLS: Python's ssl verifies the certificate, GET /v1/models 200 ({got})")
    check(isinstance(handshake(other), ssl.SSLCertVerificationError), "TLS: Python's ssl refuses the wrong certificate")
    check(isinstance(handshake(cert, "example.org"), ssl.SSLCertVerificationError),
          "TLS: Python's ssl refuses the certificate for another host name")
    reply, closed = closed_by_server(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    check(closed and not reply.startswith(b"HTTP/"), "plain HTTP to the TLS port: no HTTP reply, the connection closed")
    # a handshake cut short: half a ClientHello, then the client leaves, or stays silent (the header deadline, 1 s)
    bio_in, bio_out = ssl.MemoryBIO(), ssl.MemoryBIO()
    hello = ssl.create_default_context(cafile=cert).wrap_bio(bio_in, bio_out, server_hostname="127.0.0.1")
    try:
        hello.do_handshake()
    except ssl.SSLWantReadError:
        pass
    hello = bio_out.read()
    with socket.create_connection(("127.0.0.1", srv.port)) as s:
        s.sendall(hello[:len(hello) // 2])
    reply, closed = closed_by_server(hello[:len(hello) // 2])
    check(len(hello) > 100 and closed and not reply.startswith(b"HTTP/"),
          "a handshake cut short, or left unfinished: the connection closed")
    got = handshake(cert)
    check(srv.proc.poll() is None and not isinstance(got, Exception) and got[0] == b"HTTP/1.1 200 OK",
          "TLS: still serving after the broken handshakes")
    check(srv.stop() == 0, "SIGTERM: exit 0")

# --- the API key -------------------------------------------------------------------------------------
srv = Server("--api-key", "s3cret", "-q", "--queue", "2", "--batch", "64", "--max-delay-ms", "1500",
             "--max-connections", "8")
srv.wait_ready()
r = requests.post(srv.url + "/v1/classify", data=body, headers={"Content-Type": "image/png"})
check(r.status_code == 401, "--api-key: no key, 401")
r = requests.post(srv.url + "/v1/classify", data=body, headers={"Content-Type": "image/png",
                                                                   "Authorization": "Bearer wrong"})
check(r.status_code == 401, "--api-key: a wrong key, 401")
r = requests.post(srv.url + "/v1/classify", data=body, headers={"Content-Type": "image/png",
                                                                   "Authorization": "Bearer s3cret"})
check(r.status_code == 200, "--api-key: the key, 200")
r = requests.post(srv.url + "/v1/completions", json={"prompt": "a"}, headers={"Authorization": "Bearer s3cret"})
check(r.status_code == 404, "no --lm: completions are 404")
post = lambda _: requests.post(srv.url + "/v1/classify", data=body, headers={"Content-Type": "image/png",
                                                                            "Authorization": "Bearer s3cret"})
with concurrent.futures.ThreadPoolExecutor(6) as pool:
    replies = list(pool.map(post, range(6)))
busy = [r for r in replies if r.status_code == 503]
check(busy and all(r.headers.get("Retry-After") for r in busy) and
      all(r.status_code in (200, 503) for r in replies), f"a full queue (--queue 2): 503 with Retry-After "
                                                         f"({len(busy)} of 6)")
idle = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(8)]
time.sleep(0.3)
with concurrent.futures.ThreadPoolExecutor(1) as pool:
    ninth = pool.submit(requests.get, srv.url + "/health", timeout=20)
    time.sleep(1)
    waited = not ninth.done()
    for sock in idle:
        sock.close()
    check(waited and ninth.result().status_code == 200,
          "--max-connections 8: a ninth connection waits until one of them closes, then is served")
check(srv.stop() == 0, "SIGTERM: exit 0")

# --- a device failing mid-batch: its requests answered from another device, or 503 when none is left -----
srv = Server("-d", "0,1", "--batch", "2", "--max-delay-ms", "0", "-q",
             env={"POCL_DEVICES": "pthread basic", "GMLP_TEST_FAIL": "1:1"})
if srv.wait_ready():
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        done = list(pool.map(lambda c: client(srv.url, c, 4), range(8)))
    check(sum(g for g, _ in done) == 32, "a device failing mid-batch: every request answered right by the other")
    check(any("failed: injected failure" in l for l in srv.log), "the failure is reported")
    check(srv.stop() == 0, "SIGTERM: exit 0")
else:
    srv.exit_status()
    why = next((line.strip() for line in reversed(srv.log) if "device" in line), "")
    print(f'skip: two devices (POCL_DEVICES="pthread basic" gives fewer: {why})')
srv = Server("--batch", "2", "-q", env={"GMLP_TEST_FAIL": "0:1"})
srv.wait_ready() or sys.exit(f"test_server: the server failed: {''.join(srv.log)}")
r = requests.post(srv.url + "/v1/classify", data=body, headers={"Content-Type": "image/png"})
check(r.status_code == 503 and r.headers.get("Retry-After"), "the only device failing: 503 with Retry-After")
check(requests.get(srv.url + "/health").status_code == 503, "then /health says 503")
check(srv.stop() == 0, "SIGTERM: exit 0")

print(f"{failures} failed")
sys.exit(1 if failures else 0)
