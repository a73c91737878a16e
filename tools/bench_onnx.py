#!/usr/bin/env python3
"""The CPU anchors of gmlp-bench: an ONNX model (tools/export_onnx.py) timed on
ONNX Runtime and OpenVINO from PyPI, as someone running these models on a CPU
in C or C++ would, with a fixed number of threads; rows in gmlp-bench's JSON
schema (device, model, batch, median_s, images_per_s, precision, engine).

    bench_onnx.py --onnx DIR --models NAME,... --batch 1,8 --engine ENGINE,...
                  [--threads 2] [--runs 10] [--warmup 3] --json OUT

ENGINE: ort (ONNX Runtime, every graph optimisation, fp32), ov-fp32 (OpenVINO
with INFERENCE_PRECISION_HINT f32), ov-default (OpenVINO's own choice: bf16
on a CPU with AVX512_BF16 or AMX, else f32; the row says which).  Each
timed run is one synchronous inference of the whole batch; the median of
--runs after --warmup untimed ones."""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return (lambda x: s.run(None, {"images": x})), "fp32", f"onnxruntime {ort.__version__}", s.get_inputs()[0].shape


def ov_session(path, threads, hint):
    import openvino as ov
    core = ov.Core()
    config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY"}
    if hint:
        config["INFERENCE_PRECISION_HINT"] = hint
    model = core.read_model(path)
    shape = [d.get_length() if d.is_static else None for d in model.inputs[0].get_partial_shape()]
    compiled = core.compile_model(model, "CPU", config)
    request = compiled.create_infer_request()
    chosen = compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()  # f32, bf16, f16
    precision = {"f32": "fp32", "bf16": "bf16", "f16": "fp16"}.get(chosen, chosen)
    return (lambda x: request.infer({0: x})), precision, f"openvino {ov.__version__.split('-')[0]}", shape


def session(engine, path, threads):
    if engine == "ort":
        return ort_session(path, threads)
    if engine in ("ov-fp32", "ov-default"):
        return ov_session(path, threads, "f32" if engine == "ov-fp32" else None)
    sys.exit(f"bench_onnx.py: unknown engine {engine!r}: ort, ov-fp32 or ov-default")


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--onnx", required=True, help="the folder of NAME.onnx files")
    ap.add_argument("--models", required=True)
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--engine", default="ort,ov-fp32,ov-default")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json", required=True)
    args = ap.parse_args()
    rows = []
    for engine in args.engine.split(","):
        for name in args.models.split(","):
            path = os.path.join(args.onnx, f"{name}.onnx")
            run, precision, version, shape = session(engine, path, args.threads)
            for batch in [int(b) for b in args.batch.split(",")]:
                # the file's (C, H, W); its batch axis is dynamic
                x = np.random.default_rng(0).standard_normal((batch, *shape[1:]), dtype=np.float32)
                for _ in range(args.warmup):
                    run(x)
                times = []
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    run(x)
                    times.append(time.perf_counter() - t0)
                med = statistics.median(times)
                rows.append({"device": cpu_name(), "engine": engine, "version": version, "model": name,
                             "batch": batch, "median_s": med, "spread_s": max(times) - min(times),
                             "images_per_s": batch / med, "precision": precision, "threads": args.threads})
                print(f"{engine:10s} {name:16s} {batch:4d} {med * 1e3:10.2f} ms {batch / med:9.1f} images/s "
                      f"({precision}, {version})", file=sys.stderr, flush=True)
    with open(args.json, "w") as f:
        json.dump({"tool": "bench_onnx", "results": rows}, f, indent=2)


if __name__ == "__main__":
    main()
