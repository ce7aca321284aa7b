#!/usr/bin/env python3
"""gemm_gemv against cuBLAS at (1, 4096, 4096) on one timer (issue #5: the
>= 1.3x goal of that decode shape).

  python3 lab/probes/gemv_same_timer.py [--rounds 4] [--flush write[,store,store0,worker,read]] [--stream]
                                      [--m 8] [--config 'LABEL:LR=32,KU=2,...' ...] [--cubin-dir DIR] [--side-stream]

bench/kernels/gemm.py compares tunekit's time of our kernel (its worker, its
flush) with common.timed_us's time of cuBLAS (do_bench's procedure). For
gemm_gemv at this shape the two timers differ by more than the 3% they
agreed within on SGEMM (issue #4): tunekit 15.0-15.25 us, timed_us 14.3-15.2
(lab/runs/issue-5-run-14.md). This launches run 14's two winning configs
as their spec says (common.SpecLaunch) and times them and torch.matmul with
common.timed_us, the same flush, alternating, for several rounds: each
round's ratio is one apples-to-apples comparison. --stream adds
gemm_stream's best config (runs 10-14), --flush read the read flush,
--flush store a store kernel like tunekit's worker's flush (NVRTC-built,
writing a changing non-zero word instead of torch's zero_), store0 that
kernel writing zeros, and worker the worker's own PTX flush kernel; the
flushes alternate within each round. --side-stream runs on a stream of its
own, as the worker does. --m and --config time other configs or other M
(the spec's pinned BM follows M), and --cubin-dir the cubin a tunekit tune
built (run 15d). The output is checked against fp32 once.
"""
import argparse
import os

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402

N = K = 4096
GEMM = os.path.join(common.ROOT, "kernels", "gemm")
# (label, kernel, config): run 14f's winner, run 14h's winner, gemm_stream's
CONFIGS = [
    ("gemv 14f", "gemv", dict(BM=1, LR=32, KU=1, RU=4, WARPS=8, WK=8, BPS=2, PIPE=0, EVICT=0)),
    ("gemv 14h", "gemv", dict(BM=1, LR=32, KU=2, RU=1, WARPS=16, WK=8, BPS=2, PIPE=0, EVICT=0)),
]
STREAM = ("gemm_stream", "stream", dict(BM=1, KC=2048, STAGES=2, CK=1, WARPS=8, EVICT=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--flush", default="write", help="write, read or both (comma-separated)")
    ap.add_argument("--stream", action="store_true", help="also gemm_stream's best config")
    ap.add_argument("--n", type=int, default=300, help="samples per figure")
    ap.add_argument("--m", type=int, default=1, help="rows of A, 1 to 8 (the configs' BM follows)")
    ap.add_argument("--cubin-dir", help="a tunekit output folder of one config's tune (-o DIR): also times the "
                    "cubin tunekit built there, launched as the first config is")
    ap.add_argument("--side-stream", action="store_true",
                    help="run everything on a stream of its own (as tunekit's worker does) instead of the default one")
    ap.add_argument("--config", action="append", default=[],
                    help="LABEL:NAME=V,... a gemm_gemv config to time instead of run 14's (repeat)")
    a = ap.parse_args()
    import torch

    m = a.m
    bm = m if m <= 2 else 4 if m <= 4 else 8
    configs = [(label, "gemv", dict(cfg, BM=bm)) for label, _, cfg in CONFIGS] if not a.config else [
        (c.split(":", 1)[0], "gemv", dict(common.parse_config(c.split(":", 1)[1]), BM=bm))
        for c in a.config]
    x = torch.empty(m, K, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
    w = torch.empty(N, K, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
    c = torch.empty(m, N, device="cuda", dtype=torch.bfloat16)
    ref = x.float() @ w.float().T
    size = dict(M=m, N=N, K=K, B_NK=1)
    cache = os.path.join("/tmp", "tunekit-gemv-same-timer")
    import contextlib
    side = torch.cuda.stream(torch.cuda.Stream()) if a.side_stream else contextlib.nullcontext()
    with side, common.torch_stream():
        launches = []
        for label, kernel, cfg in configs + ([(STREAM[0], STREAM[1], dict(STREAM[2], BM=bm))] if a.stream else []):
            f = common.SpecLaunch(os.path.join(GEMM, f"gemm_{kernel}.yaml"), cfg, size, dict(A=x, B=w, C=c), cache)
            c.fill_(float("nan"))  # (unwritten elements show as nan)
            f()
            torch.cuda.synchronize()
            print(f"{label}: max abs diff against fp32 {(c.float() - ref).abs().max().item():.3g}")
            launches.append((label, f))
        if a.cubin_dir:
            # The very cubin tunekit's worker ran (NVRTC, --gpu-architecture=sm_90a),
            # in place of CuPy's build of the same source and defines.
            import copy
            import cupy as cp
            import glob
            import json
            for path in glob.glob(os.path.join(a.cubin_dir, "cache", "cuda", "build", "*.cubin")):
                with open(path[: -len(".cubin")] + ".json") as fh:
                    symbol = json.load(fh)["lowered"]
                if symbol != "gemm_gemv":
                    continue  # (the reference kernel's cubin)
                f = copy.copy(launches[0][1])
                f.fn = cp.RawModule(path=path).get_function(symbol)
                c.fill_(float("nan"))
                f()
                torch.cuda.synchronize()
                label = f"{launches[0][0]}, tunekit's cubin"
                print(f"{label}: max abs diff against fp32 {(c.float() - ref).abs().max().item():.3g}")
                launches.append((label, f))
        cublas = lambda: torch.matmul(x, w.t())  # noqa: E731
        # the flushes alternate within each round, so a drift between rounds
        # reaches all of them
        for rnd in range(a.rounds):
            for fl in a.flush.split(","):
                times = [(label, common.timed_us(f, fl, n=a.n)) for label, f in launches]
                cb = common.timed_us(cublas, fl, n=a.n)
                print(f"{fl} flush, round {rnd}: " + ", ".join(f"{label} {t:.2f} us ({cb / t:.3f}x)" for label, t in times)
                      + f", cuBLAS {cb:.2f} us")
        print("ideal read of the 32 MiB (write flush): {:.2f} us ({})".format(*common.stream_read_us(N * K * 2, "write")))


if __name__ == "__main__":
    main()
