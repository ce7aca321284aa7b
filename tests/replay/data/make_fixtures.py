#!/usr/bin/env python3
"""Makes the replay fixtures from Kernel Tuner's convolution cache (A100).

A subspace of benchmark_hub's cachefiles/convolution_milo/A100.json.gz (the
copy in ../shared/caches), small enough to keep in the repository:

  conv_small.json.gz     Kernel Tuner's original cache format, the
                         configs of the subspace, each with its recorded
                         time (or error), compile_time and benchmark_time
  conv_small_T4.json.gz  the same results in the T4 format
  conv_small.T1.json     the T1 spec of the subspace: the restricted value
                         lists and convolution_milo's four conditions

Run from the repository root: python3 tests/replay/data/make_fixtures.py CACHE
(CACHE: that cache file; the tests read only the fixtures this writes).
"""
import gzip
import json
import sys
from collections import OrderedDict

if len(sys.argv) != 2:
    sys.exit("usage: make_fixtures.py CACHE (benchmark_hub's convolution_milo/A100.json.gz)")
SRC = sys.argv[1]
OUT = "tests/replay/data/"
KEEP = OrderedDict([
    ("block_size_x", [16, 32, 48, 64, 128, 256]),
    ("block_size_y", [1, 2, 4, 8]),
    ("tile_size_x", [1, 2, 3]),
    ("tile_size_y", [1, 2, 3, 4]),
    ("read_only", [0, 1]),
    ("use_padding", [0, 1]),
    ("use_shmem", [0, 1]),
    ("use_cmem", [1]),
    ("filter_height", [15]),
    ("filter_width", [15]),
])
CONDITIONS = [
    "use_padding==0 or block_size_x % 32 != 0",
    "block_size_x*block_size_y<=1024",
    "use_padding==0 or use_shmem != 0",
    "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*((block_size_y*tile_size_y+(filter_height-1)))) < 12*1024",
]

d = json.load(gzip.open(SRC), object_pairs_hook=OrderedDict)
keys = d["tune_params_keys"]
cache = OrderedDict()
for k, v in d["cache"].items():
    if all(v[p] in KEEP[p] for p in keys):
        e = OrderedDict((p, v[p]) for p in keys)
        e["time"] = v["time"]
        for f in ("compile_time", "verification_time", "benchmark_time"):
            e[f] = round(v.get(f, 0), 3)
        cache[k] = e
out = OrderedDict([
    ("device_name", d["device_name"]), ("kernel_name", d["kernel_name"]), ("problem_size", d["problem_size"]),
    ("tune_params_keys", keys), ("tune_params", KEEP), ("objective", "time"), ("cache", cache),
])
with gzip.GzipFile(OUT + "conv_small.json.gz", "wb", mtime=0) as f:
    f.write(json.dumps(out, indent=0).encode())

validity = {"InvalidConfig": "constraints", "CompilationFailedConfig": "compile", "RuntimeFailedConfig": "runtime"}
results = []
for e in cache.values():
    t = e["time"]
    results.append(OrderedDict([
        ("configuration", OrderedDict((p, e[p]) for p in keys)),
        ("times", OrderedDict([("compilation", e["compile_time"]), ("runtimes", [e["benchmark_time"]]),
                               ("validation", e["verification_time"])])),
        ("invalidity", validity.get(t, "correct") if isinstance(t, str) else "correct"),
        ("correctness", 0 if isinstance(t, str) else 1),
        ("measurements", [OrderedDict([("name", "time"), ("value", t), ("unit", "")])]),
        ("objectives", ["time"]),
    ]))
with gzip.GzipFile(OUT + "conv_small_T4.json.gz", "wb", mtime=0) as f:
    f.write(json.dumps(OrderedDict([("schema_version", "1.0.0"), ("results", results)]), indent=0).encode())

t1 = OrderedDict([
    ("General", OrderedDict([("BenchmarkName", "convolution_small"), ("OutputFormat", "JSON")])),
    ("ConfigurationSpace", OrderedDict([
        ("TuningParameters", [OrderedDict([("Name", p), ("Type", "int"), ("Values", json.dumps(v))]) for p, v in KEEP.items()]),
        ("Conditions", [OrderedDict([("Expression", c), ("Parameters", [])]) for c in CONDITIONS]),
    ])),
])
with open(OUT + "conv_small.T1.json", "w") as f:
    json.dump(t1, f, indent=2)
    f.write("\n")
print(len(cache), "configs;", sum(1 for e in cache.values() if not isinstance(e["time"], str)), "succeeded")
