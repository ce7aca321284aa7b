#!/usr/bin/env python3
"""Do a kernel's samples alternate between two times from one sample to the
next, and what decides it? (issue #5, run 18: in tunekit's worker, gemm_gemv's
even samples at (1, 4096, 4096) took 15.39 us and its odd ones 14.72, and 30
of its 50 trials split so by more than 3%.)

  python3 lab/probes/flush_parity_probe.py [--rounds 2] [--n 300] [--copies 1] [--flush write,worker,...]

Times the shipped configs of gemm_gemv at (1, 4096, 4096), gemm_wgmma_swap
at (16, 4096, 4096) and gemm_skinny at (4, 2048, 128), and cuBLAS at each
shape, as common.timed_samples does (an event pair per sample, back to back),
after each kind of flush:
  write        torch's zero_ of 256 MB, as do_bench flushes;
  worker       tunekit's worker's own PTX kernel, a word that grows by 1;
  store, store0, store2, storec
               the worker's launch shape writing a word that grows by 1,
               stays 0, grows by 2, or stays one non-zero word;
  write-twice  two zero_ of 256 MB per sample;
  write-1g     one zero_ of 1 GiB;
  read         a 1 GiB read;
  none         no flush (a spin in its place; the L2 stays hot).
Per call it prints the median, the medians of the even and of the odd
samples, and the lag-1 and lag-2 autocorrelations (lag 1 near -1: the
samples alternate). With --copies 2, successive samples read different
copies of the tensors, so an alternation tied to the addresses read would
move from lag 1 to lag 2.
"""
import argparse
import statistics

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402
from gemm import SPECS, shipped_config  # noqa: E402

CASES = (("gemv", (1, 4096, 4096)), ("swap", (16, 4096, 4096)), ("skinny", (4, 2048, 128)))


def autocorrelation(x, lag):
    """The autocorrelation of x at the given lag."""
    m = statistics.fmean(x)
    var = sum((v - m) ** 2 for v in x)
    return sum((a - m) * (b - m) for a, b in zip(x, x[lag:])) / var if var else 0.0


def cycling(fns):
    """A call that runs fns[0], fns[1], ... in turn."""
    state = [0]

    def f():
        fns[state[0] % len(fns)]()
        state[0] += 1
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--n", type=int, default=300, help="samples per call")
    ap.add_argument("--copies", type=int, default=1,
                    help="copies of each shape's A, B and C, used in turn by successive samples")
    ap.add_argument("--flush", default="write,worker,store,store0,store2,storec,write-twice,write-1g,read,none")
    ap.add_argument("--out", default="/tmp/flush-parity-probe")
    a = ap.parse_args()
    import torch
    launches = []
    with common.torch_stream():
        for name, (m, k, n) in CASES:
            size = dict(M=m, K=k, N=n, B_NK=1)
            cfg = shipped_config(name, size)
            ours, vendor = [], []
            for _ in range(a.copies):
                x = torch.empty(m, k, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
                w = torch.empty(n, k, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
                c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                fn = common.SpecLaunch(SPECS[name], cfg, size, dict(A=x, B=w, C=c), a.out)
                fn()
                torch.cuda.synchronize()
                diff = (c.float() - x.float() @ w.float().t()).abs().max().item()
                print(f"{name} {m},{k},{n} {cfg}: max abs diff against fp32 {diff:.3g}", flush=True)
                ours.append(fn)
                vendor.append(lambda x=x, w=w: torch.matmul(x, w.t()))
            launches.append((f"{name} ({m}, {k}, {n})", cycling(ours)))
            launches.append((f"cuBLAS ({m}, {k}, {n})", cycling(vendor)))
        small = common.flush_fn("write")
        big = torch.empty(256 << 20, dtype=torch.int32, device="cuda")
        own = {"write-twice": lambda: (small(), small()), "write-1g": big.zero_}
        print(f"\n{a.copies} copies of each shape's tensors, used in turn")
        print("| round | flush | kernel | median us | even samples | odd samples | lag-1 autocorrelation | lag-2 |")
        print("|---|---|---|---|---|---|---|---|")
        for r in range(a.rounds):
            for fl in a.flush.split(","):
                for label, fn in launches:
                    s = common.timed_samples(fn, own.get(fl, fl), n=a.n)
                    print(f"| {r} | {fl} | {label} | {statistics.median(s):.2f} | {statistics.median(s[0::2]):.2f} | "
                          f"{statistics.median(s[1::2]):.2f} | {autocorrelation(s, 1):+.2f} | "
                          f"{autocorrelation(s, 2):+.2f} |", flush=True)


if __name__ == "__main__":
    main()
