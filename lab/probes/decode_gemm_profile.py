#!/usr/bin/env python3
"""Runs a decode GEMM's tuned kernels and cuBLAS on one shape a few times
each, for a profiler to look at (issue #5: why gemm_wgmma_swap stays 1.5-2 us
above the ideal read of its bytes, lab/runs/issue-5-run-16.md).

  ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
      python3 lab/probes/decode_gemm_profile.py --shape 16,4096,4096 --no-time

Without --no-time it prints each one's median (common.timed_us, write flush).
The configs are run 16f's best (kernels/gemm/tuned/*_policy.json); --kernel
picks the kernels (swap, gemv), and --swap-config NAME=V,... runs
gemm_wgmma_swap configs of one's own as well (repeat for several).
"""
import argparse

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402
from gemm import SPECS, shipped_config, shipped_policy  # noqa: E402

KERNELS = ("swap", "gemv")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="16,4096,4096", help="M,K,N (B as N x K)")
    ap.add_argument("--kernel", action="append", default=[], help="swap or gemv (repeat; default: both)")
    ap.add_argument("--swap-config", action="append", default=[], help="BM=16,BN=32,...: a swap config to add")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-time", action="store_true", help="only the runs (under a profiler)")
    ap.add_argument("--out", default="/tmp/decode-gemm-profile")
    a = ap.parse_args()
    import torch
    m, k, n = (int(x) for x in a.shape.split(","))
    x = torch.empty(m, k, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
    w = torch.empty(n, k, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    size = dict(M=m, K=k, N=n, B_NK=1)
    launches = [("cuBLAS", lambda: torch.matmul(x, w.t()))]
    with common.torch_stream():
        def launch(name, cfg):
            return (f"{name} {cfg}", common.SpecLaunch(SPECS[name], cfg, size, dict(A=x, B=w, C=c), a.out))
        for name in a.kernel or KERNELS:
            cfg = shipped_config(name, size)
            if cfg is None:
                print(f"{name}: no tuned config for {size} in {shipped_policy(name)}")
                continue
            launches.append(launch(name, cfg))
        for text in a.swap_config:
            launches.append(launch("swap", common.parse_config(text)))
        ref = x.float() @ w.float().t()
        for name, fn in launches:
            for _ in range(a.runs):
                fn()
            torch.cuda.synchronize()
            if name != "cuBLAS":
                print(f"{name}: max abs diff against fp32 {(c.float() - ref).abs().max().item():.3g}", flush=True)
            if not a.no_time:
                print(f"{name}: {common.timed_us(fn, 'write', n=100):.2f} us (write flush)", flush=True)


if __name__ == "__main__":
    main()
