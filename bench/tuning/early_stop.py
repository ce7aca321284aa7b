#!/usr/bin/env python3
"""The early stop's saving (issue #23, item 4): the same tune with
measure.early_stop off and on, in one run, and the best config each finds.

  python3 bench/tuning/early_stop.py [--tunekit build/bin/tunekit] [--spec SPEC]
      [--factors 3 [2 ...]] [--rounds 2] [--out DIR] [--summary FILE] [--report-only]
      [-- TUNE ARGS...]

Everything after `--` goes to every `tunekit tune` (sizes, --where, ...).
Defaults: examples/matmul/matmul.yaml on the CPU. On the H200:

  python3 bench/tuning/early_stop.py --spec kernels/gemm/gemm_skinny.yaml \\
      -- -a M=[16] -a K=[4096] -a N=[4096] -a B_NK=[1]
  (scripts/gpu.sh early_stop runs this.)

Procedure: one priming tune (early stop off, not counted) fills the build
cache, so that no timed tune compiles; then each round tunes once per
setting (off and each factor), the order rotating from round to round, each
into a fresh results database. Per setting it prints the wall time of each
round (tunekit's own `wall_s`) and the time spent measuring, the trials cut
short, and each size's best config. The ratio is off over on, of the median
wall time across rounds. "same best" compares each size's best config with
the off tunes' best; where they differ it gives the off tune's time of the
config the early-stop tune chose, so a swap of two configs within noise of
each other shows as such (two off tunes can swap them too: the priming tune
and each off round are listed for that). "off best cut" is the question the
early stop must answer no to: whether an early-stop tune cut short a config
that some off tune (the priming one included) found best. A config it
measured in full and then ranked second lost on noise, not to the cut.
Each tune's line is printed as it ends; `--report-only` makes the report
from the tunes' JSON files in --out without running any (a run stopped by a
time limit part-way reports the tunes it finished).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from gpu_python import add_tunekit_argument, require_tunekit  # noqa: E402


def tune(a, tag, early_stop, extra):
    """One fresh tune into its own database, sharing the build cache. Returns its JSON report."""
    db = os.path.join(a.out, tag + ".db")
    path = os.path.join(a.out, tag + ".json")
    for f in (db, db + "-wal", db + "-shm", path):
        if os.path.exists(f):
            os.remove(f)
    cmd = [a.tunekit, "tune", a.spec, "--no-progress", "-o", a.out, "--db", db, "--json", path,
           "--csv", os.path.join(a.out, tag + ".csv"), "--html", os.path.join(a.out, tag + ".html"),
           "--early-stop", early_stop] + extra
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(a.out, tag + ".log"), "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode != 0 or not os.path.exists(path):
        print(p.stdout[-2000:] + p.stderr[-3000:], file=sys.stderr)
        sys.exit(f"the tune '{tag}' failed (exit {p.returncode})")
    with open(path) as f:
        return json.load(f)


def size_key(size):
    return ",".join(f"{k}={size[k]}" for k in sorted(size))


def summary_of(rep):
    trials = [t for s in rep["sizes"] for t in s["trials"]]
    best = {}
    times = {}  # size -> config key -> time_us of the ok trials
    cut = {}  # size -> the config keys cut short
    for s in rep["sizes"]:
        key = size_key(s["size"])
        b = s["best"]
        best[key] = (json.dumps(b["config"], sort_keys=True), b["time_us"]) if b else (None, None)
        times[key] = {json.dumps(t["config"], sort_keys=True): t["time_us"] for t in s["trials"] if t["status"] == "ok"}
        cut[key] = [json.dumps(t["config"], sort_keys=True) for t in s["trials"] if t["status"] == "slower"]
    return {
        "wall_s": rep["wall_s"], "measure_s": rep["measure_s"], "build_wait_s": rep["build_wait_s"],
        "device_busy_s": rep.get("device_busy_s"), "build_s": rep.get("build_s"),
        "trials": len(trials), "slower": sum(t["status"] == "slower" for t in trials),
        "ok": sum(t["status"] == "ok" for t in trials), "best": best, "times": times, "cut": cut,
    }


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_tunekit_argument(ap)
    ap.add_argument("--spec", default=os.path.join(ROOT, "examples", "matmul", "matmul.yaml"))
    ap.add_argument("--factors", nargs="+", default=["3"], help="early-stop factors to compare with off")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench-early-stop"))
    ap.add_argument("--summary", help="write the figures as JSON here")
    ap.add_argument("--report-only", action="store_true",
                    help="run nothing: report the tunes whose JSON reports are in --out (of a run stopped "
                    "part-way, say); a tune missing there is left out")
    a = ap.parse_args(argv)
    if not a.report_only:
        require_tunekit(a.tunekit)
    os.makedirs(a.out, exist_ok=True)

    def one(tag, early_stop):
        """A tune's summary, printed as it comes so that a run stopped part-way still says something."""
        if a.report_only:
            path = os.path.join(a.out, tag + ".json")
            if not os.path.exists(path):
                return None
            with open(path) as f:
                x = summary_of(json.load(f))
        else:
            x = summary_of(tune(a, tag, early_stop, extra))
        bests = "; ".join(f"{c} {t:.3f} us" for c, t in x["best"].values() if c)
        print(f"  {tag}: wall {x['wall_s']:.1f} s, {x['slower']} of {x['trials']} cut short; best {bests}", flush=True)
        return x

    prime = one("prime-off", "off")
    if prime is None:
        sys.exit(f"no prime-off.json in {a.out}")
    settings = ["off"] + a.factors
    runs = {s: [] for s in settings}
    for r in range(a.rounds):
        k = r % len(settings)
        for s in settings[k:] + settings[:k]:
            x = one(f"r{r}-{'off' if s == 'off' else 'es' + s}", s)
            if x is not None:
                runs[s].append(x)
    if not all(runs.values()):
        sys.exit(f"no tune of {', '.join(s for s in settings if not runs[s])} to report")

    off_best = runs["off"][0]["best"]
    off_times = runs["off"][0]["times"]
    # Every config an off tune found best, per size: the priming tune's too.
    off_bests = {}
    for x in [prime] + runs["off"]:
        for size, (config, _) in x["best"].items():
            off_bests.setdefault(size, set()).add(config)
    print()
    print(f"spec: {os.path.relpath(a.spec, ROOT)} {' '.join(extra)}; {a.rounds} rounds, order rotating; "
          f"priming tune (off): wall {prime['wall_s']:.1f} s, building {prime['build_s'] or 0:.1f} s of it")
    print()
    print("| early stop | wall s (rounds) | median wall s | measure s (rounds) | device busy s (rounds) | trials | "
          "cut short | ratio off/on (wall) | same best as off | off best cut |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    median_off = statistics.median(x["wall_s"] for x in runs["off"])
    figures = {"spec": a.spec, "tune_args": extra, "rounds": a.rounds, "prime": prime, "settings": {}}
    for s in settings:
        walls = [x["wall_s"] for x in runs[s]]
        med = statistics.median(walls)
        same, notes = True, []
        off_best_cut = False
        for r, x in enumerate(runs[s]):
            for size, configs in off_bests.items():
                lost = sorted(configs & set(x["cut"].get(size, [])))
                off_best_cut = off_best_cut or bool(lost)
                for config in lost:
                    notes.append(f"round {r}, size {size}: an off tune's best {config} was CUT SHORT here")
            for size, (config, time_us) in x["best"].items():
                ref, ref_us = off_best.get(size, (None, None))
                if config != ref:
                    same = False
                    theirs = off_times.get(size, {}).get(config)
                    mine = x["times"].get(size, {}).get(ref)
                    notes.append(f"round {r}, size {size}: {config} {time_us:.3f} us here; the off tune's best {ref} "
                                 f"{ref_us:.3f} us, here {'%.3f us (measured in full)' % mine if mine else 'no time'}; "
                                 f"the off tune's time for this one {'%.3f us' % theirs if theirs else 'none'}")
        ratio = median_off / med if med > 0 else float("nan")
        measures = ", ".join("%.1f" % x["measure_s"] for x in runs[s])
        busy = ", ".join("-" if x["device_busy_s"] is None else "%.1f" % x["device_busy_s"] for x in runs[s])
        cuts = ", ".join(str(x["slower"]) for x in runs[s])
        print(f"| {s} | {', '.join('%.1f' % w for w in walls)} | {med:.1f} | {measures} | {busy} | {runs[s][0]['trials']} | "
              f"{cuts} | {ratio:.2f}x | {'yes' if same else 'NO'} | {'-' if s == 'off' else 'YES' if off_best_cut else 'no'} |")
        for n in notes:
            print(f"    {s}: {n}")
        figures["settings"][s] = {"runs": runs[s], "median_wall_s": med, "ratio_off_over_on": ratio,
                                  "same_best": same, "off_best_cut": off_best_cut if s != "off" else None,
                                  "notes": notes}
    print()
    for size, (config, time_us) in off_best.items():
        print(f"best (off, round 0) at {size}: {config} {time_us:.3f} us; priming tune: "
              f"{prime['best'].get(size, (None,))[0]}")
        others = [f"round {r}: {x['best'][size][0]} {x['best'][size][1]:.3f} us" for r, x in enumerate(runs["off"])
                  if r > 0 and x["best"].get(size, (None,))[0] != config]
        if others:
            print(f"    the off tunes disagree among themselves: {'; '.join(others)}")
    cut = [s for s, f in figures["settings"].items() if f["off_best_cut"]]
    if a.summary:
        for x in [prime] + [x for s in figures["settings"].values() for x in s["runs"]]:
            x.pop("times")
            x.pop("cut")
        with open(a.summary, "w") as f:
            json.dump(figures, f, indent=2)
    if cut:
        sys.exit(f"the early stop ({', '.join(cut)}) cut short a config that an off tune found best")


if __name__ == "__main__":
    main()
