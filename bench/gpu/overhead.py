#!/usr/bin/env python3
"""Tuning overhead on a GPU (issue #4): tunes examples/cuda/sgemm (244 valid
configs on an H200) from scratch and splits the wall time.

  python3 bench/gpu/overhead.py --tunekit build/bin/tunekit [--spec ...] [--out DIR]

overhead per config = (wall time - kernel time) / configs, where kernel time
is what the GPU spent running the tuned kernels (warm-up, verification and
timed samples; the L2 flushes are not counted). The goal is <= 0.05 s per
config with the GPU busy >= 70% of the wall time. No peer runs here: the
wall against @triton.autotune on the same configs, in the same run, is
bench/triton/autotune_fault.py's (a per-config figure of another kernel,
recorded elsewhere, would not be a same-run ratio).
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from gpu_python import add_tunekit_argument, require_tunekit  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    add_tunekit_argument(ap)
    ap.add_argument("--spec", default=os.path.join(ROOT, "examples", "cuda", "sgemm", "sgemm.yaml"))
    ap.add_argument("--out", default="/tmp/tunekit-bench-overhead")
    ap.add_argument("--summary", help="write the figures as JSON here")
    a = ap.parse_args()
    require_tunekit(a.tunekit)
    cmd = [a.tunekit, "tune", a.spec, "--fresh", "--no-progress", "-o", a.out]
    print("$", " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    outer = time.monotonic() - t0
    tail = p.stdout.strip().splitlines()[-6:]
    print("\n".join(tail))
    if p.returncode != 0:
        print(p.stderr[-3000:], file=sys.stderr)
        sys.exit(p.returncode)
    name = os.path.splitext(os.path.basename(a.spec))[0]
    with open(os.path.join(a.out, name + ".json")) as f:
        rep = json.load(f)
    trials = [t for s in rep["sizes"] for t in s["trials"]]
    n = len(trials)
    statuses = collections.Counter(t["status"] for t in trials)
    wall, busy = rep["wall_s"], rep["device_busy_s"]
    per_config = (wall - busy) / n
    best = min((t for t in trials if t["status"] == "ok"), key=lambda t: t["time_us"])
    size = rep["sizes"][0]["size"]
    flops = 2.0 * size["M"] * size["N"] * size["K"]
    summary = {
        "configs": n, "statuses": dict(statuses), "wall_s": wall, "process_s": outer,
        "build_s": rep["build_s"], "build_wait_s": rep["build_wait_s"], "measure_s": rep["measure_s"],
        "kernel_s": busy, "gpu_busy": busy / wall, "overhead_per_config_s": per_config,
        "wall_per_config_s": wall / n,
        "best": best["config"], "best_us": best["time_us"], "best_tflops": flops / best["time_us"] / 1e6,
    }
    if a.summary:
        with open(a.summary, "w") as f:
            json.dump(summary, f, indent=2)
    print()
    print("| configs | wall s | compile s (waited) | measure s | kernels s | GPU busy | overhead/config | best |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {n} ({', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))}) | {wall:.1f} | "
          f"{rep['build_s']:.1f} ({rep['build_wait_s']:.1f}) | {rep['measure_s']:.1f} | {busy:.1f} | "
          f"{100 * busy / wall:.0f}% | {per_config * 1000:.1f} ms | {best['time_us']:.0f} us, "
          f"{summary['best_tflops']:.1f} TFLOP/s |")


if __name__ == "__main__":
    main()
