#!/usr/bin/env python3
"""Which way of streaming bytes from DRAM is fastest after each L2 flush?
(issue #5: what is the floor under a bandwidth-bound kernel, and how should a
decode GEMM move B?)

  python3 lab/probes/stream_access_probe.py [--mib 32,114,1] [--n 100] [--kinds ldg,bulk-ef]

Until run 10 (lab/runs/issue-5-run-10.md) the "ideal read" was one method, register
loads from a contiguous share per block; after do_bench's write flush SDPA
read 512 MiB 10% faster than it, so it was no floor. This probe times, after
both flushes, one read of the same bytes by each method over several launch
shapes ("-ef": with an L2 evict-first cache policy):

  ldg     16-byte register loads, U in flight per thread (a contiguous share
          per block, or grid-strided), optionally with the .L2::256B hint
  cpasync cp.async.cg 16-byte copies into a shared-memory ring of S stages
  bulk    one thread per block drives cp.async.bulk (the TMA copy engine,
          no tensor map) into a ring of S chunks of C bytes
  brows   gemm_stream's B pattern: 8 bulk copies of SEG bytes per stage, one
          per 8 KiB row, the grid sweeping the rows in address order
  rows    gemm_skinny's B pattern: the bytes are rows of 8 KiB (K = 4096
          bf16), a warp reads 8 rows x 64 bytes per load instruction, NW row
          groups and D k-groups in flight per lane, split over SPLIT slices of K

then cuBLAS on the GEMM shapes that read 32 and 114 MiB. The kernels are
bench/kernels/common.py's STREAM_SRC (common.stream_read_us, the ideal read
of the other benches, takes the winners); nothing is written unless a
checksum hits a magic value. Times are medians of common.timed_us, in us.
"""
import argparse

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402


KINDS = ("ldg", "ldg-ef", "cpasync", "cpasync-ef", "bulk", "bulk-ef", "brows", "brows-ef", "rows", "rows-ef")


# (kind, kernel, blocks per SM, threads), within the shared memory of an SM
def variants():
    v = []
    for u, pf, ilv in ((4, 0, 0), (8, 0, 0), (16, 0, 0), (4, 0, 1), (8, 0, 1), (16, 0, 1), (8, 1, 0), (2, 0, 0), (1, 0, 0), (2, 0, 1),
                         (4, 2, 1), (8, 2, 1), (16, 2, 1), (8, 2, 0), (2, 2, 1)):
        for per_sm, threads in ((1, 1024), (4, 256), (2, 512), (8, 128), (2, 256), (1, 256)):
            v.append(("ldg" + "-ef" * (pf == 2), f"ldg_{u}_{pf}_{ilv}", per_sm, threads))
    for V, S, pf in ((1, 2, 0), (1, 4, 0), (2, 4, 0), (4, 4, 0), (2, 8, 0), (4, 8, 0), (2, 4, 1), (2, 4, 2), (1, 2, 2)):
        for per_sm, threads in ((1, 1024), (2, 512), (4, 256), (2, 256), (8, 128), (1, 256)):
            name = f"cpa_{V}_{S}_{pf}"
            smem = lab_common.stream_smem(name, threads)
            if smem <= 200 * 1024 and per_sm * smem <= 220 * 1024:
                v.append(("cpasync" + "-ef" * (pf == 2), name, per_sm, threads))
    for C, S, ilv, ef in ((4096, 4, 0, 0), (4096, 8, 0, 0), (8192, 4, 0, 0), (8192, 8, 0, 0), (16384, 4, 0, 0),
                          (16384, 8, 0, 0), (32768, 4, 0, 0), (32768, 6, 0, 0), (16384, 12, 0, 0), (4096, 8, 1, 0),
                          (16384, 4, 1, 0), (8192, 8, 1, 0), (2048, 8, 0, 0),
                          (4096, 8, 1, 1), (16384, 4, 1, 1), (8192, 8, 1, 1), (16384, 4, 0, 1)):
        for per_sm in (1, 2, 4, 8):
            name = f"bulk_{C}_{S}_{ilv}_{ef}"
            if per_sm * (lab_common.stream_smem(name, 32) + 1024) <= 228 * 1024:
                v.append(("bulk" + "-ef" * ef, name, per_sm, 32))
    for seg, st, ef in ((512, 16, 1), (1024, 8, 1), (2048, 4, 1), (2048, 8, 1), (4096, 2, 1), (4096, 4, 1), (8192, 2, 1),
                        (2048, 4, 0)):
        for per_sm in (1, 2):
            name = f"brows_{seg}_{st}_{ef}"
            if per_sm * (lab_common.stream_smem(name, 32) + 1024) <= 228 * 1024:
                v.append(("brows" + "-ef" * ef, name, per_sm, 32))
    for nw, d, pf, sp in ((2, 4, 1, 4), (2, 4, 0, 4), (2, 8, 1, 4), (2, 8, 0, 4), (4, 4, 1, 2), (1, 8, 1, 8), (2, 4, 1, 8), (2, 8, 1, 1),
                           (2, 8, 2, 4), (2, 4, 2, 4), (1, 8, 2, 8)):
        for per_sm, threads in ((1, 256), (2, 256), (1, 512), (4, 128)):
            v.append(("rows" + "-ef" * (pf == 2), f"rows_{nw}_{d}_{pf}_{sp}", per_sm, threads))
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", default="32,114,1", help="sizes to read, MiB (comma-separated)")
    ap.add_argument("--n", type=int, default=100, help="samples per figure")
    ap.add_argument("--top", type=int, default=8, help="rows shown per kind and flush")
    ap.add_argument("--kinds", default=",".join(KINDS), help="which kinds to time (comma-separated)")
    a = ap.parse_args()
    import cupy as cp
    import torch
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = cp.zeros(1 << 16, dtype=cp.float32)
    print(f"# us, median of {a.n}; flushes: {', '.join(common.FLUSHES)}; {sms} SMs")
    for mib in (float(x) for x in a.mib.split(",")):
        nbytes = int(mib * 2**20) // 8192 * 8192
        buf = cp.ones(nbytes // 4, dtype=cp.uint32)
        print(f"\n## {nbytes / 2**20:.2f} MiB")
        print(f"empty kernel: " + ", ".join(f"{fl} {lab_common.empty_kernel_us(fl):.2f}" for fl in common.FLUSHES))
        rows = []
        with common.torch_stream():
            for kind, name, per_sm, threads in variants():
                if kind not in a.kinds.split(","):
                    continue
                if kind.startswith(("rows", "brows")) and nbytes < 8192 * 64:
                    continue
                launch = lab_common.stream_launch(name, sms * per_sm, threads, buf, nbytes, out)
                t = {fl: common.timed_us(launch, fl, n=a.n) for fl in common.FLUSHES}
                smem = lab_common.stream_smem(name, threads)
                rows.append((kind, f"{name} {per_sm}x{threads}" + (f" smem {smem // 1024}K" if smem else ""), t))
        for fl in common.FLUSHES:
            print(f"\n# after the {fl} flush, fastest first (TB/s of {nbytes / 2**20:.2f} MiB)")
            for kind in KINDS:
                best = sorted((r for r in rows if r[0] == kind), key=lambda r: r[2][fl])[: a.top]
                for _, label, t in best:
                    other = [f for f in common.FLUSHES if f != fl][0]
                    print(f"{kind:10s} {label:40s} {t[fl]:8.2f} ({nbytes / t[fl] / 1e6:4.2f})   {other} {t[other]:8.2f}")
        del buf
        cp.get_default_memory_pool().free_all_blocks()
    # The peer on the GEMM shapes that read these bytes, in the same run.
    print("\n# cuBLAS (torch.matmul, B as N x K), us")
    for (m, k, n) in ((1, 4096, 4096), (16, 4096, 4096), (64, 4096, 14336)):
        x = torch.rand(m, k, dtype=torch.bfloat16, device="cuda")
        w = torch.rand(n, k, dtype=torch.bfloat16, device="cuda")
        print(f"M={m} K={k} N={n}: " + ", ".join(
            f"{fl} {common.timed_us(lambda: torch.matmul(x, w.t()), fl, n=a.n):.2f}" for fl in common.FLUSHES))


if __name__ == "__main__":
    main()
