"""The three Triton kernels on the GPU: correct first, then against their peers.

  python3 bench/triton/kernels_check.py [--quick] [--summary FILE] [--only correct,prefill,decode,moe]

1. Correctness against float32 torch references on fresh random inputs:
   fused MoE (the layer and the grouped GEMM), prefill attention (head dims
   64/128, causal or not, with a prefix, contiguous and paged), decode
   attention (GQA, several splits, two launches to check the counter reset).
2. Prefill attention against torch SDPA (flash backend), MHA, bf16, D 64 and
   128, causal and not, L 1k/4k/16k with B*L = 16k tokens: our kernel's best
   of a small grid of configs (compiled in parallel first), both timed by the
   same cold-L2 event median; TFLOP/s against a bf16 matmul peak measured in
   the same run.
3. Decode attention against torch SDPA (enable_gqa) on four shapes.
4. The MoE layer (Mixtral 8x7B, TP 2) against plain torch (routing, then
   per-expert matmuls) at batch sizes 1 to 4096, with one fixed config.
--only picks parts by those names: correct (1), prefill (2), decode (3), moe (4).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

common.add_kernel_paths()
torch = common.torch  # None without torch: main() says so after parsing its flags
if torch is not None:
    import torch.nn.functional as F  # noqa: E402
    import triton  # noqa: E402


def rel_err(out, ref):
    out, ref = out.float(), ref.float()
    return float((out - ref).norm() / ref.norm())


def check_correctness(log):
    import decode_attention as da
    import fused_moe as fm
    import prefill_attention as pa

    rows = []
    torch.manual_seed(0)
    for m, e, topk, h, i in [(1, 8, 2, 4096, 7168), (37, 8, 2, 4096, 7168), (256, 64, 6, 2048, 1408)]:
        x = torch.randn(m, h, device="cuda", dtype=torch.bfloat16)
        w1 = torch.randn(e, 2 * i, h, device="cuda", dtype=torch.bfloat16) / math.sqrt(h)
        w2 = torch.randn(e, h, i, device="cuda", dtype=torch.bfloat16) / math.sqrt(i)
        g = torch.randn(m, e, device="cuda")
        cfg = dict(BLOCK_SIZE_M=16 if m < 64 else 64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=64, GROUP_SIZE_M=1, num_warps=4,
                   num_stages=3)
        y = fm.fused_moe(x, w1, w2, g, topk, cfg)
        ref = fm.torch_moe(x.float(), w1.float(), w2.float(), g, topk)
        rows.append(("fused_moe", f"M={m} E={e} top{topk} H={h} I={i}", f"{rel_err(y, ref):.2e}"))
    for b, hq, hkv, lq, p, d, causal, paged in [(2, 8, 2, 300, 0, 128, True, False), (1, 4, 4, 257, 100, 64, True, False),
                                                (2, 8, 8, 200, 0, 64, False, False), (2, 8, 2, 190, 77, 128, True, True)]:
        lk = p + lq
        q = torch.randn(b, hq, lq, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, lk, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, hkv, lk, d, device="cuda", dtype=torch.bfloat16)
        cfg = dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=2)
        if paged:
            s = pa.paged_setup({"k": k, "v": v}, {"PAGE_SIZE": 16})
            o = pa.prefill_attention(q, s["k_pages"], s["v_pages"], causal, cfg, block_table=s["block_table"],
                                     page_size=16, lk=lk)
        else:
            o = pa.prefill_attention(q, k, v, causal, cfg)
        r = pa.attention_reference(q, k, v, causal=causal)
        rows.append(("prefill", f"B={b} Hq={hq} Hkv={hkv} Lq={lq} P={p} D={d} causal={causal} paged={paged}",
                     f"{rel_err(o, r):.2e}"))
    for b, hq, hkv, length, splits in [(1, 4, 1, 2048, 8), (4, 32, 8, 1000, 1), (2, 16, 2, 5000, 16)]:
        q = torch.randn(b, hq, 128, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, length, 128, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, hkv, length, 128, device="cuda", dtype=torch.bfloat16)
        scratch = da.workspace(b, hq, hkv, 128, splits, "cuda")
        errs = []
        for _ in range(2):
            o = da.decode_attention(q, k, v, dict(SPLITS=splits, BLOCK_N=64), scratch)
            errs.append(rel_err(o, da.decode_reference(q, k, v)))
        rows.append(("decode", f"B={b} Hq={hq} Hkv={hkv} L={length} SPLITS={splits}",
                     " / ".join(f"{x:.2e}" for x in errs) + f", counters {int(scratch[2].sum())}"))
    log(common.table(rows, ["kernel", "case", "rel. error (bf16: < 1e-2)"]))
    return rows


def matmul_peak():
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    us = common.event_median(lambda: a @ b, reps=10, cold=False)
    return 2 * 8192 ** 3 / us / 1e6  # TFLOP/s


PREFILL_CONFIGS = [dict(BLOCK_M=bm, BLOCK_N=bn, num_warps=w, num_stages=s)
                   for bm in (64, 128) for bn in (32, 64, 128) for w in (4, 8) for s in (2, 3, 4)]


def prefill_vs_sdpa(log, quick, peak):
    import prefill_attention as pa
    from torch.nn.attention import SDPBackend, sdpa_kernel

    configs = PREFILL_CONFIGS[::5] if quick else PREFILL_CONFIGS
    shapes = [(d, causal, length) for d in (64, 128) for causal in (False, True) for length in (1024, 4096, 16384)]
    # Compile every (D, causal, config) ahead, in parallel (lengths share binaries: all are multiples of 16).
    jobs = []
    for d in (64, 128):
        for causal in (False, True):
            for c in configs:
                jobs.append(("prefill_attention", "prefill_attention_kernel",
                             dict(q=("tensor", "bfloat16"), k=("tensor", "bfloat16"), v=("tensor", "bfloat16"),
                                  o=("tensor", "bfloat16"), block_table=("tensor", "bfloat16"), sm_scale=0.1,
                                  Lq=1024, Lk=1024, H_Q=32, H_KV=32, max_pages=0, BLOCK_M=c["BLOCK_M"],
                                  BLOCK_N=c["BLOCK_N"], HEAD_DIM=d, CAUSAL=causal, PAGED=False, PAGE_SIZE=16,
                                  num_warps=c["num_warps"], num_stages=c["num_stages"])))
    t0 = time.perf_counter()
    compiled = common.compile_all(jobs)
    log(f"prefill: compiled {len(jobs)} variants in {time.perf_counter() - t0:.1f} s "
        f"({sum(1 for c in compiled if c[0] == 'ok')} ok)")
    ok = {(j[2]["HEAD_DIM"], j[2]["CAUSAL"], j[2]["BLOCK_M"], j[2]["BLOCK_N"], j[2]["num_warps"], j[2]["num_stages"])
          for j, c in zip(jobs, compiled) if c[0] == "ok"}
    rows, results = [], []
    for d, causal, length in shapes:
        h = 32
        b = 16384 // length
        q = torch.randn(b, h, length, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, h, length, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, h, length, d, device="cuda", dtype=torch.bfloat16)
        flops = 4 * b * h * length * length * d * (0.5 if causal else 1.0)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            sdpa_us = common.event_median(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), reps=20)
        best = None
        for c in configs:
            if (d, causal, c["BLOCK_M"], c["BLOCK_N"], c["num_warps"], c["num_stages"]) not in ok:
                continue
            us = common.event_median(lambda: pa.prefill_attention(q, k, v, causal, c), reps=10)
            if best is None or us < best[0]:
                best = (us, c)
        us, c = best
        us = common.event_median(lambda: pa.prefill_attention(q, k, v, causal, c), reps=30)  # the winner, re-timed
        err = rel_err(pa.prefill_attention(q[:1, :2], k[:1, :2], v[:1, :2], causal, c),
                      pa.attention_reference(q[:1, :2], k[:1, :2], v[:1, :2], causal=causal))
        rows.append((d, causal, length, b, f"{sdpa_us:.1f}", f"{us:.1f}", f"{sdpa_us / us:.2f}x",
                     f"{flops / us / 1e6:.0f}", f"{flops / us / 1e6 / peak:.2f}",
                     f"{c['BLOCK_M']}/{c['BLOCK_N']}/w{c['num_warps']}/s{c['num_stages']}", f"{err:.1e}"))
        results.append(dict(d=d, causal=causal, length=length, batch=b, sdpa_us=sdpa_us, triton_us=us, config=c))
    log(common.table(rows, ["D", "causal", "L", "B", "SDPA flash us", "ours us", "SDPA/ours", "TFLOP/s",
                            "of peak", "config BM/BN/warps/stages", "rel err"]))
    return results


def decode_vs_sdpa(log, quick):
    import decode_attention as da

    configs = [dict(SPLITS=s, BLOCK_N=bn, num_warps=4, num_stages=st)
               for s in (1, 2, 4, 8, 16, 32) for bn in (32, 64, 128) for st in (2, 3)]
    if quick:
        configs = configs[::4]
    rows, results = [], []
    for b, hq, hkv, length in [(1, 4, 1, 2048), (32, 32, 8, 4096), (8, 32, 8, 32768), (64, 64, 8, 2048)]:
        q = torch.randn(b, hq, 128, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, length, 128, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, hkv, length, 128, device="cuda", dtype=torch.bfloat16)
        sdpa_us = common.event_median(lambda: F.scaled_dot_product_attention(
            q[:, :, None], k, v, enable_gqa=True), reps=30)
        best = None
        for c in configs:
            scratch = da.workspace(b, hq, hkv, 128, c["SPLITS"], "cuda")
            try:
                us = common.event_median(lambda: da.decode_attention(q, k, v, c, scratch), reps=10)
            except Exception as e:  # a config over the limits
                continue
            if best is None or us < best[0]:
                best = (us, c)
        us, c = best
        scratch = da.workspace(b, hq, hkv, 128, c["SPLITS"], "cuda")
        us = common.event_median(lambda: da.decode_attention(q, k, v, c, scratch), reps=30)
        err = rel_err(da.decode_attention(q, k, v, c, scratch), da.decode_reference(q, k, v))
        gb = 2 * b * hkv * length * 128 * 2 / 1e9
        rows.append((b, hq, hkv, length, f"{sdpa_us:.1f}", f"{us:.1f}", f"{sdpa_us / us:.2f}x",
                     f"{gb / us * 1e6 / 1e3:.2f}", f"{c['SPLITS']}/{c['BLOCK_N']}/s{c['num_stages']}", f"{err:.1e}"))
        results.append(dict(b=b, hq=hq, hkv=hkv, length=length, sdpa_us=sdpa_us, triton_us=us, config=c))
    log(common.table(rows, ["B", "Hq", "Hkv", "L", "SDPA us", "ours us", "SDPA/ours", "TB/s (K+V)",
                            "SPLITS/BN/stages", "rel err"]))
    return results


def moe_vs_torch(log, quick):
    import fused_moe as fm

    e, topk, h, i = 8, 2, 4096, 14336 // 2
    torch.manual_seed(1)
    w1 = torch.randn(e, 2 * i, h, device="cuda", dtype=torch.bfloat16) / math.sqrt(h)
    w2 = torch.randn(e, h, i, device="cuda", dtype=torch.bfloat16) / math.sqrt(i)
    rows, results = [], []
    for m in ((1, 64, 4096) if quick else (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)):
        x = torch.randn(m, h, device="cuda", dtype=torch.bfloat16)
        g = torch.randn(m, e, device="cuda")
        cfg = dict(BLOCK_SIZE_M=16 if m <= 32 else 64 if m <= 512 else 128, BLOCK_SIZE_N=64 if m <= 32 else 128,
                   BLOCK_SIZE_K=128 if m <= 32 else 64, GROUP_SIZE_M=1 if m <= 32 else 16, num_warps=4,
                   num_stages=4 if m <= 512 else 3)
        ours = common.event_median(lambda: fm.fused_moe(x, w1, w2, g, topk, cfg), reps=15)
        plain = common.event_median(lambda: fm.torch_moe(x, w1, w2, g, topk), reps=15)
        rows.append((m, f"{plain:.1f}", f"{ours:.1f}", f"{plain / ours:.2f}x"))
        results.append(dict(m=m, torch_us=plain, triton_us=ours, config=cfg))
    log(common.table(rows, ["batch", "torch per-expert us", "fused_moe us (fixed config)", "torch/ours"]))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer configs and batch sizes")
    ap.add_argument("--summary", default="", help="write the figures to this JSON file")
    ap.add_argument("--only", default="correct,prefill,decode,moe", help="the parts to run, comma-separated")
    a = ap.parse_args()
    unknown = sorted(set(a.only.split(",")) - {"correct", "prefill", "decode", "moe"})
    if unknown:
        ap.error(f"--only takes correct, prefill, decode and moe, not {', '.join(unknown)}")
    common.require_gpu_torch()
    lines = []

    def log(s):
        print(s, flush=True)
        lines.append(s)

    log(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    summary = {}
    only = a.only.split(",")
    if "correct" in only:
        summary["correctness"] = check_correctness(log)
    peak = matmul_peak()
    log(f"bf16 matmul 8192^3 peak (torch.matmul, hot): {peak:.0f} TFLOP/s")
    summary["peak_tflops"] = peak
    if "prefill" in only:
        summary["prefill"] = prefill_vs_sdpa(log, a.quick, peak)
    if "decode" in only:
        summary["decode"] = decode_vs_sdpa(log, a.quick)
    if "moe" in only:
        summary["moe"] = moe_vs_torch(log, a.quick)
    common.save(a.summary, summary)


if __name__ == "__main__":
    main()
