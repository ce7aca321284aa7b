#!/usr/bin/env python3
"""What does trying one config of vLLM's fused-MoE space cost? (issue #21:
what an exhaustive sweep of its space, vLLM's method, costs per config.)

  python3 lab/probes/moe_config_cost_probe.py [--summary FILE]

Compiles 48 configs sampled from vLLM's space (the grouped GEMM of Mixtral
8x7B, TP 2: E 8, top 2, H 4096, N 14336) 16 at a time, then times 12 of those
that compiled by vLLM's timer (bench/triton/common.vllm_graph_time) at batch
1, 64 and 4096: seconds per config, and the kernel's fastest and slowest.
Run 1 of lab/runs/triton/ ran it as `kernels_check.py`'s `probe` part.
"""
import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "bench", "triton"))
import common  # noqa: E402  (bench/triton's: its compile pool and vLLM's timer)

common.add_kernel_paths()
torch = common.torch  # None without torch: main() says so after parsing its flags


def sweep_probe(log):
    """What one config of vLLM's MoE space costs: compile (in parallel) and vLLM's timer."""
    import fused_moe as fm

    space = [dict(BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=g, num_warps=w, num_stages=s)
             for bm in (16, 32, 64, 128, 256) for bn in (32, 64, 128, 256) for bk in (64, 128, 256)
             for g in (1, 16, 32, 64) for w in (4, 8) for s in (2, 3, 4, 5)]
    sample = random.Random(3).sample(space, 48)
    e, topk, h, n = 8, 2, 4096, 14336
    jobs = [("fused_moe", "fused_moe_kernel",
             dict(a=("tensor", "bfloat16"), b=("tensor", "bfloat16"), c=("tensor", "bfloat16"),
                  topk_weights=("tensor", "float32"), sorted_token_ids=("tensor", "int32"),
                  expert_ids=("tensor", "int32"), num_tokens_post_padded=("tensor", "int32"), N=n, K=h, EM=1000,
                  num_valid_tokens=2, top_k=topk, **{k: c[k] for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
                                                                         "GROUP_SIZE_M", "num_warps", "num_stages")}))
            for c in sample]
    t0 = time.perf_counter()
    compiled = common.compile_all(jobs)
    wall = time.perf_counter() - t0
    ok = [c for c, r in zip(sample, compiled) if r[0] == "ok"]
    log(f"moe probe: {len(jobs)} configs compiled in {wall:.1f} s on 16 processes ({len(ok)} ok; compile s each: "
        f"median {sorted(r[1] for r in compiled)[len(compiled) // 2]:.2f}); failures: "
        f"{sorted(set(r[0][:60] for r in compiled if r[0] != 'ok'))}")
    w1 = torch.randn(e, n, h, device="cuda", dtype=torch.bfloat16) / 64
    out = {}
    for m in (1, 64, 4096):
        x = torch.randn(m, h, device="cuda", dtype=torch.bfloat16)
        g = torch.randn(m, e, device="cuda")
        wts, ids = fm.moe_routing(g, topk)
        c_out = torch.empty(m * topk, n, device="cuda", dtype=torch.bfloat16)
        times, t0 = [], time.perf_counter()
        for c in ok[:12]:
            sid, eid, tot = fm.moe_align_block_size(ids, c["BLOCK_SIZE_M"], e)
            times.append(common.vllm_graph_time(
                lambda: fm.invoke_grouped_gemm(x, w1, c_out, wts.flatten(), sid, eid, tot, topk, c, False)))
        per = (time.perf_counter() - t0) / max(1, len(times))
        out[m] = dict(seconds_per_config=per, best_us=min(times), median_us=sorted(times)[len(times) // 2])
        log(f"moe probe M={m}: vLLM timer {per:.3f} s per config; kernel {min(times):.1f}..{max(times):.1f} us")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--summary", default="", help="write the figures to this JSON file")
    a = ap.parse_args()
    common.require_gpu_torch()
    import triton

    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}", flush=True)
    common.save(a.summary, {"probe": sweep_probe(lambda s: print(s, flush=True))})


if __name__ == "__main__":
    main()
