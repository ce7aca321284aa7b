#!/usr/bin/env python3
"""Does where the buffers sit decide a streaming GEMM's time after a write
flush? (issue #5, run 15: at (1, 4096, 4096) cuBLAS took 17.5 to 24.6 us in
one session, by flush, and gemm_gemv 14.1 to 15.4 us.)

  python3 lab/probes/placement_probe.py [--weights 4] [--flushes 3] [--passes 2]

Allocates several copies of the same (4096 x 4096) bf16 weights and several
256 MiB flush buffers, then times gemm_gemv's run-14f config and
torch.matmul on every (flush buffer, weight copy) pair with common.timed_us
(do_bench's procedure: torch's zero_ of that buffer before each sample),
for --passes passes over the whole matrix. If the times follow the pair and
repeat across passes, placement decides; if they change between passes,
some state of the machine does.
"""
import argparse
import os

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402

N = K = 4096
CFG = dict(BM=1, LR=32, KU=1, RU=4, WARPS=8, WK=8, BPS=2, PIPE=0, EVICT=0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", type=int, default=4)
    ap.add_argument("--flushes", type=int, default=3)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--n", type=int, default=200)
    a = ap.parse_args()
    import torch

    gemm = os.path.join(common.ROOT, "kernels", "gemm")
    x = torch.empty(1, K, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
    c = torch.empty(1, N, device="cuda", dtype=torch.bfloat16)
    ws, flushes = [], []
    for i in range(max(a.weights, a.flushes)):
        if i < a.weights:
            ws.append(torch.empty(N, K, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1))
        if i < a.flushes:
            flushes.append(torch.empty(64 << 20, dtype=torch.int32, device="cuda"))
    size = dict(M=1, N=N, K=K, B_NK=1)
    with common.torch_stream():
        gemv = [common.SpecLaunch(os.path.join(gemm, "gemm_gemv.yaml"), CFG, size, dict(A=x, B=w, C=c), "/tmp/tunekit-placement") for w in ws]
        for w, f in zip(ws, gemv):
            f()
            torch.cuda.synchronize()
            assert (c.float() - x.float() @ w.float().T).abs().max().item() < 0.5
        print("weights at " + ", ".join(hex(w.data_ptr()) for w in ws))
        print("flush buffers at " + ", ".join(hex(b.data_ptr()) for b in flushes))
        for p in range(a.passes):
            print(f"\npass {p}: gemm_gemv us / cuBLAS us (rows: flush buffer, columns: weight copy)")
            for j, buf in enumerate(flushes):
                common._flush_bufs["write"] = buf.zero_  # this buffer is the flush
                cells = []
                for i, w in enumerate(ws):
                    g = common.timed_us(gemv[i], "write", n=a.n)
                    cb = common.timed_us(lambda: torch.matmul(x, w.t()), "write", n=a.n)
                    cells.append(f"{g:.2f} / {cb:.2f}")
                print(f"  flush {j}: " + " | ".join(cells))
        common._flush_bufs.pop("write")


if __name__ == "__main__":
    main()
