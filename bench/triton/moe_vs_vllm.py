"""tunekit's tune of the fused-MoE grouped GEMM against vLLM's tuning method, in one run.

  python3 bench/triton/moe_vs_vllm.py --tunekit BIN --out DIR [--sweep-batches 1] [--sweep-part K/N]
                                      [--previous SUMMARY [--keep-tunekit]] [--sweep-cache DIR]
                                      [--summary FILE] [--times FILE] [--sweep-cut F] [--batches 1,2,...,4096]

The shape: Mixtral 8x7B at TP 2, the gate-up GEMM (E=8, top-2, N=14336, K=4096),
bf16, batch sizes 1 to 4096.
1. tunekit: `tunekit tune kernels/fused_moe/fused_moe.yaml` on that shape at every
   batch size (the spec's search: auto, 96 configs per size, after pruning by
   shared memory and duplicate group orders; hot CUDA-graph timing as vLLM's).
2. vLLM's method, written here from benchmarks/kernels/benchmark_moe.py: every
   config of its published space (1,920) at each batch size of --sweep-batches,
   timed as it times them (a CUDA graph of 10 invocations, 5 warm-up replays,
   the mean of 20 replays). One favour to the sweep: its configs are compiled
   ahead in 16 processes (vLLM compiles each inside its timing loop, one by
   one), so its wall time here is shorter than vLLM's own.
   The whole sweep takes longer than a session's device time (batch 4096
   alone about 45 minutes), so a run can sweep one part of the space
   (--sweep-part K/N: the configs at positions K modulo N) and carry on the
   record of earlier runs (--previous, a summary this script wrote):
   bench/triton/sweep_record.py merges them, and a batch size counts as
   swept once its parts cover the space. The summary lists what is left.
   Runs that follow each other on one machine can share the sweep's Triton
   cache (--sweep-cache; the record keeps each part's first, cold compile
   time) and tunekit's tune (--keep-tunekit: the chosen configs and wall of
   --previous, so that every batch size is judged against one tune).
   --sweep-cut F shortens the sweep where most configs are slow (batch 512
   and up): a config whose one timed launch is over F times the best time
   so far is not timed further (it cannot be the best). The sweep times
   tunekit's pick first, so the bar is low from the start. What vLLM's timer
   would have spent on a cut config is estimated (its launch time times the
   timer's launches, plus the per-config overhead the full timings show),
   so the sweep's wall time stays vLLM's, and the summary says how much of
   it is estimated.
3. The full 13-batch sweep's wall time: the compile time measured in 2, each
   swept batch size's timing, and for the others the per-config timing cost
   measured on a sample of configs times the configs that compile.
4. Quality: at every batch size, tunekit's chosen config and (where swept)
   the sweep's best are timed again by vLLM's timer, alternating, 2 rounds;
   the ratio is sweep best / tunekit's choice (>= 0.98 is the goal).
5. The layer: fused_moe with tunekit's configs against plain torch (routing,
   then per-expert matmuls), Mixtral TP 2 (both GEMMs), each in eager mode,
   and ours also replayed from a CUDA graph.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import sweep_record  # noqa: E402

common.add_kernel_paths()

BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
E, TOPK, N, K = 8, 2, 14336, 4096
KEYS = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages")


def vllm_space():
    return [dict(zip(KEYS, v)) for v in
            [(bm, bn, bk, g, w, s) for bm in (16, 32, 64, 128, 256) for bn in (32, 64, 128, 256)
             for bk in (64, 128, 256) for g in (1, 16, 32, 64) for w in (4, 8) for s in (2, 3, 4, 5)]]


def run_tunekit(args, log):
    batches = ",".join(str(b) for b in args.batches)
    cmd = [args.tunekit, "tune", os.path.join(common.ROOT, "kernels/fused_moe/fused_moe.yaml"),
           "-a", f"E=[{E}]", "-a", f"topk=[{TOPK}]", "-a", f"N=[{N}]", "-a", f"K=[{K}]", "-a", f"M=[{batches}]",
           "-o", os.path.join(args.out, "tunekit"), "--no-progress", "--fresh"]
    log("$ " + " ".join(cmd))
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    with open(os.path.join(args.out, "tunekit.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-6:])
    log(f"tunekit tune: exit {p.returncode}, {wall:.1f} s wall\n{tail}")
    with open(os.path.join(args.out, "tunekit", "fused_moe.json")) as f:
        report = json.load(f)
    chosen, counts = {}, {}
    for s in report["sizes"]:
        m = s["size"]["M"]
        if s.get("best"):
            chosen[m] = s["best"]["config"]
        st = {}
        for t in s["trials"]:
            st[t["status"]] = st.get(t["status"], 0) + 1
        counts[m] = st
    return wall, chosen, counts


class Problem:
    def __init__(self, m, w1):
        import torch

        import fused_moe as fm

        self.fm = fm
        self.m = m
        self.x = torch.randn(m, K, device="cuda", dtype=torch.bfloat16)
        self.g = torch.randn(m, E, device="cuda")
        self.w1 = w1
        self.wts, self.ids = fm.moe_routing(self.g, TOPK)
        self.c = torch.empty(m * TOPK, N, device="cuda", dtype=torch.bfloat16)
        self.aligned = {}

    def fn(self, config):
        bm = config["BLOCK_SIZE_M"]
        if bm not in self.aligned:
            self.aligned[bm] = self.fm.moe_align_block_size(self.ids, bm, E)
        sid, eid, tot = self.aligned[bm]
        w = self.wts.flatten()
        return lambda: self.fm.invoke_grouped_gemm(self.x, self.w1, self.c, w, sid, eid, tot, TOPK, config, False)


def compile_space(space, log):
    jobs = [("fused_moe", "fused_moe_kernel",
             dict(a=("tensor", "bfloat16"), b=("tensor", "bfloat16"), c=("tensor", "bfloat16"),
                  topk_weights=("tensor", "float32"), sorted_token_ids=("tensor", "int32"),
                  expert_ids=("tensor", "int32"), num_tokens_post_padded=("tensor", "int32"), N=N, K=K, EM=1000,
                  num_valid_tokens=2, top_k=TOPK, **c)) for c in space]
    t0 = time.perf_counter()
    results = common.compile_all(jobs)
    wall = time.perf_counter() - t0
    ok = [c for c, r in zip(space, results) if r[0] == "ok"]
    log(f"sweep: compiled {len(space)} configs in {wall:.1f} s (16 processes): {len(ok)} ok, "
        f"{len(space) - len(ok)} over the device's resources")
    return wall, ok


def vllm_time(problem, config):
    try:
        return common.vllm_graph_time(problem.fn(config))
    except Exception:
        return math.inf


def sweep_batch(problem, configs, first, cut_factor):
    """Every config timed by vLLM's timer, `first` (when among them) first:
    [(us, config, cut)], and what the cut saved. With `cut_factor`, a config
    whose one launch is over that factor of the best so far keeps that
    launch's time; what vLLM's timer would have spent on it is estimated."""
    order = sorted(configs, key=lambda c: c != first)
    out, full = [], []  # full: (seconds, us) of each config timed in full
    best = math.inf
    for c in order:
        if cut_factor and math.isfinite(best):
            try:
                rough = common.one_launch_us(problem.fn(c))
            except Exception:
                rough = math.inf
            if rough > cut_factor * best:
                out.append((rough, c, True))
                continue
        t0 = time.perf_counter()
        us = vllm_time(problem, c)
        full.append((time.perf_counter() - t0, us))
        out.append((us, c, False))
        best = min(best, us)
    # A full timing costs its launches plus a per-config overhead (the graph's
    # capture, the syncs); the overhead is what the full timings show beyond
    # their launches.
    overheads = sorted(s - common.VLLM_LAUNCHES * us * 1e-6 for s, us in full if math.isfinite(us))
    overhead = max(0.0, overheads[len(overheads) // 2]) if overheads else 0.0
    cut = [us for us, _, was_cut in out if was_cut]
    estimated = sum(common.VLLM_LAUNCHES * us * 1e-6 + overhead for us in cut if math.isfinite(us))
    return out, dict(count=len(cut), estimated_s=estimated, full_s=sum(s for s, _ in full))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tunekit", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--batches", default=",".join(map(str, BATCHES)))
    ap.add_argument("--sweep-batches", default="1", help="batch sizes to sweep in this run (empty: none)")
    ap.add_argument("--sweep-part", default="0/1", help="K/N: sweep the configs at positions K modulo N")
    ap.add_argument("--sample", type=int, default=3, help="configs per batch size for the sweep-cost estimate")
    ap.add_argument("--summary", default="")
    ap.add_argument("--previous", default="", help="a summary of an earlier run: its sweep is carried on")
    ap.add_argument("--keep-tunekit", action="store_true",
                    help="take tunekit's tune from --previous instead of tuning again")
    ap.add_argument("--sweep-cache", default="", help="the sweep's Triton cache (default: a fresh one)")
    ap.add_argument("--times", default="",
                    help="append each swept batch size's time of every config to this JSON-lines file")
    ap.add_argument("--sweep-cut", type=float, default=0.0,
                    help="time no further a config whose one launch is over this factor of the best (0: off)")
    ap.add_argument("--no-layer", action="store_true")
    args = ap.parse_args()
    common.require_gpu_torch()
    if args.sweep_cut and args.sweep_cut < 1.5:
        sys.exit(f"moe_vs_vllm.py: --sweep-cut {args.sweep_cut}: expected 0 (off) or a factor >= 1.5, "
                 "far enough above one launch's noise")
    if args.keep_tunekit and not args.previous:
        sys.exit("moe_vs_vllm.py: --keep-tunekit takes the tune of --previous: give --previous SUMMARY")
    args.batches = [int(b) for b in args.batches.split(",")]
    sweep_batches = [int(b) for b in args.sweep_batches.split(",") if b]
    try:
        part = sweep_record.parse_part(args.sweep_part)
        record = sweep_record.empty()
        previous = {}
        if args.previous:
            with open(args.previous) as f:
                previous = json.load(f)
            record = sweep_record.load(previous.get("sweep"))
            if args.keep_tunekit and not previous.get("tunekit", {}).get("chosen"):
                raise sweep_record.SweepError(f"--keep-tunekit: {args.previous} has no tunekit configs to keep")
    except (sweep_record.SweepError, OSError, json.JSONDecodeError) as e:
        sys.exit(f"moe_vs_vllm.py: {e}")
    os.makedirs(args.out, exist_ok=True)
    lines = []

    def log(s):
        print(s, flush=True)
        lines.append(s)

    # The sweep compiles into a cache of its own, so neither side reuses the other's binaries.
    if args.sweep_cache:
        os.makedirs(args.sweep_cache, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = args.sweep_cache or tempfile.mkdtemp(prefix="sweep-cache-")
    summary = {}
    if args.keep_tunekit:
        summary["tunekit"] = previous["tunekit"]
        tk_wall = summary["tunekit"]["wall_s"]
        chosen = {int(m): c for m, c in summary["tunekit"]["chosen"].items()}
        log(f"tunekit's tune of {args.previous}: {tk_wall:.1f} s wall, configs at M in {sorted(chosen)}")
    else:
        tk_wall, chosen, counts = run_tunekit(args, log)
        summary["tunekit"] = dict(wall_s=tk_wall, chosen={str(k): v for k, v in chosen.items()},
                                  statuses={str(k): v for k, v in counts.items()})
    common.save(args.summary, summary)

    import torch

    torch.manual_seed(0)
    w1 = torch.randn(E, N, K, device="cuda", dtype=torch.bfloat16) / 64
    swept_before = sweep_record.swept(record)
    if args.previous:
        log(f"the sweep of {args.previous}: swept at M in {sorted(swept_before)}")
    # This run's part: compiled when it sweeps a batch size or the record
    # lacks a batch size's per-config cost.
    todo_cost = [m for m in args.batches
                 if m not in sweep_batches and m not in swept_before and str(m) not in record["per_config_s"]]
    valid = []
    compiled = None
    if sweep_batches or todo_cost:
        compile_s, valid = compile_space(sweep_record.part_of(vllm_space(), part), log)
        compiled = dict(seconds=compile_s, valid=len(valid))
    sweep_t0 = time.perf_counter()
    timed = {}
    if compiled is not None:
        record = sweep_record.merge(record, part, compiled, {})
    for m in sweep_batches:
        problem = Problem(m, w1)
        t0 = time.perf_counter()
        times, cut = sweep_batch(problem, valid, chosen.get(m), args.sweep_cut)
        best_us, best = min(((t, c) for t, c, _ in times), key=lambda t: t[0])
        wall = time.perf_counter() - t0
        timed[m] = dict(best=best, best_us=best_us, seconds=wall, timed=len(times))
        if args.sweep_cut:
            # The record's seconds stay vLLM's: the full timings as measured, the cut ones estimated.
            timed[m].update(seconds=cut["full_s"] + cut["estimated_s"], wall_s=wall, cut=cut["count"],
                            cut_estimated_s=cut["estimated_s"])
        log(f"sweep M={m}, part {args.sweep_part}: {len(times)} configs timed in {wall:.1f} s"
            + (f" ({cut['count']} cut after one launch; vLLM's timer: {timed[m]['seconds']:.1f} s, "
               f"{cut['estimated_s']:.1f} s of it estimated)" if args.sweep_cut else "")
            + f"; best {best_us:.2f} us {best}")
        if args.times:
            # Every config's time (null: failed; a cut config's is its one launch), for
            # replaying searches over the sweep's data.
            with open(args.times, "a") as f:
                f.write(json.dumps({"M": m, "part": args.sweep_part, "keys": list(KEYS),
                                    "times": [[c[k] for k in KEYS] + [t if math.isfinite(t) else None]
                                              for t, c, _ in times],
                                    "cut": [i for i, (_, _, was_cut) in enumerate(times) if was_cut]}) + "\n")
        # Saved after each batch size: a run cut short by its time limit keeps what it swept.
        record = sweep_record.merge(record, part, None, {m: timed[m]})
        summary["sweep"] = record
        common.save(args.summary, summary)
    sweep_wall = time.perf_counter() - sweep_t0
    # The per-config cost where no sweep says it: a sample of this part's configs.
    rng = random.Random(5)
    for m in todo_cost:
        if not valid:
            break
        problem = Problem(m, w1)
        sample = rng.sample(valid, min(args.sample, len(valid)))
        t0 = time.perf_counter()
        for c in sample:
            vllm_time(problem, c)
        record["per_config_s"][str(m)] = (time.perf_counter() - t0) / len(sample)
    # Measured costs replace sampled ones: a whole sweep's, else this part's.
    for m, e in timed.items():
        if e["timed"]:
            record["per_config_s"][str(m)] = e["seconds"] / e["timed"]
    sweep = sweep_record.swept(record)
    for m, e in sweep.items():
        record["per_config_s"][str(m)] = e["seconds"] / e["timed"]
    summary["sweep"] = record
    common.save(args.summary, summary)

    rows, ratios = [], []
    for m in args.batches:
        if m not in chosen:
            rows.append((m, "-", "-", "-", "no config ran"))
            continue
        problem = Problem(m, w1)
        ours, theirs = [], []
        for _ in range(2):
            ours.append(vllm_time(problem, chosen[m]))
            if m in sweep:
                theirs.append(vllm_time(problem, sweep[m]["best"]))
        ours_us = statistics.median(ours)
        if m in sweep:
            theirs_us = statistics.median(theirs)
            ratio = theirs_us / ours_us
            ratios.append(ratio)
            rows.append((m, f"{theirs_us:.2f}", f"{ours_us:.2f}", f"{ratio:.3f}",
                         " ".join(str(chosen[m][k]) for k in KEYS)))
        else:
            rows.append((m, "(not swept)", f"{ours_us:.2f}", "-", " ".join(str(chosen[m][k]) for k in KEYS)))
    log(common.table(rows, ["batch", "sweep best us", "tunekit us", "sweep/tunekit", "tunekit's config (BM BN BK G w s)"]))
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        log(f"geomean sweep/tunekit over swept batches: {geo:.3f}; worst {min(ratios):.3f}")
        summary["geomean"] = geo

    left = sweep_record.missing(record, args.batches, part[1])
    summary["sweep_left"] = {str(m): ks for m, ks in left.items()}
    if left:
        log(f"left to sweep (parts of {part[1]}): " + ", ".join(f"M={m}: {ks}" for m, ks in left.items()))
    estimate = sweep_record.full_wall(record, args.batches)
    log(f"sweep wall this run: {sweep_wall:.1f} s over M in {sweep_batches}, part {args.sweep_part}")
    if estimate is None:
        log("the whole sweep's wall time: not known yet (a part's compile or a batch size's cost is missing)")
    else:
        log("sweep cost per config (vLLM's timer, s): "
            + ", ".join(f"M={m}: {record['per_config_s'][str(m)]:.3f}" for m in args.batches))
        log(f"the whole {len(args.batches)}-batch sweep: {estimate:.0f} s ({'measured' if not left else 'estimated'}); "
            f"tunekit wall {tk_wall:.1f} s = {tk_wall / estimate:.1%} of it")
        summary["estimated_full_wall_s"] = estimate
    common.save(args.summary, summary)

    if not args.no_layer:
        # The layer against plain torch, with tunekit's configs (the gate-up config for both GEMMs, as vLLM's files do).
        w1l = torch.randn(E, N, K, device="cuda", dtype=torch.bfloat16) / 64
        w2l = torch.randn(E, K, N // 2, device="cuda", dtype=torch.bfloat16) / 64
        import fused_moe as fm

        rows = []
        layer = []
        for m in args.batches:
            if m not in chosen:
                continue
            x = torch.randn(m, K, device="cuda", dtype=torch.bfloat16)
            g = torch.randn(m, E, device="cuda")
            # Both eager, under one timer and flush: torch's per-expert loop
            # waits on the host for its routing and cannot be captured in a
            # graph, so a graph replay of ours (hot L2, no launch cost) would
            # not be compared like with like.
            eager = common.event_median(lambda: fm.fused_moe(x, w1l, w2l, g, TOPK, chosen[m]), reps=10)
            plain = common.event_median(lambda: fm.torch_moe(x, w1l, w2l, g, TOPK), reps=10)
            rows.append((m, f"{plain:.1f}", f"{eager:.1f}", f"{plain / eager:.2f}x"))
            layer.append(dict(m=m, torch_us=plain, eager_us=eager))
        log(common.table(rows, ["batch", "torch per-expert us", "fused_moe eager us", "torch/ours"]))
        summary["layer"] = layer
    common.save(args.summary, summary)


if __name__ == "__main__":
    main()
