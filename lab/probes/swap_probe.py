#!/usr/bin/env python3
"""Where do gemm_wgmma_swap's microseconds go on a decode shape? (issue #5: it
stays 1.5-2 us above the ideal read of its bytes, lab/runs/issue-5-run-16.md.)

  python3 lab/probes/swap_probe.py [--shape 16,4096,4096] [--config BM=16,BN=64,...] [--rounds 3]

For each shape and config (default: the shipped policy's, plus --config
ones), times the kernel with parts left out (the WG_SKIP bits that
hooks/wgmma_skip.patch adds to a copy of wgmma_gemm.cu: 1 no wgmma, 2 no
epilogue, 4 no copies of A, 8 no copies of B), so that
differences place the time, next to cuBLAS, the ideal read of the same
bytes and an empty launch, all after the write flush, in alternating rounds.
Then a timeline of each part that copies B (WG_SKIP bit 16:
each block stores %globaltimer at entry, at its first and last stage's
arrival and at exit) after a flush kernel that stores its own end time:
launch gap, entry spread, first arrival, streaming, tail.
"""
import argparse
import os
import statistics

import lab_common  # noqa: E402,F401  (bench/kernels on the path, the lab's flushes registered)
import common  # noqa: E402
from gemm import SPECS, shipped_config  # noqa: E402

PARTS = [(0, "everything"), (1, "no wgmma"), (3, "no wgmma, no epilogue"), (7, "B's copies only"),
         (11, "A's copies only"), (15, "no copies: launch, barriers, exit")]


def cfg_text(cfg):
    return " ".join(f"{k}{v}" for k, v in cfg.items())


def timeline(times, launch, blocks, flush, reps):
    """Medians over reps runs (after 5 unrecorded ones) of where the time goes
    from the end of `flush` (a lab_common.StampedFlush) to the last block's exit,
    in ns."""
    import numpy as np
    import torch
    rows = []
    for i in range(reps + 5):
        times.fill(0)
        flush.end.fill(0)
        flush()
        launch()
        torch.cuda.synchronize()
        t = times[: 4 * blocks].reshape(blocks, 4).get().astype("int64")
        end = int(flush.end.get()[0])
        entry, first, last, done = t[:, 0], t[:, 1], t[:, 2], t[:, 3]
        has = first > 0  # blocks that recorded arrivals (not an idle kernel)
        nan = float("nan")
        if i >= 5:
            rows.append({"launch gap": entry.min() - end, "entry spread": entry.max() - entry.min(),
                         "first arrival": float(np.median(first[has] - entry[has])) if has.any() else nan,
                         "streaming": float(np.median(last[has] - first[has])) if has.any() else nan,
                         "last arrival spread": float(last[has].max() - last[has].min()) if has.any() else nan,
                         "tail": float(done.max() - last[has].max()) if has.any() else nan,
                         "flush end to last exit": done.max() - end})
    return {k: float(np.median([r[k] for r in rows])) for k in rows[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", action="append", default=[], help="M,K,N (repeat; default 16,4096,4096 and 1,4096,4096)")
    ap.add_argument("--config", action="append", default=[], help="NAME=V,...: a whole config to add (every shape)")
    ap.add_argument("--vary", action="append", default=[],
                    help="NAME=V,...: the shipped config with these values changed (repeat)")
    ap.add_argument("--parts", default=",".join(str(p) for p, _ in PARTS),
                    help="WG_SKIP values to time for the shipped config (the others: 0 and 7)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=100, help="samples per figure")
    ap.add_argument("--timeline-reps", type=int, default=40)
    ap.add_argument("--out", default="/tmp/swap-probe")
    a = ap.parse_args()
    import cupy as cp
    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    parts = [(p, dict(PARTS).get(p, f"WG_SKIP {p}")) for p in (int(x) for x in a.parts.split(","))]
    spec = SPECS["swap"]
    flush = lab_common.StampedFlush()
    # STREAM_SRC with its timestamps: the ideal read's kernels and an empty launch
    smod = cp.RawModule(code=lab_common.STREAM_SRC, options=("-std=c++17", "-DSTREAM_TIMELINE"))
    stimes = lab_common.module_global(smod.get_function("empty_kernel"), "probe_times")

    with common.torch_stream():
        print(f"%globaltimer step: {flush.timer_step_ns()} ns")
        print(f"empty launch: {lab_common.empty_kernel_us('write'):.2f} us (write flush)")

        def print_timeline(title, rows):
            keys = list(rows[0][1])
            print(f"\n{title} ({a.timeline_reps} runs, medians, ns)\n| kernel | " + " | ".join(keys) + " |")
            print("|---|" + "---|" * len(keys))
            for what, med in rows:
                print(f"| {what} | " + " | ".join("-" if med[k] != med[k] else f"{med[k]:.0f}" for k in keys) + " |")

        out = cp.zeros(1 << 16, dtype=cp.float32)
        empty = smod.get_function("empty_kernel")
        rows = []
        for smem in (0, 48 * 1024, 100 * 1024, 160 * 1024, 220 * 1024):
            if smem > 48 * 1024:
                empty.max_dynamic_shared_size_bytes = smem
            rows.append((f"empty, {sms} x 1024, {smem // 1024} KiB shared",
                         timeline(stimes, lambda s=smem: empty((sms,), (1024,), (out,), shared_mem=s), sms,
                                  flush, a.timeline_reps)))
        print_timeline("timeline of an empty launch", rows)

        for shape in a.shape or ["16,4096,4096", "1,4096,4096"]:
            m, k, n = (int(x) for x in shape.split(","))
            size = dict(M=m, K=k, N=n, B_NK=1)
            x = torch.empty(m, k, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
            w = torch.empty(n, k, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            ref = x.float() @ w.float().t()
            nbytes = 2 * (m * k + n * k + m * n)
            read = common.stream_read_us(nbytes, "write")
            print(f"\n## ({m}, {k}, {n})\nideal read of its bytes: {read[0]:.2f} us ({read[1]})")
            tuned = shipped_config("swap", size)
            configs = [(tuned, parts)] if tuned else []
            others = [(0, "everything"), (7, "B's copies only")]
            configs += [(dict(tuned, **common.parse_config(v)), others) for v in a.vary if tuned]
            configs += [(common.parse_config(t), others) for t in a.config]

            def launch(cfg, skip):
                hooked = lab_common.hooked_kernel_dir(os.path.dirname(spec), "wgmma_skip.patch", {"WG_SKIP": skip})
                return common.SpecLaunch(os.path.join(hooked, os.path.basename(spec)), cfg, size, dict(A=x, B=w, C=c),
                                         os.path.join(a.out, f"wg_skip{skip}"))
            launches = [("cuBLAS", lambda: torch.matmul(x, w.t()))]
            for cfg, cparts in configs:
                for skip, what in cparts:
                    la = launch(cfg, skip)
                    if skip == 0:
                        c.zero_()
                        la()
                        torch.cuda.synchronize()
                        print(f"{cfg_text(cfg)}: max abs diff against fp32 {(c.float() - ref).abs().max().item():.3g}")
                    launches.append((f"{cfg_text(cfg)} | {what}", la))
            rounds = {name: [] for name, _ in launches}
            for _ in range(a.rounds):
                for name, fn in launches:
                    rounds[name].append(common.timed_us(fn, "write", n=a.n))
            print("\n| kernel | what | us (rounds) | median | over the ideal read |\n|---|---|---|---|---|")
            for name, _ in launches:
                r = rounds[name]
                med = statistics.median(r)
                cfg_s, _, what = name.partition(" | ")
                print(f"| {cfg_s} | {what or '-'} | {', '.join(f'{v:.2f}' for v in r)} | {med:.2f} | {med - read[0]:+.2f} |")

            rows = []
            buf = cp.zeros(nbytes // 4, dtype=cp.uint32)
            for kernel, blocks in (("bulk_16384_4_1_1", 2 * sms), ("bulk_16384_4_1_1", sms), ("bulk_16384_4_0_1", 64)):
                fn, smem = smod.get_function(kernel), common.stream_smem(kernel, 32)
                fn.max_dynamic_shared_size_bytes = smem
                args = common.stream_args(kernel, buf, nbytes, out)
                f = (lambda fn_, args_, b_, s_: lambda: fn_((b_,), (32,), args_, shared_mem=s_))(fn, args, blocks, smem)
                rows.append((f"read: {kernel}, {blocks} blocks", timeline(stimes, f, blocks, flush, a.timeline_reps)))
            del buf
            for cfg, cparts in configs:
                for skip in sorted({p for p, _ in cparts} - {11, 15}):  # the parts that stream B
                    la = launch(cfg, skip | 16)
                    rows.append((f"{cfg_text(cfg)} | {dict(PARTS)[skip]}",
                                 timeline(lab_common.module_global(la.fn, "probe_times"), la, la.grid[0], flush,
                                          a.timeline_reps)))
            print_timeline(f"timeline, ({m}, {k}, {n})", rows)


if __name__ == "__main__":
    main()
