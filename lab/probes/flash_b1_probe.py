#!/usr/bin/env python3
"""Where do flash decoding's microseconds go at B=1? (issue #5: the >= 2x SDPA
goal at B=1, Hq=4, Hkv=1, L=2048, D=128.)

  python3 lab/probes/flash_b1_probe.py [--config SPLIT=8,WARPS=8,...]

After each flush (common.timed_us), times
  - reading the step's 1 MiB of K and V with 8 to 264 blocks (STREAM_SRC's
    grid-strided register loads, 16 KiB in flight per block, and evict-first
    bulk copies, 64 KiB): how fast a few SMs can pull the bytes a split-KV
    grid gives them;
  - flash_decode with the given configs (default: run 12's two fastest) at
    L = 256 to 2048, one (b, kv head) as in the goal: the cost that does not
    shrink with L;
  - torch SDPA at the same L;
  - the clustered configs at L = 2048 with parts left out (PARTS below):
    reads, math, combine; differences place the time. These also run
    without a flush.
Inputs are randn; every flash output is checked against fp32 torch.
"""
import argparse
import os

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402
import flash_decode as fd  # noqa: E402

DEFAULTS = ["SPLIT=8,WARPS=8,KPW=16,SMEM=1,STAGES=2,SCHED=0,BPS=1,COMBINE=0,PREFETCH=256,CLUSTER=1",
            "SPLIT=16,WARPS=4,KPW=16,SMEM=1,STAGES=2,SCHED=0,BPS=1,COMBINE=0,PREFETCH=256,CLUSTER=1",
            "SPLIT=16,WARPS=4,KPW=16,SMEM=1,STAGES=3,SCHED=0,BPS=1,COMBINE=1,PREFETCH=256,CLUSTER=0"]

# FD_SKIP bits (hooks/flash_skip.patch, on a copy of flash_decode.cu): 1 no K/V
# reads, 2 no math, 4 no split combine.
PARTS = [(0, "everything"), (4, "no combine"), (2, "no math"), (6, "no math, no combine"),
         (1, "no K/V reads"), (5, "no K/V reads, no combine"), (7, "launch, Q, warp merge and output only")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", action="append", help="NAME=V,... (repeat); default: " + " | ".join(DEFAULTS))
    ap.add_argument("--parts-only", action="store_true", help="L = 2048 and the parts table only (no read sweep)")
    a = ap.parse_args()
    configs = [common.parse_config(c) for c in (a.config or DEFAULTS)]

    import cupy as cp
    import torch
    import torch.nn.functional as F

    rows, parts = [], []
    nbytes = 2 * 2048 * fd.D * 2
    buf = cp.zeros(nbytes // 4, dtype=cp.uint32)
    out = cp.zeros(1 << 16, dtype=cp.float32)
    with common.torch_stream():
        # (kernel, threads, bytes in flight per block)
        for kernel, threads, flight in () if a.parts_only else (
                ("ldg_4_0_1", 256, "16 KiB"), ("bulk_16384_4_1_1", 32, "64 KiB"), ("bulk_8192_8_1_1", 32, "64 KiB")):
            for blocks in (8, 16, 32, 66, 132, 264):
                f = common.stream_launch(kernel, blocks, threads, buf, nbytes, out)
                rows.append((f"read 1 MiB: {kernel}, {blocks} blocks of {threads}, {flight} in flight each",
                             [common.timed_us(f, fl) for fl in common.FLUSHES], ""))
        torch.manual_seed(0)
        for L in (2048,) if a.parts_only else (256, 512, 1024, 2048):
            q = torch.randn(1, 4, fd.D, device="cuda", dtype=torch.bfloat16)
            k = torch.randn(1, 1, L, fd.D, device="cuda", dtype=torch.bfloat16)
            v = torch.randn(1, 1, L, fd.D, device="cuda", dtype=torch.bfloat16)
            ref = fd.reference(q, k, v)
            for cfg in configs:
                if (L + cfg["SPLIT"] - 1) // cfg["SPLIT"] < cfg["WARPS"] * cfg["KPW"]:
                    continue  # the spec's rule: every warp gets keys
                o = torch.full((1, 4, fd.D), float("nan"), device="cuda", dtype=torch.bfloat16)
                run = fd.launch(cfg, q, k, v, o, "/tmp/flash_b1_probe_cubins")
                run()
                torch.cuda.synchronize()
                diff = (o.float() - ref).abs().max().item()
                tag = ",".join(f"{n}={cfg[n]}" for n in ("SPLIT", "WARPS", "STAGES", "COMBINE", "CLUSTER"))
                rows.append((f"flash_decode L={L} {tag}", [common.timed_us(run, fl) for fl in common.FLUSHES],
                             f"max abs diff {diff:.2g}"))
            q4 = q.view(1, 4, 1, fd.D)
            rows.append((f"SDPA L={L}", [common.timed_us(lambda: F.scaled_dot_product_attention(
                q4, k, v, enable_gqa=True), fl) for fl in common.FLUSHES], ""))

        # Parts left out (FD_SKIP), L = 2048, the clustered configs: the
        # differences place the time. The outputs of these are wrong by design;
        # only the unhooked kernel is checked (above).
        for cfg in (c for c in configs if c.get("CLUSTER")):
            o = torch.zeros(1, 4, fd.D, device="cuda", dtype=torch.bfloat16)
            tag = ",".join(f"{n}={cfg[n]}" for n in ("SPLIT", "WARPS", "STAGES"))
            for skip, what in PARTS:
                hooked = lab_common.hooked_kernel_dir(os.path.dirname(fd.SPEC), "flash_skip.patch", {"FD_SKIP": skip})
                run = common.SpecLaunch(os.path.join(hooked, os.path.basename(fd.SPEC)), cfg,
                                        dict(B=1, Hq=4, Hkv=1, L=k.shape[2]), dict(q=q, k=k, v=v, out=o),
                                        f"/tmp/flash_b1_probe_cubins/fd_skip{skip}")
                parts.append((f"{tag}: {what}", [common.timed_us(run, fl) for fl in ("write", "read", "none")]))

    print("\n| what | write flush us | read flush us | note |")
    print("|---|---|---|---|")
    for label, (w, r), note in rows:
        print(f"| {label} | {w:.2f} | {r:.2f} | {note} |")
    print("\nflash_decode at L = 2048 with parts left out (FD_SKIP); without a flush, K and V sit in L2 and")
    print("the code in the instruction caches, so what is slow only when cold stands out:")
    print("\n| config: what runs | write flush us | read flush us | no flush us |")
    print("|---|---|---|---|")
    for label, (w, r, h) in parts:
        print(f"| {label} | {w:.2f} | {r:.2f} | {h:.2f} |")


if __name__ == "__main__":
    main()
