"""tunekit against @triton.autotune: a planted fault, then the same configs side by side.

  python3 bench/triton/autotune_fault.py --tunekit BIN --out DIR [--configs 16] [--batch 64]

1. Fault: bench/triton/fault/faulty.py over three configs, one of which reads
   1 GiB past its buffer. @triton.autotune benchmarks them inside the serving
   process (here a child process, so this script survives to report); tunekit
   tunes faulty.yaml over the same three.
2. Same configs: the fused-MoE grouped GEMM (Mixtral TP 2 gate-up, batch
   --batch) over --configs configs drawn from vLLM's space: @triton.autotune
   (its first call compiles and benchmarks them, in the process, one by one)
   against `tunekit tune` with the same configs listed in the spec. Both wall
   times, both picks, and each pick timed again by one timer.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

AUTOTUNE_FAULT = textwrap.dedent("""
    import sys, torch, triton
    sys.path.insert(0, {fault_dir!r})
    import faulty
    configs = [triton.Config({{"BLOCK": 256, "OFFSET": 0}}, num_warps=4),
               triton.Config({{"BLOCK": 1024, "OFFSET": 268435456}}, num_warps=4),
               triton.Config({{"BLOCK": 1024, "OFFSET": 0}}, num_warps=4)]
    tuned = triton.autotune(configs=configs, key=["n"])(faulty.faulty_copy)
    n = 16777216
    x = torch.randn(n, device="cuda"); y = torch.empty_like(x)
    tuned[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    torch.cuda.synchronize()
    print("autotune finished; picked", tuned.best_config)
""")


def fault(args, log):
    script = AUTOTUNE_FAULT.format(fault_dir=os.path.join(HERE, "fault"))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    tail = [l for l in (p.stdout + p.stderr).strip().splitlines() if l.strip()][-2:]
    log(f"@triton.autotune with a faulting config: exit {p.returncode} after {time.perf_counter() - t0:.1f} s: "
        + " | ".join(tail))
    cmd = [args.tunekit, "tune", os.path.join(HERE, "fault", "faulty.yaml"), "-o", os.path.join(args.out, "fault"),
           "--no-progress", "--fresh"]
    t0 = time.perf_counter()
    q = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    out = (q.stdout + q.stderr).strip().splitlines()
    log(f"tunekit with the same configs: exit {q.returncode} after {time.perf_counter() - t0:.1f} s:")
    for line in out:
        if line.startswith(("No.", "best:", "3 trials")) or "trials:" in line:
            log("  " + line[:220])
    return dict(autotune_exit=p.returncode, autotune_tail=tail, tunekit_exit=q.returncode,
                tunekit_lines=[l for l in out if l.startswith("No.")])


AUTOTUNE_MOE = textwrap.dedent("""
    import json, sys, time, torch, triton
    sys.path.insert(0, {kdir!r})
    import fused_moe as fm
    configs = json.loads({configs!r})
    E, TOPK, N, K, M = 8, 2, 14336, 4096, {m}
    torch.manual_seed(0)
    w = torch.randn(E, N, K, device="cuda", dtype=torch.bfloat16) / 64
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    g = torch.randn(M, E, device="cuda")
    wts, ids = fm.moe_routing(g, TOPK)
    c = torch.empty(M * TOPK, N, device="cuda", dtype=torch.bfloat16)
    # one alignment per BLOCK_SIZE_M, as the serving code would hold
    aligned = {{bm: fm.moe_align_block_size(ids, bm, E) for bm in (16, 32, 64, 128, 256)}}
    meta_keys = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M")
    tconfigs = [triton.Config({{k: cf[k] for k in meta_keys}}, num_warps=cf["num_warps"], num_stages=cf["num_stages"])
                for cf in configs]
    tuned = triton.autotune(configs=tconfigs, key=["N", "K"])(fm.fused_moe_kernel)
    # Every config sees the layout padded for its BLOCK_SIZE_M: the largest buffers, filled per config by
    # a pre-hook would be the serving code's job; here the padded length of BLOCK_SIZE_M = 256 serves all,
    # with each config's own sorted ids written in front.
    em = fm.max_padded_tokens(M * TOPK, E, 256)
    sid_buf = torch.full((em,), M * TOPK, dtype=torch.int32, device="cuda")
    eid_buf = torch.zeros((em // 16 + 1,), dtype=torch.int32, device="cuda")
    tot_buf = torch.zeros((1,), dtype=torch.int32, device="cuda")
    def hook(nargs):
        sid, eid, tot = aligned[nargs["BLOCK_SIZE_M"]]
        sid_buf.fill_(M * TOPK); sid_buf[: sid.numel()].copy_(sid)
        eid_buf[: eid.numel()].copy_(eid); tot_buf.copy_(tot)
    for cf in tuned.configs:
        cf.pre_hook = hook
    grid = lambda meta: (triton.cdiv(em, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)
    t0 = time.perf_counter()
    tuned[grid](x, w, c, wts.flatten(), sid_buf, eid_buf, tot_buf, N, K, em, M * TOPK, TOPK)
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    best = tuned.best_config
    pick = dict(best.kwargs); pick.update(num_warps=best.num_warps, num_stages=best.num_stages)
    print(json.dumps({{"wall_s": wall, "pick": pick}}))
""")


def same_configs(args, log):
    sys.path.insert(0, HERE)
    from moe_vs_vllm import KEYS, vllm_space

    space = [c for c in vllm_space()
             if (c["BLOCK_SIZE_M"] + c["BLOCK_SIZE_N"]) * c["BLOCK_SIZE_K"] * 2 * (c["num_stages"] - 1) <= 232448]
    configs = random.Random(11).sample(space, args.configs)
    script = AUTOTUNE_MOE.format(kdir=os.path.join(common.ROOT, "kernels", "fused_moe"), configs=json.dumps(configs),
                                 m=args.batch)
    env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(prefix="autotune-cache-"))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=env)
    process_wall = time.perf_counter() - t0
    try:
        at = json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])
    except (IndexError, ValueError):
        log("autotune run failed: " + (p.stdout + p.stderr)[-800:])
        return {}
    # tunekit over the same configs: the spec with `configs:` listing them.
    with open(os.path.join(common.ROOT, "kernels", "fused_moe", "fused_moe.yaml")) as f:
        spec = f.read()
    spec = spec.replace("search: {strategy: random, max_evals: 48}", "configs:\n" + "".join(
        "  - {" + ", ".join(f"{k}: {c[k]}" for k in KEYS) + "}\n" for c in configs))
    spec = spec.replace("source: fused_moe.py", "source: " + os.path.join(common.ROOT, "kernels/fused_moe/fused_moe.py"))
    spec = spec.replace("python: fused_moe.py", "python: " + os.path.join(common.ROOT, "kernels/fused_moe/fused_moe.py"))
    spec_file = os.path.join(args.out, "fused_moe_same_configs.yaml")
    with open(spec_file, "w") as f:
        f.write(spec)
    cmd = [args.tunekit, "tune", spec_file, "-a", "E=[8]", "-a", "topk=[2]", "-a", "N=[14336]", "-a", "K=[4096]",
           "-a", f"M=[{args.batch}]", "-o", os.path.join(args.out, "same"), "--no-progress", "--fresh"]
    t0 = time.perf_counter()
    q = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    tk_wall = time.perf_counter() - t0
    with open(os.path.join(args.out, "same", "fused_moe.json")) as f:
        report = json.load(f)
    tk_pick = report["sizes"][0]["best"]["config"]
    # Both picks, one timer.
    import torch

    sys.path.insert(0, HERE)
    from moe_vs_vllm import Problem, vllm_time

    torch.manual_seed(0)
    w1 = torch.randn(8, 14336, 4096, device="cuda", dtype=torch.bfloat16) / 64
    problem = Problem(args.batch, w1)
    t_at = min(vllm_time(problem, at["pick"]) for _ in range(3))
    t_tk = min(vllm_time(problem, tk_pick) for _ in range(3))
    log(common.table([("@triton.autotune", f"{at['wall_s']:.1f} (first call; process {process_wall:.1f})",
                       f"{t_at:.1f}", " ".join(str(at['pick'][k]) for k in KEYS)),
                      ("tunekit tune", f"{tk_wall:.1f}", f"{t_tk:.1f}", " ".join(str(tk_pick[k]) for k in KEYS))],
                     ["tuner", f"wall s ({args.configs} configs, M={args.batch})", "pick us (vLLM timer)",
                      "pick BM BN BK G w s"]))
    log("tunekit: " + " ".join(l for l in (q.stdout + q.stderr).splitlines() if "trials:" in l or l.startswith("time:")))
    return dict(autotune_wall_s=at["wall_s"], autotune_process_s=process_wall, autotune_pick=at["pick"],
                autotune_pick_us=t_at, tunekit_wall_s=tk_wall, tunekit_pick=tk_pick, tunekit_pick_us=t_tk)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tunekit", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", type=int, default=16)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--summary", default="")
    ap.add_argument("--only", default="fault,same")
    args = ap.parse_args()
    common.require_gpu_torch()
    os.makedirs(args.out, exist_ok=True)

    def log(s):
        print(s, flush=True)

    summary = {}
    if "fault" in args.only:
        summary["fault"] = fault(args, log)
    if "same" in args.only:
        summary["same_configs"] = same_configs(args, log)
    common.save(args.summary, summary)


if __name__ == "__main__":
    main()
