#!/usr/bin/env python3
"""Is gemm_gemv's slow state (15.0 against 14.3-14.4 us at (1, 4096, 4096),
lab/runs/issue-5-run-14.md and -15.md) a property of single launches, which a
median of 300 would average, or of whole stretches of time? (issue #5, run 15e)

  python3 lab/probes/gemv_samples_probe.py [--ctypes]

Four rounds of 300 samples each of run 14f's config and of torch.matmul,
timed as common.timed_us times them (torch's zero_ flush, an event pair per
sample, enqueued back to back after 25 ms of unrecorded ones; runs 15e-l
used a first form with 100 unrecorded pairs); for each it prints
the deciles and the medians of the first and second 150 samples, and the
first 60 samples of round 0 in order. --ctypes adds the same kernel launched
by ctypes through the driver's cuLaunchKernel, as tunekit's worker and
worker_replica_probe.py launch it, on torch's stream (run 15m).
"""
import os
import sys

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402

N = K = 4096
CFG = dict(BM=1, LR=32, KU=1, RU=4, WARPS=8, WK=8, BPS=2, PIPE=0, EVICT=0)


def main():
    import torch
    gemm = os.path.join(common.ROOT, "kernels", "gemm")
    x = torch.empty(1, K, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
    w = torch.empty(N, K, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
    c = torch.empty(1, N, device="cuda", dtype=torch.bfloat16)
    with common.torch_stream():
        g = common.SpecLaunch(os.path.join(gemm, "gemm_gemv.yaml"), CFG, dict(M=1, N=N, K=K, B_NK=1),
                              dict(A=x, B=w, C=c), "/tmp/tunekit-gemv-samples")
        launches = [("gemv", g), ("cuBLAS", lambda: torch.matmul(x, w.t()))]
        if "--ctypes" in sys.argv[1:]:
            import ctypes
            cuda = ctypes.CDLL("libcuda.so.1")
            values = [ctypes.c_uint64(t.data_ptr()) for t in (x, w, c)] + [ctypes.c_int(v) for v in (1, N, K, 1)]
            params = (ctypes.c_void_p * 7)(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])

            def by_ctypes():
                stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
                rc = cuda.cuLaunchKernel(ctypes.c_void_p(g.fn.kernel.ptr), *g.grid, *(1,) * (3 - len(g.grid)),
                                         *g.block, *(1,) * (3 - len(g.block)), 0, stream, params, None)
                if rc != 0:
                    raise RuntimeError(f"cuLaunchKernel: CUresult {rc}")
            launches.insert(1, ("gemv (ctypes)", by_ctypes))
            carve = ctypes.c_int()
            cuda.cuFuncGetAttribute(ctypes.byref(carve), 9, ctypes.c_void_p(g.fn.kernel.ptr))
            print(f"CuPy's function: preferred shared memory carveout {carve.value}")
        for r in range(4):
            for name, fn in launches:
                t = common.timed_samples(fn, "write", n=300)
                q = sorted(t)
                dec = [q[int(p / 10 * (len(q) - 1))] for p in range(11)]
                first, second = sorted(t[:150])[75], sorted(t[150:])[75]
                print(f"round {r} {name}: deciles " + " ".join(f"{v:.2f}" for v in dec)
                      + f" | median of first half {first:.2f}, second half {second:.2f}")
                if name == "gemv" and r == 0:
                    print("  first 60 samples in order: " + " ".join(f"{v:.1f}" for v in t[:60]))


if __name__ == "__main__":
    main()
