"""Shared by the Triton benchmarks: timers, compiling in parallel, tables.

Two timers, each the method of the tool it stands for:
- vllm_graph_time: vLLM's benchmark_moe.py --tune (written here from its
  published description: a CUDA graph of 10 invocations, 5 warm-up replays,
  then `iters` replays each between two events; the mean per invocation);
- event_median: triton.testing.do_bench's way (L2 zeroed before each run,
  events around each, the median), used to compare peers on equal terms.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from gpu_python import require_gpu_torch  # noqa: E402,F401  (each script calls it after parsing its flags)

try:
    import torch
except ImportError:  # --help and flag errors answer without it; require_gpu_torch() says it is missing
    torch = None


def add_kernel_paths():
    for sub in ("kernels/fused_moe", "kernels/prefill_attention", "kernels/decode_attention_triton", "python"):
        p = os.path.join(ROOT, sub)
        if p not in sys.path:
            sys.path.insert(0, p)


# vLLM's MoE tuner times a config by VLLM_ITERS replays of a graph of
# VLLM_INVOCATIONS calls, after VLLM_WARMUP replays.
VLLM_ITERS, VLLM_INVOCATIONS, VLLM_WARMUP = 20, 10, 5


def vllm_graph_time(fn, iters: int = VLLM_ITERS, invocations: int = VLLM_INVOCATIONS) -> float:
    """Microseconds per invocation, as vLLM's MoE tuner times a config."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(invocations):
            fn()
    torch.cuda.synchronize()
    for _ in range(VLLM_WARMUP):
        graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    total = 0.0
    for _ in range(iters):
        torch.cuda.synchronize()
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        total += start.elapsed_time(end)
    graph.reset()
    return total / (iters * invocations) * 1000.0


# Launches of `fn` in vllm_graph_time with its defaults: one before the
# capture, then every call of each replay (capturing runs nothing).
VLLM_LAUNCHES = 1 + (VLLM_WARMUP + VLLM_ITERS) * VLLM_INVOCATIONS


def one_launch_us(fn) -> float:
    """Microseconds of one launch of `fn` after an untimed one: a rough time,
    enough to tell a config far slower than another."""
    return event_median(fn, reps=1, warmup=1, cold=False)


_flush = None


def event_median(fn, reps: int = 30, warmup: int = 3, cold: bool = True) -> float:
    """Median microseconds of `fn`, the L2 overwritten before each run (cold)."""
    global _flush
    if cold and _flush is None:
        _flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    for _ in range(warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        if cold:
            _flush.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends))


def graph_median(fn, reps: int = 30, per_graph: int = 10) -> float:
    """Median microseconds per call over replays of a graph of `per_graph` calls (hot)."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(per_graph):
            fn()
    for _ in range(3):
        graph.replay()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        graph.replay()
        ends[i].record()
    torch.cuda.synchronize()
    graph.reset()
    return statistics.median(s.elapsed_time(e) * 1000.0 / per_graph for s, e in zip(starts, ends))


# ---- compiling ahead, in parallel ---------------------------------------------

def _compile_one(job):
    """In a pool process: compile one launch into the shared TRITON_CACHE_DIR."""
    add_kernel_paths()
    module_name, kernel_name, kwargs = job
    import importlib

    from triton.runtime.jit import MockTensor

    kernel = getattr(importlib.import_module(module_name), kernel_name)
    args = {k: (MockTensor(getattr(torch, v[1])) if isinstance(v, tuple) and v and v[0] == "tensor" else v)
            for k, v in kwargs.items()}
    t0 = time.perf_counter()
    try:
        k = kernel.warmup(grid=(1,), **args)
        if hasattr(k, "result"):
            k = k.result()
        k._init_handles()
        return ("ok", time.perf_counter() - t0, int(k.metadata.shared), int(k.n_regs), int(k.n_spills))
    except Exception as e:  # out of resources, compile errors: recorded, not fatal
        return (type(e).__name__ + ": " + str(e)[:200], time.perf_counter() - t0, 0, 0, 0)


def compile_all(jobs, processes: int = 16):
    """Compiles every (module, kernel, kwargs) job; kwargs give tensors as
    ("tensor", "bfloat16"). Returns per job (status, seconds, shared, regs, spills)."""
    import multiprocessing as mp

    with ProcessPoolExecutor(processes, mp_context=mp.get_context("spawn")) as pool:
        return list(pool.map(_compile_one, jobs, chunksize=1))


def table(rows, header):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(header)]
    line = "| " + " | ".join(str(h).ljust(w) for h, w in zip(header, widths)) + " |"
    out = [line, "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |")
    return "\n".join(out)


def save(path, obj):
    if path:
        with open(path, "w") as f:
            json.dump(obj, f, indent=1)
