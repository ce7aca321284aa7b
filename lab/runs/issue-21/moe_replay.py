"""Replays tunekit's search of the MoE spec over the H200 sweep's recorded times.

  python3 lab/runs/issue-21/moe_replay.py [--tunekit build/bin/tunekit] [--seeds 50] [--budget 48]

Each times_*.jsonl line (one batch size: every config of vLLM's space timed by
vLLM's timer, null where it did not compile) becomes a Kernel Tuner cache;
`tunekit replay --spec kernels/fused_moe/fused_moe.yaml` then searches the
spec's space (its shared-memory and group constraints, H200 properties) with
each strategy for SEEDS seeds at BUDGET evaluations, as the live tune does
per batch size, but without transfer from neighbouring sizes. Prints, per
batch size and strategy, the median and minimum over seeds of best found /
sweep best. The live tune is one draw of this, plus transfer.

  python3 lab/runs/issue-21/moe_replay.py --shipped "vllm_E=8,N=7168,device_name=NVIDIA_H200.json"

instead reads, in the same recorded times, tunekit's pick (from --summary)
and the config vLLM ships for this shape on the H200 (its
fused_moe/configs file of that name, copied here at vLLM commit c6991a3),
as fractions of the sweep's best: one measurement for all three, but of the
kernel written here, not vLLM's.
"""
import argparse
import glob
import itertools
import json
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def kt_cache(line, path):
    """The sweep's configs that compiled are in `times` (null: failed when timed);
    the rest of vLLM's space did not compile (over the H200's resources)."""
    keys = line["keys"]
    tune_params = {k: sorted({row[i] for row in line["times"]}) for i, k in enumerate(keys)}
    timed = {tuple(row[:-1]): row[-1] for row in line["times"]}
    cache = {}
    for values in itertools.product(*tune_params.values()):
        us = timed.get(values)
        entry = dict(zip(keys, values))
        entry["time"] = (us / 1000 if us is not None else "RuntimeFailedConfig") if values in timed \
            else "CompilationFailedConfig"
        entry["compile_time"] = 0.0
        cache[",".join(str(v) for v in values)] = entry
    doc = {"device_name": "NVIDIA H200", "kernel_name": "fused_moe_kernel", "problem_size": [line["M"]],
           "tune_params_keys": keys, "tune_params": tune_params, "objective": "time", "cache": cache}
    with open(path, "w") as f:
        json.dump(doc, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tunekit", default=os.path.join(ROOT, "build/bin/tunekit"))
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--budget", type=int, default=48)
    ap.add_argument("--strategies", default="auto,random")
    ap.add_argument("--shipped", default="",
                    help="instead: the sweep's own time of each batch size's config in this vLLM-format file "
                         "and of tunekit's pick in --summary, as fractions of the sweep's best")
    ap.add_argument("--summary", default=os.path.join(HERE, "moe_c.json"))
    args = ap.parse_args()
    lines = []
    for path in sorted(glob.glob(os.path.join(HERE, "times_*.jsonl"))):
        with open(path) as f:
            lines += [json.loads(x) for x in f]
    if args.shipped:
        return shipped(args, lines)
    work = tempfile.mkdtemp(prefix="moe-replay-")
    spec = os.path.join(ROOT, "kernels/fused_moe/fused_moe.yaml")
    props = os.path.join(ROOT, "tests/cli/data/h200.json")
    print(f"| M | configs in the spec's space | {' | '.join(args.strategies.split(','))} |")
    print("|---|---|" + "---|" * len(args.strategies.split(",")))
    for line in sorted(lines, key=lambda x: x["M"]):
        m = line["M"]
        cache = os.path.join(work, f"moe_M{m}.json")
        kt_cache(line, cache)
        cells, valid = [], None
        for strategy in args.strategies.split(","):
            fractions = []
            for seed in range(1, args.seeds + 1):
                cmd = [args.tunekit, "replay", cache, "--spec", spec, "--properties", props,
                       "-s", "E=8", "-s", "topk=2", "-s", "N=14336", "-s", "K=4096", "-s", f"M={m}",
                       "--strategy", strategy, "--max-evals", str(args.budget), "--seed", str(seed), "--json"]
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    raise SystemExit(f"{' '.join(cmd)}\n{p.stderr}")
                r = json.loads(p.stdout)
                fractions.append(r["fraction_of_optimum"])
                valid = r["space_size"]
            cells.append(f"{statistics.median(fractions):.3f} (min {min(fractions):.3f})")
        print(f"| {m} | {valid} | {' | '.join(cells)} |", flush=True)


def shipped(args, lines):
    with open(args.shipped) as f:
        theirs = json.load(f)
    with open(args.summary) as f:
        ours = json.load(f)["tunekit"]["chosen"]
    print("| M | sweep best us | tunekit's pick | shipped config |")
    print("|---|---|---|---|")
    for line in sorted(lines, key=lambda x: x["M"]):
        m, keys = line["M"], line["keys"]
        t = {tuple(r[:-1]): r[-1] for r in line["times"]}
        best = min(v for v in t.values() if v is not None)
        cells = []
        for config in (ours.get(str(m)), theirs.get(str(m))):
            us = t.get(tuple(config[k] for k in keys)) if config else None
            cells.append(f"{best / us:.3f} ({us:.1f} us)" if us else "-")
        print(f"| {m} | {best:.1f} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
