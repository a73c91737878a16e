"""gmlp-server started for the tools that drive it (bench_server.py, soak_server.py)."""
import collections
import re
import subprocess
import threading
import time

import requests


def start(server, args, keep=0):
    """Starts SERVER (its path) on a free port with ARGS and waits until /health says 200.
    Returns (the process, its port, a deque of its last KEEP stderr lines, which a thread keeps
    reading so that the pipe never fills); exits with a message if it stops before listening."""
    proc = subprocess.Popen([server, "--port", "0", "-q", *args], stderr=subprocess.PIPE, text=True,
                            errors="replace")
    port = None
    for line in proc.stderr:
        m = re.search(r"listening on http://[^ ]*:(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    if port is None:
        raise SystemExit(f"{server}: exited ({proc.wait()}) without listening")
    tail = collections.deque(maxlen=keep)
    threading.Thread(target=lambda: [tail.append(line) for line in proc.stderr], daemon=True).start()
    while requests.get(f"http://127.0.0.1:{port}/health").status_code != 200:
        time.sleep(0.1)
    return proc, port, tail
