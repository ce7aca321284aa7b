#!/usr/bin/env python3
"""Does gemm_gemv's slow state (lab/runs/issue-5-run-14.md and -15.md: 14.9-15.1
against 14.2-14.4 us at (1, 4096, 4096), one state per timing call) follow
the SM clock? (issue #5)

  python3 lab/probes/clock_probe.py [--calls 8] [--n 200]

Times the shipped gemm_gemv and gemm_wgmma_swap configs for (1, 4096, 4096)
and torch.matmul in alternating calls of n samples each, as common.timed_us
does (a 256 MB write flush before each sample, an event pair around the
kernel, 25 ms of unrecorded pairs first). The flush is lab_common.StampedFlush,
whose block 0 reads clock64 and %globaltimer at its start and end, so each
sample comes with the SM clock of the microseconds just before it. Prints
per call the median time and the clock's median and range.

  python3 lab/probes/clock_probe.py --trace 3 [--kernels gemv] [--smi] [--bin-ms 10]

instead times each kernel back to back for that many seconds and prints the
medians of its samples in bins of time, so that a state's length shows
(--smi: nvidia-smi's temperatures, power and memory clock after each batch
of 4096 samples).
"""
import argparse
import statistics
import subprocess

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402
from gemm import SPECS, shipped_config  # noqa: E402


def samples(fn, flush, n):
    """n samples of fn, each after flush(slot i) and timed by its own event
    pair, enqueued back to back: their times in us and the flush's log rows
    (block 0's clock ticks and ns over its life, its end time)."""
    import torch
    start = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    flush.log.fill(0)
    for i in range(n):
        flush(i)
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return [1000.0 * s.elapsed_time(e) for s, e in zip(start, end)], flush.log[:n].get()


def trace(name, fn, flush, seconds, bin_ms, smi=False):
    """Samples of fn back to back for `seconds`, in batches of 4096; each
    sample's time stamp is the end of the flush (a lab_common.StampedFlush) before it."""
    import numpy as np
    stamps, times = [], []
    while not stamps or stamps[-1] - stamps[0] < seconds * 1e9:
        n = 4096
        batch, log = samples(fn, flush, n)
        times += batch
        stamps += [int(v) for v in log[:, 2]]
        if smi:
            q = subprocess.run(["nvidia-smi", "--query-gpu=temperature.gpu,temperature.memory,power.draw,clocks.mem",
                                "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
            print(f"  batch of {n}: median {np.median(batch):.2f} us; gpu C, memory C, W, MHz: {q}", flush=True)
    t = np.array(times)
    ts = (np.array(stamps) - stamps[0]) / 1e6  # ms
    lo, hi = np.percentile(t, 10), np.percentile(t, 90)
    mid = (lo + hi) / 2
    bins = np.floor(ts / bin_ms).astype(int)
    meds = [float(np.median(t[bins == b])) for b in range(bins.max() + 1) if (bins == b).any()]
    print(f"\n{name}: {len(t)} samples over {ts[-1]:.0f} ms; p10 {lo:.2f}, median {np.median(t):.2f}, p90 {hi:.2f} us")
    print(f"medians of {bin_ms:g} ms bins, in order:")
    for i in range(0, len(meds), 25):
        print("  " + " ".join(f"{v:.1f}" for v in meds[i:i + 25]))
    # runs of bins on one side of the midpoint between p10 and p90
    runs, side, length = [], None, 0
    for v in meds:
        s = v > mid
        if s == side:
            length += 1
        else:
            if side is not None:
                runs.append(("slow" if side else "fast", length))
            side, length = s, 1
    runs.append(("slow" if side else "fast", length))
    print("runs (bins): " + " ".join(f"{k[0]}{n}" for k, n in runs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=8, help="timing calls per kernel")
    ap.add_argument("--n", type=int, default=200, help="samples per call")
    ap.add_argument("--trace", type=float, default=0.0,
                    help="instead: time each kernel back to back for this many seconds and print its sample "
                         "times against the time they ran, in bins of --bin-ms")
    ap.add_argument("--bin-ms", type=float, default=5.0)
    ap.add_argument("--smi", action="store_true", help="with --trace: nvidia-smi's temperatures after each batch")
    ap.add_argument("--kernels", default="cuBLAS,gemv,swap", help="which of cuBLAS, gemv, swap (comma-separated)")
    a = ap.parse_args()
    import numpy as np
    import torch

    m, k, n = 1, 4096, 4096
    size = dict(M=m, K=k, N=n, B_NK=1)
    x = torch.empty(m, k, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
    w = torch.empty(n, k, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    flush = lab_common.StampedFlush()

    with common.torch_stream():
        launches = [("cuBLAS", lambda: torch.matmul(x, w.t()))]
        for name in ("gemv", "swap"):
            cfg = shipped_config(name, size)
            launches.append((f"{name} {cfg}",
                             common.SpecLaunch(SPECS[name], cfg, size, dict(A=x, B=w, C=c), "/tmp/clock-probe")))
        ref = x.float() @ w.float().t()
        for name, fn in launches[1:]:
            fn()
            torch.cuda.synchronize()
            print(f"{name}: max abs diff against fp32 {(c.float() - ref).abs().max().item():.3g}")
        if a.trace > 0:
            for name, fn in launches:
                if name.split()[0] in a.kernels.split(","):
                    trace(name, fn, flush, a.trace, a.bin_ms, a.smi)
            return
        print("\n| call | kernel | median us | clock MHz: median | min | max | samples under 1900 MHz |")
        print("|---|---|---|---|---|---|---|")
        per_kernel = {name: [] for name, _ in launches}
        for call in range(a.calls):
            for name, fn in launches:
                common.warm_up(fn, flush)  # as timed_us
                us, log = samples(fn, flush, a.n)
                log = log.astype("float64")
                mhz = 1000.0 * log[:, 0] / np.maximum(log[:, 1], 1)
                per_kernel[name].append((statistics.median(us), float(np.median(mhz))))
                print(f"| {call} | {name} | {statistics.median(us):.2f} | {np.median(mhz):.0f} | {mhz.min():.0f} | "
                      f"{mhz.max():.0f} | {(mhz < 1900).sum()} |", flush=True)
        print("\nper kernel, over calls: median us (min-max); clock MHz (min-max)")
        for name, rows in per_kernel.items():
            t, f = [r[0] for r in rows], [r[1] for r in rows]
            print(f"{name}: {statistics.median(t):.2f} ({min(t):.2f}-{max(t):.2f}); {statistics.median(f):.0f} "
                  f"({min(f):.0f}-{max(f):.0f})")


if __name__ == "__main__":
    main()
