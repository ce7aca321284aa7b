#!/usr/bin/env python3
"""Where a ~5 us kernel's time depends on the L2 flush before it (issue #4,
timing agreement): the same launch timed do_bench-style (flush, event,
kernel, event, no wait between samples) with four flushes of 256 MB:
torch's zero_ (what do_bench uses), a store kernel writing zeros or a
non-zero value (what tunekit's worker does), and cudaMemsetAsync.

  python3 lab/probes/flush_probe.py
"""
import cupy as cp
import numpy as np
import torch

SRC = r"""
extern "C" __global__ void burn(const float* __restrict__ x, float* __restrict__ y, int n, int iters) {
  const int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < iters; ++k) v = fmaf(v, 0.999999f, 1e-7f);
  y[i] = v;
}
extern "C" __global__ void flush(uint4* p, unsigned long long n, unsigned v) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    p[i] = make_uint4(v, v, v, v);
}
"""


def main():
    mod = cp.RawModule(code=SRC)
    burn, store = mod.get_function("burn"), mod.get_function("flush")
    n, iters = 524288, 1
    x = cp.random.uniform(-1, 1, n, dtype=cp.float32)
    y = cp.empty(n, dtype=cp.float32)
    args = (x, y, np.int32(n), np.int32(iters))
    cache = torch.empty(int(256e6 // 4), dtype=torch.int, device="cuda")
    buf = cp.empty(256_000_000 // 16 * 4, dtype=cp.uint32)
    n16 = np.uint64(buf.size // 4)
    counter = [0]

    def f_zero_():
        cache.zero_()

    def f_store(value):
        def f():
            counter[0] += 1
            store((132 * 4,), (512,), (buf, n16, np.uint32(counter[0] if value else 0)))
        return f

    def f_memset():
        buf.fill(0)

    flushes = {"torch zero_": f_zero_, "store zeros": f_store(False), "store values": f_store(True),
               "memset": f_memset}

    def loop(flush, reps=2000, sync_each=False):
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for i in range(reps):
            flush()
            starts[i].record()
            burn((n // 256,), (256,), args)
            ends[i].record()
            if sync_each:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        t = sorted(1000.0 * s.elapsed_time(e) for s, e in zip(starts, ends))
        return t[len(t) // 2]

    for f in flushes.values():
        loop(f, 200)
    print("| flush (256 MB) | back to back, run 1 | run 2 | run 3 | wait after each sample |")
    print("|---|---|---|---|---|")
    for name, f in flushes.items():
        runs = [loop(f) for _ in range(3)]
        print(f"| {name} | " + " | ".join(f"{r:.2f} us" for r in runs) + f" | {loop(f, sync_each=True):.2f} us |")


if __name__ == "__main__":
    main()
