#!/usr/bin/env python3
"""Fault isolation on a GPU (issue #4): tunes examples/cuda/faults (50
configs; one planted illegal address, one planted infinite loop) and checks
that both get their status and that every other config is measured.

  python3 bench/gpu/faults.py --tunekit build/bin/tunekit
"""
import argparse
import collections
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from gpu_python import add_tunekit_argument, require_tunekit  # noqa: E402
PLANTED = {(128, 4, 1): "launch_error", (512, 2, 0): "timeout"}


def main():
    ap = argparse.ArgumentParser()
    add_tunekit_argument(ap)
    ap.add_argument("--spec", default=os.path.join(ROOT, "examples", "cuda", "faults", "faults.yaml"))
    ap.add_argument("--out", default="/tmp/tunekit-bench-faults")
    ap.add_argument("--summary", help="write the figures as JSON here")
    a = ap.parse_args()
    require_tunekit(a.tunekit)
    cmd = [a.tunekit, "tune", a.spec, "--fresh", "--no-progress", "-o", a.out]
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout[-2000:], p.stderr[-3000:], file=sys.stderr)
        sys.exit(p.returncode)
    with open(os.path.join(a.out, "faults.json")) as f:
        rep = json.load(f)
    trials = rep["sizes"][0]["trials"]
    wrong = []
    for t in trials:
        c = t["config"]
        key = (c["BLOCK"], c["ITEMS"], c["MODE"])
        want = PLANTED.get(key, "ok")
        # A config far behind the best may be cut short by the early stop
        # (status slower, with its few samples): it ran, was verified and timed.
        got = "ok" if t["status"] == "slower" else t["status"]
        if got != want or (want == "ok" and not t["samples_us"]):
            wrong.append((key, t["status"], want, (t["error"] or "")[:200]))
    statuses = collections.Counter(t["status"] for t in trials)
    errors = {PLANTED[(t["config"]["BLOCK"], t["config"]["ITEMS"], t["config"]["MODE"])]: (t["error"] or "").splitlines()[0]
              for t in trials if (t["config"]["BLOCK"], t["config"]["ITEMS"], t["config"]["MODE"]) in PLANTED}
    summary = {"configs": len(trials), "statuses": dict(statuses), "wall_s": rep["wall_s"], "wrong": wrong,
               "errors": errors}
    if a.summary:
        with open(a.summary, "w") as f:
            json.dump(summary, f, indent=2)
    print()
    print("| configs | statuses | wall s | planted illegal address | planted infinite loop | verdict |")
    print("|---|---|---|---|---|---|")
    print(f"| {len(trials)} | {', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))} | {rep['wall_s']:.1f} | "
          f"{errors.get('launch_error', 'MISSING')} | {errors.get('timeout', 'MISSING')} | "
          f"{'PASS' if not wrong and len(trials) == 50 else 'FAIL: ' + repr(wrong)} |")
    sys.exit(0 if not wrong and len(trials) == 50 else 1)


if __name__ == "__main__":
    main()
