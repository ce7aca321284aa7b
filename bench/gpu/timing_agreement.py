#!/usr/bin/env python3
"""Timing agreement (issue #4): tunekit's median against
triton.testing.do_bench (median, L2 flushed before each run) on the same
launch: the cubin tunekit built, loaded with CuPy, with the same grid, block
and argument sizes. Three lengths: ~5 us, ~100 us, ~5 ms
(examples/cuda/timing/timing.yaml).

  python3 bench/gpu/timing_agreement.py --tunekit build/bin/tunekit
"""
import argparse
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from gpu_python import add_tunekit_argument, require_tunekit  # noqa: E402


def probe(launch, triton):
    """do_bench's loop by hand, in variants, for a short launch (medians, us)."""
    import torch
    cache = torch.empty(int(256e6 // 4), dtype=torch.int, device="cuda")
    out = {}

    def loop(flushes, sync_each, reps=2000):
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for i in range(reps):
            for _ in range(flushes):
                cache.zero_()
            starts[i].record()
            launch()
            ends[i].record()
            if sync_each:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        t = sorted(1000.0 * s.elapsed_time(e) for s, e in zip(starts, ends))
        return t[len(t) // 2]

    # The flush alone: if it is shorter than Python's loop body, the GPU
    # waits for the launch after recording the start event.
    s0, s1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s0.record()
    for _ in range(100):
        cache.zero_()
    s1.record()
    torch.cuda.synchronize()
    out["zero_256MB_us"] = 1000.0 * s0.elapsed_time(s1) / 100
    out["like_do_bench"] = loop(1, False)
    out["flush_x4_gpu_ahead"] = loop(4, False)
    out["sync_each_sample"] = loop(1, True)
    return out


def main():
    ap = argparse.ArgumentParser()
    add_tunekit_argument(ap)
    ap.add_argument("--spec", default=os.path.join(ROOT, "examples", "cuda", "timing", "timing.yaml"))
    ap.add_argument("--out", default="/tmp/tunekit-bench-timing")
    ap.add_argument("--repeats", type=int, default=3, help="do_bench runs per kernel (to show its spread)")
    ap.add_argument("--summary", help="write the figures as JSON here")
    ap.add_argument("--probe", action="store_true",
                    help="for the shortest launch, also time do_bench's loop by hand in variants (which flush, "
                         "whether the GPU can run ahead of Python) to see where a difference comes from")
    a = ap.parse_args()
    require_tunekit(a.tunekit)
    cmd = [a.tunekit, "tune", a.spec, "--fresh", "--no-progress", "-o", a.out]
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout[-2000:], p.stderr[-3000:], file=sys.stderr)
        sys.exit(p.returncode)
    with open(os.path.join(a.out, "timing.json")) as f:
        rep = json.load(f)

    import cupy as cp
    import numpy as np
    import torch  # noqa: F401  (do_bench's events and flush buffer)
    import triton.testing

    cubins = []
    for c in glob.glob(os.path.join(a.out, "cache", "cuda", "build", "*.cubin")):
        with open(c[: -len(".cubin")] + ".json") as f:
            side = json.load(f)
        if side["entry"] == "burn":
            cubins.append((c, side["lowered"]))
    assert len(cubins) == 1, cubins
    cubin, symbol = cubins[0]
    fn = cp.RawModule(path=cubin).get_function(symbol)

    rows = []
    for s in rep["sizes"]:
        n, iters = s["size"]["n"], s["size"]["iters"]
        t = s["trials"][0]
        assert t["status"] == "ok", t
        block = t["config"]["BLOCK"]
        grid = (n + block - 1) // block
        x = cp.random.uniform(-1, 1, n, dtype=cp.float32)
        y = cp.empty(n, dtype=cp.float32)
        args = (x, y, np.int32(n), np.int32(iters))
        launch = lambda: fn((grid,), (block,), args)  # noqa: E731
        launch()
        cp.cuda.Device().synchronize()
        ours = t["time_us"]
        theirs = [1000.0 * triton.testing.do_bench(launch, warmup=25, rep=200, return_mode="median")
                  for _ in range(a.repeats)]
        ref = sorted(theirs)[len(theirs) // 2]
        rows.append({"n": n, "iters": iters, "grid": grid, "block": block, "tunekit_us": ours,
                     "tunekit_samples": len(t["samples_us"]), "tunekit_noise": t["noise"],
                     "do_bench_us": theirs, "ratio": ours / ref})
        if a.probe and n <= (1 << 20) and iters == 1:
            rows[-1]["probe"] = probe(launch, triton)
    if a.summary:
        with open(a.summary, "w") as f:
            json.dump(rows, f, indent=2)
    print()
    print("| launch | tunekit median | samples | do_bench median (runs) | tunekit / do_bench |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| n={r['n']}, iters={r['iters']}, grid {r['grid']} x {r['block']} | {r['tunekit_us']:.2f} us | "
              f"{r['tunekit_samples']} | {', '.join(f'{v:.2f}' for v in r['do_bench_us'])} us | {r['ratio']:.3f} |")
    for r in rows:
        if "probe" in r:
            print("probe (n=%d): " % r["n"] + ", ".join(f"{k} {v:.2f}" for k, v in r["probe"].items()))
    worst = max(abs(r["ratio"] - 1) for r in rows)
    print(f"worst disagreement: {100 * worst:.1f}% (goal: within 3%)")


if __name__ == "__main__":
    main()
