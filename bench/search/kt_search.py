#!/usr/bin/env python3
"""Kernel Tuner's side of the search benchmark.

Runs Kernel Tuner's strategies in its simulation mode on the same recorded
caches, with the same budgets (a share of the valid configs, counted as
unique configs evaluated, failures included) and seeds as tunekit's side, and
prints one JSON object per (cache, strategy, budget) with the fraction of
optimum of every seed -- the shape search_bench prints.

Each run: random.seed(seed) and numpy.random.seed(seed), then
kernel_tuner.tune_kernel(..., cache=FILE, simulation_mode=True,
strategy=S, strategy_options={"max_fevals": budget}) with the strategy's
default options, tune_params from the cache and restrictions from the T1
file. Gzipped caches are inflated into --work first (Kernel Tuner reads
plain JSON).

CPU time: "strategy_ms_per_evaluation" is Kernel Tuner's own account of its
strategy's time (each result's strategy_time, the time between the runner
handing control back and the strategy's next request), with Kernel Tuner's
timer switched from wall-clock to this process's CPU time, so that it counts
what tunekit's search_bench counts: CPU spent in the strategy, not in cache
loading, the searchspace build or the lookups. "cpu_ms_per_evaluation" is the
whole tune_kernel call, kept for reference.
"""
import argparse
import gzip
import json
import math
import os
import random
import shutil
import sys
import time
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor


def plain_cache(path, work):
    if not path.endswith(".gz"):
        return path
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, os.path.basename(path)[:-3])
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(path):
        with gzip.open(path, "rb") as src, open(out + ".tmp", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(out + ".tmp", out)
    return out


def load_problem(cache, t1):
    with open(cache) as f:
        doc = json.load(f, object_pairs_hook=OrderedDict)
    keys = doc["tune_params_keys"]
    tune_params = OrderedDict((k, list(doc["tune_params"][k])) for k in keys)
    restrictions = []
    if t1:
        with open(t1) as f:
            spec = json.load(f)
        restrictions = [c["Expression"] for c in spec["ConfigurationSpace"].get("Conditions", [])]
    return doc, tune_params, restrictions


def best_time(results):
    times = [r["time"] for r in results
             if "__error__" not in r and isinstance(r.get("time"), (int, float)) and r["time"] < 1e20]
    return min(times) if times else None


def cpu_timer():
    """Kernel Tuner's util.Timer on process CPU time: its wall-clock reading
    counts the other jobs and builds on a shared machine, tunekit's does not.
    Each pool worker runs one job at a time, so the process's CPU is the
    job's."""
    from kernel_tuner import util
    if getattr(util.Timer, "_tunekit_cpu", False):
        return
    util.Timer.reset = lambda self: setattr(self, "_start_ns", time.process_time_ns())
    util.Timer.get = lambda self: (time.process_time_ns() - self._start_ns) * 1e-9

    def get_and_reset(self):
        now = time.process_time_ns()
        elapsed, self._start_ns = now - self._start_ns, now
        return elapsed * 1e-9
    util.Timer.get_and_reset = get_and_reset
    util.Timer._tunekit_cpu = True


def one_run(job):
    cache, t1, strategy, budget, seed, optimum = job
    import numpy as np
    import kernel_tuner
    cpu_timer()
    doc, tune_params, restrictions = load_problem(cache, t1)
    random.seed(seed)
    np.random.seed(seed)
    # Older caches record a scalar problem size.
    size = doc["problem_size"]
    size = tuple(size) if isinstance(size, (list, tuple)) else (size,)
    t0 = time.process_time()
    results, _ = kernel_tuner.tune_kernel(
        doc["kernel_name"], "// simulated", size, [], tune_params,
        restrictions=restrictions or None, strategy=strategy, strategy_options={"max_fevals": budget},
        cache=cache, simulation_mode=True, verbose=False, quiet=True)
    cpu = time.process_time() - t0
    keys = {",".join(str(r[k]) for k in tune_params) for r in results}
    strategy_ms = sum(r.get("strategy_time", 0) or 0 for r in results)
    best = best_time(results)
    return {"fraction": optimum / best if best else 0.0, "evaluations": len(keys), "cpu": cpu,
            "strategy_ms": strategy_ms}


def space_size(tune_params, restrictions):
    from kernel_tuner.searchspace import Searchspace
    return Searchspace(tune_params, restrictions or None, 1_000_000_000).size


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", action="append", nargs=2, metavar=("CACHE", "T1"), required=True)
    ap.add_argument("--strategies", default="random_sample,genetic_algorithm,adaptive_tabu_greywolf,pso,"
                                            "simulated_annealing,diff_evo,greedy_ils,dual_annealing")
    ap.add_argument("--budgets", default="0.01,0.02,0.05")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--work", default="build-search/kt-work")
    a = ap.parse_args()
    try:
        import kernel_tuner  # noqa: F401
    except ImportError as e:
        print(json.dumps({"error": f"kernel_tuner is not installed ({e})"}))
        return 2
    import warnings
    warnings.filterwarnings("ignore")
    budgets = [float(b) for b in a.budgets.split(",")]
    strategies = [s for s in a.strategies.split(",") if s]
    with ProcessPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for cache_gz, t1 in a.case:
            cache = plain_cache(cache_gz, a.work)
            doc, tune_params, restrictions = load_problem(cache, t1)
            n = space_size(tune_params, restrictions)
            optimum = best_time([v for v in doc["cache"].values()
                                 if not any(isinstance(x, str) and x.endswith("Config") for x in v.values())])
            for strategy in strategies:
                for fraction in budgets:
                    budget = max(1, math.ceil(fraction * n - 1e-9))
                    jobs = [(cache, t1, strategy, budget, a.first_seed + s, optimum) for s in range(a.seeds)]
                    runs = list(pool.map(one_run, jobs))
                    evals = sum(r["evaluations"] for r in runs)
                    print(json.dumps({
                        "cache": cache_gz, "space": n, "strategy": strategy, "budget_fraction": fraction,
                        "budget": budget, "fractions": [r["fraction"] for r in runs],
                        "evaluations": [r["evaluations"] for r in runs],
                        "cpu_seconds": sum(r["cpu"] for r in runs),
                        "cpu_ms_per_evaluation": 1e3 * sum(r["cpu"] for r in runs) / max(1, evals),
                        "strategy_ms_per_evaluation": sum(r["strategy_ms"] for r in runs) / max(1, evals),
                        "strategy_clock": "process_cpu",
                        "kernel_tuner": kernel_tuner.__version__}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
