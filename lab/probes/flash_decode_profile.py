#!/usr/bin/env python3
"""Runs flash decoding (kernels/flash_decode) and torch SDPA on one shape a few
times each, for a profiler to look at (issue #5: why ours trails SDPA by 2-8%
on the bandwidth-bound shapes).

  ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section Occupancy --section WarpStateStats --section LaunchStats \
      python3 lab/probes/flash_decode_profile.py --B 64 --Hq 64 --Hkv 8 --L 2048 \
      --config SPLIT=1,WARPS=4,KPW=16,SMEM=1,STAGES=3

(with --no-time under a profiler). Otherwise it prints each one's median time
(common.timed_us) after a write flush and after a read flush.
"""
import argparse
import os

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402
from flash_decode import launch  # noqa: E402

DEFAULTS = dict(SPLIT=1, WARPS=4, KPW=16, SMEM=1, STAGES=2, SCHED=0, BPS=1, COMBINE=0)


def main():
    ap = argparse.ArgumentParser()
    for k, v in dict(B=64, Hq=64, Hkv=8, L=2048).items():
        ap.add_argument(f"--{k}", type=int, default=v)
    ap.add_argument("--config", action="append", default=[], help="NAME=V,NAME=V (repeat for several)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-time", action="store_true", help="only the runs (under a profiler: SDPA's, then each config's)")
    ap.add_argument("--out", default="/tmp/flash-profile")
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    D = 128
    q = torch.randn(a.B, a.Hq, D, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(a.B, a.Hkv, a.L, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(a.B, a.Hkv, a.L, D, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(a.B, a.Hq, D, device="cuda", dtype=torch.bfloat16)
    with common.torch_stream():
        q4 = q.view(a.B, a.Hq, 1, D)
        sdpa = lambda: F.scaled_dot_product_attention(q4, k, v, enable_gqa=True)  # noqa: E731
        for _ in range(a.runs):
            sdpa()
        torch.cuda.synchronize()
        if not a.no_time:
            print(f"SDPA: {common.timed_us(sdpa, 'write', n=50):.2f} us (write flush), "
                  f"{common.timed_us(sdpa, 'read', n=50):.2f} us (read flush)", flush=True)
        for text in a.config or [""]:
            cfg = dict(DEFAULTS, **common.parse_config(text))
            ours = launch(cfg, q, k, v, out, os.path.join(a.out, "cubins"))
            for _ in range(a.runs):
                ours()
            torch.cuda.synchronize()
            if a.no_time:
                continue
            print(f"ours {cfg}: grid {ours.grid} block {ours.block} smem {ours.smem} regs {ours.attrs.get('num_regs')}: "
                  f"{common.timed_us(ours, 'write', n=50):.2f} us (write flush), "
                  f"{common.timed_us(ours, 'read', n=50):.2f} us (read flush)", flush=True)


if __name__ == "__main__":
    main()
