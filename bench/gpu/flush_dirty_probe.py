#!/usr/bin/env python3
"""What an L2 flush leaves behind (issue #5): cuBLAS on decode-shaped GEMMs
timed four ways on the same inputs.

  python3 bench/gpu/flush_dirty_probe.py

do_bench and tunekit's cold-cache mode both flush by WRITING a buffer larger
than the L2, so the kernel under test starts with an L2 full of dirty lines
that must be written back while it reads: about 3 us on a 32 MiB weight read
here, against a flush by READING (`read-flush`). "no flush" times back-to-back
launches with an event pair each, which the host's launch rate bounds.
"""
import torch
from triton.testing import do_bench

BW = 4.22e12  # copy bandwidth measured here (bench/kernels/gemm.py), bytes/s


def timed(fn, flush, n=200):
    """Median of n runs, each after `flush`, timed by its own event pair."""
    start = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        flush()
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return 1000 * sorted(a.elapsed_time(b) for a, b in zip(start, end))[n // 2]


def main():
    big = torch.rand(256 << 20, device="cuda")  # 1 GiB: reading it evicts the L2 and leaves it clean
    scratch = torch.empty(64 << 20, dtype=torch.int32, device="cuda")  # 256 MB, as do_bench zeroes
    write_flush = lambda: scratch.zero_()  # noqa: E731
    read_flush = lambda: big.sum()  # noqa: E731
    for (m, k, n) in [(1, 4096, 4096), (16, 4096, 4096), (64, 4096, 14336), (4, 128, 2048)]:
        a = torch.rand(m, k, dtype=torch.bfloat16, device="cuda")
        b = torch.rand(n, k, dtype=torch.bfloat16, device="cuda")
        f = lambda: torch.matmul(a, b.t())  # noqa: E731
        f()
        torch.cuda.synchronize()
        print(f"M={m} K={k} N={n}: do_bench {1000 * do_bench(f, return_mode='median'):.1f} us | "
              f"write-flush {timed(f, write_flush):.1f} us | read-flush {timed(f, read_flush):.1f} us | "
              f"no flush {timed(f, lambda: None):.1f} us | floor {2e6 * (m * k + k * n + m * n) / BW:.1f} us")


if __name__ == "__main__":
    main()
