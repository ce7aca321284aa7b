#!/usr/bin/env python3
"""Kernel Tuner's search-space construction on the same space files.

For each neutral space JSON (shared/spaces) this times
kernel_tuner.searchspace.Searchspace(tune_params, restrictions, max_threads=1024)
-- Kernel Tuner's default framework and its optimized solver
(PythonConstraint, PC_OptimizedBacktrackingSolver) -- and prints one JSON
object per line: space, valid (Searchspace.size), expected valid, the first
build's seconds, and the median and min of --repeat builds.

max_threads=1024 makes Kernel Tuner add its implicit
block_size_x * block_size_y * block_size_z <= 1024 when those parameters
exist, as in the study; the files already contain that restriction where it
matters (see shared/spaces/README.md), so the counts are the published ones.
"""
import argparse
import json
import statistics
import sys
import time
from collections import OrderedDict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    try:
        import kernel_tuner
        from kernel_tuner.searchspace import Searchspace
    except ImportError as e:
        print(json.dumps({"error": f"kernel_tuner is not installed ({e}); pip install kernel_tuner"}))
        return 2
    status = 0
    for f in a.files:
        d = json.load(open(f))
        tune_params = OrderedDict((p["name"], list(p["values"])) for p in d["parameters"])
        restrictions = list(d.get("constraints", []))
        times, size = [], None
        for _ in range(max(1, a.repeat)):
            t0 = time.perf_counter()
            ss = Searchspace(tune_params, restrictions, 1024)
            times.append(time.perf_counter() - t0)
            size = ss.size
        expected = d.get("expected", {}).get("valid")
        if expected is not None and expected != size:
            status = 1
        print(json.dumps({"space": d.get("name", f), "valid": size, "expected_valid": expected,
                          "first_s": times[0], "median_s": statistics.median(times), "min_s": min(times),
                          "repeat": len(times), "kernel_tuner": kernel_tuner.__version__}), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
