#!/usr/bin/env python3
"""Prints the search benchmark's tables from the two sides' JSON lines.

Usage: report.py TUNEKIT.jsonl [KT.jsonl]
       report.py --cost-only SYNTHETIC.jsonl

Per budget: one row per strategy (tunekit's and Kernel Tuner's) with the
mean over caches of the per-cache median and 10th percentile of the fraction
of optimum, the worst cache's median, and the CPU time per evaluation; with
four caches or fewer, each cache's median / 10th percentile too, else a second
table per cache of tunekit's auto against Kernel Tuner's best strategy (the
one with the highest mean of medians at that budget). Then a verdict line per
budget: auto against Kernel Tuner's best, and the goals of issue #23. Only
strategies with results on every cache are shown.

CPU ms/eval is the strategy's own CPU time on both sides: tunekit's
search_bench counts the strategy's calls, kt_search.py Kernel Tuner's own
strategy_time read on a CPU clock ("strategy_clock": "process_cpu"). Kernel
Tuner lines recorded without that clock (older runs) show the whole
tune_kernel call instead, which also counts loading the cache and building
the searchspace, marked "(whole call)".
"""
import json
import os
import sys

GOALS = {0.01: (0.93, None), 0.02: (0.98, 0.93), 0.05: (0.995, None)}


def percentile(values, q):
    """numpy.percentile's default (linear interpolation between ranks)."""
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def load(path, side):
    rows = []
    if not path or not os.path.exists(path):
        return rows
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if "error" in r:
            print(f"{side}: {r['error']}")
            continue
        r["side"] = side
        # Caches are matched by file name, so that results recorded from
        # another folder (Kernel Tuner's, run earlier) line up.
        r["cache"] = os.path.basename(r["cache"])
        rows.append(r)
    return rows


def short(cache):
    name = os.path.basename(cache)
    for ext in (".gz", ".json"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return name


class Line:
    def __init__(self, side, name, by_cache, caches):
        self.side, self.name = side, name
        self.meds = [percentile(by_cache[c]["fractions"], 50) for c in caches]
        self.p10s = [percentile(by_cache[c]["fractions"], 10) for c in caches]
        evals = sum(sum(by_cache[c]["evaluations"]) for c in caches)
        own = all(by_cache[c].get("strategy_clock") == "process_cpu" for c in caches)
        self.whole_call = side == "KT" and not own
        if side == "KT" and own:
            ms = sum(by_cache[c]["strategy_ms_per_evaluation"] * sum(by_cache[c]["evaluations"]) for c in caches)
        else:
            ms = sum(by_cache[c]["cpu_seconds"] for c in caches) * 1e3
        self.cpu = ms / max(1, evals)
        self.mean = sum(self.meds) / len(self.meds)
        self.p10 = sum(self.p10s) / len(self.p10s)


def cost_only(path):
    """CPU time per evaluation per strategy and budget (a synthetic recording:
    its fractions of optimum mean nothing)."""
    rows = load(path, "tunekit")
    if not rows:
        return 1
    budgets = sorted({r["budget_fraction"] for r in rows})
    evals = {b: next(r["budget"] for r in rows if r["budget_fraction"] == b) for b in budgets}
    print(f"Strategy CPU time per evaluation (ms) on {short(rows[0]['cache'])}: {rows[0]['space']} valid configs, "
          "a synthetic recording")
    print(f"{'strategy':<30}" + "".join(f"{f'{b * 100:g}% ({evals[b]})':>16}" for b in budgets))
    names = []
    for r in rows:
        name = r.get("as_run", r["strategy"])
        if name not in names:
            names.append(name)
    for n in names:
        cells = []
        for b in budgets:
            rs = [r for r in rows if r.get("as_run", r["strategy"]) == n and r["budget_fraction"] == b]
            cells.append(f"{rs[0]['cpu_ms_per_evaluation']:>16.4f}" if rs else f"{'-':>16}")
        print(f"{n:<30}" + "".join(cells))
    return 0


def verdict(auto, best):
    """Ahead or not on the mean of medians; where those are level at the
    printed precision (both 1.000 at 5%, say), the 10th percentiles decide."""
    d = round(auto.mean, 3) - round(best.mean, 3)
    if d != 0:
        return f"{'ahead' if d > 0 else 'NOT ahead'} by {d:+.3f}"
    p = auto.p10 - best.p10
    return f"level on medians; {'ahead' if p > 0 else 'NOT ahead'} on p10 by {p:+.3f}"


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--cost-only":
        return cost_only(sys.argv[2])
    rows = load(sys.argv[1], "tunekit") + load(sys.argv[2] if len(sys.argv) > 2 else None, "KT")
    if not rows:
        print("no results")
        return 1
    caches = []
    for r in rows:
        if r["cache"] not in caches:
            caches.append(r["cache"])
    wide = len(caches) <= 4
    budgets = sorted({r["budget_fraction"] for r in rows})
    seeds = sorted({len(r["fractions"]) for r in rows})
    print(f"Fraction of optimum (optimum time / best time found): median and 10th percentile (p10) over "
          f"{'/'.join(map(str, seeds))} seeds per cache; 'mean' = mean over the {len(caches)} caches.")
    for i, c in enumerate(caches):
        n = next(r["space"] for r in rows if r["cache"] == c)
        print(f"  [{i + 1}] {short(c)} ({n} valid configs)")
    for b in budgets:
        print()
        evals = sorted({r["budget"] for r in rows if r["budget_fraction"] == b})
        print(f"Budget {b * 100:g}% of the space ({', '.join(map(str, evals))} evaluations)")
        table = {}
        for r in rows:
            if r["budget_fraction"] != b:
                continue
            name = r.get("as_run", r["strategy"]) if r["side"] == "tunekit" else "KT " + r["strategy"]
            table.setdefault((r["side"], name), {})[r["cache"]] = r
        lines = [Line(side, name, bc, caches) for (side, name), bc in table.items() if len(bc) == len(caches)]
        lines.sort(key=lambda x: (x.side != "tunekit", -x.mean))
        head = f"{'strategy':<42}{'mean med':>9}{'mean p10':>9}{'worst med':>10}{'CPU ms/eval':>12}"
        if wide:
            head += "".join(f"{'[' + str(i + 1) + '] med/p10':>16}" for i in range(len(caches)))
        print(head)
        print("-" * len(head))
        for x in lines:
            name = x.name + (" (whole call)" if x.whole_call else "")
            text = f"{name:<42}{x.mean:>9.3f}{x.p10:>9.3f}{min(x.meds):>10.3f}{x.cpu:>12.4f}"
            if wide:
                text += "".join(f"{m:>9.3f}/{p:<6.3f}" for m, p in zip(x.meds, x.p10s))
            print(text)
        auto = next((x for x in lines if x.side == "tunekit" and x.name.startswith("auto")), None)
        kt = [x for x in lines if x.side == "KT"]
        best = max(kt, key=lambda x: x.mean) if kt else None
        if auto and best and not wide:
            print(f"{'':<4}{'cache':<34}{auto.name + ' med/p10':>24}{best.name + ' med/p10':>32}")
            for i, c in enumerate(caches):
                print(f"{'':<4}{short(c):<34}{auto.meds[i]:>17.3f}/{auto.p10s[i]:<6.3f}{best.meds[i]:>25.3f}/{best.p10s[i]:<6.3f}")
        if auto:
            line = f"=> tunekit {auto.name}: mean of medians {auto.mean:.3f} (mean p10 {auto.p10:.3f})"
            if best:
                line += f"; Kernel Tuner's best, {best.name[3:]}: {best.mean:.3f} (p10 {best.p10:.3f}); " + verdict(auto, best)
            goal = GOALS.get(round(b, 4))
            if goal:
                ok = auto.mean >= goal[0] and (goal[1] is None or auto.p10 >= goal[1])
                line += f"; goal >= {goal[0]}" + (f" (p10 >= {goal[1]})" if goal[1] else "") + (": met" if ok else ": not met")
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
