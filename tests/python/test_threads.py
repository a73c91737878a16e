"""Threads: one model shared by threads and a model per thread give the single-threaded results;
each thread gets its own error message; the GIL is released while the library works; a model
is freed by garbage collection."""
from __future__ import annotations

import gc
import threading
import time
import weakref

import numpy as np
import pytest

import gmlp
from conftest import DATA, needs_device, read_safetensors

pytestmark = needs_device
RGB = DATA / "e2e" / "gmlp_rgb.safetensors"
LM = DATA / "lm" / "causal.safetensors"
THREADS = 4


def run_threads(fn, n: int = THREADS) -> list:
    """fn(i) on n threads at once; their results (or raises the first exception)."""
    results: list = [None] * n
    start = threading.Barrier(n)

    def body(i: int) -> None:
        start.wait()
        try:
            results[i] = fn(i)
        except BaseException as e:  # checked below, in the main thread
            results[i] = e

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


def test_shared_and_own_models() -> None:
    images = read_safetensors(DATA / "e2e" / "gmlp_rgb.ref.safetensors")["images"]
    with gmlp.load(RGB) as m, gmlp.load(LM) as lm:
        want = [m.classify(images[i % len(images)]) for i in range(THREADS)]
        want_text = [lm.generate(b"ab", max_tokens=20, seed=i) for i in range(THREADS)]
        for _ in range(3):
            got = run_threads(lambda i: m.classify(images[i % len(images)]))
            assert all(np.array_equal(g, w) for g, w in zip(got, want))
            assert run_threads(lambda i: lm.generate(b"ab", max_tokens=20, seed=i)) == want_text
        own = run_threads(lambda i: gmlp.load(RGB))
        try:
            got = run_threads(lambda i: own[i].classify(images[i % len(images)]))
            assert all(np.array_equal(g, w) for g, w in zip(got, want))
        finally:
            for o in own:
                o.close()


def test_errors_stay_with_their_thread() -> None:
    """Bad tokens on even threads, good calls on odd ones, on one model: each failure carries
    its own message."""
    with gmlp.load(LM) as lm:
        def call(i: int) -> str:
            for _ in range(20):
                if i % 2:
                    lm.lm_logits([[1, 2, 3]])
                else:
                    with pytest.raises(gmlp.Error) as e:
                        lm.lm_logits([[1, 256 + i]])
                    assert str(256 + i) in str(e.value), str(e.value)
            return "ok"

        assert run_threads(call) == ["ok"] * THREADS


def test_gil_released_during_device_work() -> None:
    """While one thread classifies a large batch, the main thread keeps running Python: the
    longest pause it sees is a small part of the call's time (with the GIL held it would be all)."""
    images = read_safetensors(DATA / "e2e" / "gmlp_rgb.ref.safetensors")["images"]
    with gmlp.load(RGB) as m:
        batch = images
        while True:  # a batch that takes at least 0.3 s
            t0 = time.perf_counter()
            m.classify(batch)
            took = time.perf_counter() - t0
            if took >= 0.3:
                break
            batch = np.concatenate([batch] * max(2, int(0.6 / took)))
        done = threading.Event()
        spent = []

        def work() -> None:
            t = time.perf_counter()
            m.classify(batch)
            spent.append(time.perf_counter() - t)
            done.set()

        worker = threading.Thread(target=work)
        last, longest = time.perf_counter(), 0.0
        worker.start()
        while not done.is_set():
            now = time.perf_counter()
            longest, last = max(longest, now - last), now
        worker.join()
    assert longest < spent[0] / 2, (longest, spent[0])


def test_freed_by_garbage_collection() -> None:
    m = gmlp.load(RGB)
    finalizer = m._finalizer
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is None and not finalizer.alive
