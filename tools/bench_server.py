#!/usr/bin/env python3
"""gmlp-server against one gmlp-classify process per image: requests/s and
p50/p99 latency at each concurrency, one image per request, the example
images in turn.  Prints a markdown table (README's "Server" section).
  tools/bench_server.py BUILD_DIR [--concurrency 1,8,32] [--requests N] [--cli-requests N] [-- SERVER OPTIONS]
The server is started on a free port with the bundled model and the options
after --; GMLP_DEVICE and the other variables reach both programs."""
import argparse
import concurrent.futures
import os
import statistics
import subprocess
import threading
import time

import requests

import server_start

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--concurrency", default="1,8,32")
ap.add_argument("--requests", type=int, default=400, help="server requests per concurrency")
ap.add_argument("--cli-requests", type=int, default=32, help="gmlp-classify runs per concurrency")
ap.add_argument("server_args", nargs="*")
a = ap.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
examples = sorted(os.path.join(root, "examples", f) for f in os.listdir(os.path.join(root, "examples"))
                  if f.endswith(".png"))
bodies = [open(f, "rb").read() for f in examples]
levels = [int(c) for c in a.concurrency.split(",")]


def measure(job, n, concurrency):
    """(requests/s, p50 ms, p99 ms) of n calls of job(i) with concurrency workers."""
    def timed(i):
        t = time.perf_counter()
        job(i)
        return time.perf_counter() - t
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        lat = sorted(pool.map(timed, range(n)))
    wall = time.perf_counter() - t0
    return n / wall, 1e3 * statistics.median(lat), 1e3 * lat[min(n - 1, int(0.99 * n))]


proc, port, _ = server_start.start(os.path.join(a.build, "apps", "gmlp-server"), a.server_args)
url = f"http://127.0.0.1:{port}"
local = threading.local()


def server_job(i):
    if not hasattr(local, "session"):  # one connection per client thread, kept alive
        local.session = requests.Session()
    r = local.session.post(url + "/v1/classify", data=bodies[i % len(bodies)], headers={"Content-Type": "image/png"})
    r.raise_for_status()


def cli_job(i):
    subprocess.run([os.path.join(a.build, "apps", "gmlp-classify"), "-q", "--json", examples[i % len(examples)]],
                   check=True, capture_output=True)


cli_job(0)  # warm: the kernels built and cached
rows = []
for c in levels:
    measure(server_job, 8 * c, c)  # warm: PoCL specialises kernels for the batch sizes this concurrency makes
    s = measure(server_job, a.requests, c)
    k = measure(cli_job, a.cli_requests, c)
    rows.append((c, s, k))
proc.terminate()
proc.wait()
print("| concurrency | server req/s | p50 ms | p99 ms | CLI req/s | p50 ms | p99 ms | req/s ratio |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
for c, s, k in rows:
    print(f"| {c} | {s[0]:.1f} | {s[1]:.1f} | {s[2]:.1f} | {k[0]:.2f} | {k[1]:.0f} | {k[2]:.0f} | {s[0] / k[0]:.0f}x |")
