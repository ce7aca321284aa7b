#!/usr/bin/env python3
"""How fast can any kernel read N bytes here, and what does the L2 flush add?
(issue #5: the floors under the decode-shape and flash-decoding goals.)

  python3 lab/probes/stream_floor_probe.py

Times, after each of two flushes, an empty kernel and an ideal streaming read
(common.stream_read_us: the fastest of the reads that won in
lab/probes/stream_access_probe.py, grid-strided 16-byte register loads and
evict-first bulk copies; nothing written) of the bytes each goal's shape must
read, next to the peers (cuBLAS through torch.matmul, torch SDPA) on inputs of
those sizes:

  write  256 MB of stores, as triton.testing.do_bench and tunekit's `cache:
         cold` do: the L2 is left full of dirty lines, which the timed kernel
         writes back as its own reads evict them;
  read   a 1 GiB read (tunekit's `cache: cold-read`): only clean lines remain.

Each figure is the median of the samples, each timed by its own event pair
(common.timed_us).
"""

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402

GEMMS = [(4, 128, 2048), (4, 2048, 128), (1, 4096, 4096), (16, 4096, 4096), (64, 4096, 14336)]
SDPAS = [(1, 4, 1, 2048), (32, 32, 8, 4096), (8, 32, 8, 32768), (64, 64, 8, 2048)]


def main():
    import torch
    import torch.nn.functional as F

    def both(label, fn=None, nbytes=None):
        cells = []
        for fl in common.FLUSHES:
            if fn is not None:
                t = common.timed_us(fn, fl)
                cells.append(f"{fl} {t:7.2f}" + (f" ({nbytes / t / 1e6:4.2f} TB/s)" if nbytes else ""))
            else:
                t, how = common.stream_read_us(nbytes, fl)
                cells.append(f"{fl} {t:7.2f} ({nbytes / t / 1e6:4.2f} TB/s, {how})")
        print(f"{label:40s} " + "   ".join(cells), flush=True)

    print("# us, median; flush before each sample: " + ", ".join(common.FLUSHES))
    print(f"{'empty kernel':40s} " + "   ".join(f"{fl} {lab_common.empty_kernel_us(fl):7.2f}" for fl in common.FLUSHES))
    for (m, k, n) in GEMMS:
        nbytes = 2 * (m * k + k * n + m * n)
        both(f"ideal read, {nbytes / 2**20:.2f} MiB", nbytes=nbytes)
        a = torch.rand(m, k, dtype=torch.bfloat16, device="cuda")
        b = torch.rand(n, k, dtype=torch.bfloat16, device="cuda")
        both(f"cuBLAS M={m} K={k} N={n}", lambda a=a, b=b: torch.matmul(a, b.t()), nbytes)
    for (bb, hq, hkv, L) in SDPAS:
        nbytes = 2 * 2 * bb * hkv * L * 128 + 2 * 2 * bb * hq * 128
        both(f"ideal read, {nbytes / 2**20:.2f} MiB", nbytes=nbytes)
        q = torch.randn(bb, hq, 1, 128, dtype=torch.bfloat16, device="cuda")
        kk = torch.randn(bb, hkv, L, 128, dtype=torch.bfloat16, device="cuda")
        vv = torch.randn(bb, hkv, L, 128, dtype=torch.bfloat16, device="cuda")
        both(f"SDPA B={bb} Hq={hq} Hkv={hkv} L={L}",
             lambda q=q, kk=kk, vv=vv: F.scaled_dot_product_attention(q, kk, vv, enable_gqa=True), nbytes)
        del q, kk, vv
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
