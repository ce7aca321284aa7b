#!/usr/bin/env python3
"""Prints the search benchmark's tables from the two sides' JSON lines.

Usage: report.py TUNEKIT.jsonl KT.jsonl

For each budget: one row per strategy (tunekit's and Kernel Tuner's), with
the median and the 10th percentile of the fraction of optimum over seeds for
each cache, the mean over caches of those medians and of those 10th
percentiles, and the strategy's CPU time per evaluation. Then, per budget,
tunekit's auto against Kernel Tuner's best strategy (by mean of medians) and
the goals of issue #23.
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
        rows.append(r)
    return rows


def short(cache):
    name = os.path.basename(cache)
    for ext in (".gz", ".json"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return name


def main():
    rows = load(sys.argv[1], "tunekit") + load(sys.argv[2] if len(sys.argv) > 2 else None, "KT")
    if not rows:
        print("no results")
        return 1
    caches = []
    for r in rows:
        if r["cache"] not in caches:
            caches.append(r["cache"])
    budgets = sorted({r["budget_fraction"] for r in rows})
    seeds = sorted({len(r["fractions"]) for r in rows})
    print(f"Fraction of optimum (optimum time / best time found): median / 10th percentile over "
          f"{'/'.join(map(str, seeds))} seeds per cache; mean = mean over the {len(caches)} caches.")
    for i, c in enumerate(caches):
        n = next(r["space"] for r in rows if r["cache"] == c)
        print(f"  [{i + 1}] {short(c)} ({n} valid configs)")
    summary = []
    for b in budgets:
        print()
        evals = {short(r["cache"]): r["budget"] for r in rows if r["budget_fraction"] == b}
        print(f"Budget {b * 100:g}% of the space ({', '.join(f'{k}: {v}' for k, v in evals.items())} evaluations)")
        head = f"{'strategy':<32}" + "".join(f"{'[' + str(i + 1) + '] med/p10':>15}" for i in range(len(caches)))
        head += f"{'mean med':>10}{'mean p10':>10}{'CPU ms/eval':>13}"
        print(head)
        print("-" * len(head))
        table = {}
        for r in rows:
            if r["budget_fraction"] != b:
                continue
            name = r["strategy"] if r["side"] == "tunekit" else "KT " + r["strategy"]
            if r["side"] == "tunekit" and r.get("as_run", name) != name:
                name = r["as_run"]
            table.setdefault((r["side"], name), {})[r["cache"]] = r
        lines = []
        for (side, name), by_cache in table.items():
            meds = [percentile(by_cache[c]["fractions"], 50) for c in caches if c in by_cache]
            p10s = [percentile(by_cache[c]["fractions"], 10) for c in caches if c in by_cache]
            if len(meds) != len(caches):
                continue
            evals_total = sum(sum(by_cache[c]["evaluations"]) for c in caches)
            cpu = sum(by_cache[c]["cpu_seconds"] for c in caches) * 1e3 / max(1, evals_total)
            # Kernel Tuner's own account of its strategies' time, when it has one.
            kt_strategy = [by_cache[c].get("strategy_ms_per_evaluation") for c in caches]
            lines.append((side, name, meds, p10s, cpu, kt_strategy))
        for side, name, meds, p10s, cpu, kt_strategy in sorted(lines, key=lambda x: (x[0] != "tunekit", -sum(x[2]))):
            cells = "".join(f"{m:>8.3f}/{p:<6.3f}" for m, p in zip(meds, p10s))
            cpu_text = f"{cpu:>13.4f}"
            print(f"{name:<32}{cells}{sum(meds) / len(meds):>10.3f}{sum(p10s) / len(p10s):>10.3f}{cpu_text}")
        tk = [x for x in lines if x[0] == "tunekit" and x[1].startswith("auto")]
        kt = [x for x in lines if x[0] == "KT"]
        if tk:
            t = tk[0]
            t_mean, t_p10 = sum(t[2]) / len(t[2]), sum(t[3]) / len(t[3])
            line = f"=> tunekit {t[1]}: mean of medians {t_mean:.3f} (mean p10 {t_p10:.3f})"
            if kt:
                best = max(kt, key=lambda x: sum(x[2]))
                k_mean, k_p10 = sum(best[2]) / len(best[2]), sum(best[3]) / len(best[3])
                line += (f"; Kernel Tuner's best, {best[1][3:]}: {k_mean:.3f} (p10 {k_p10:.3f}); "
                         f"ratio {t_mean / k_mean:.3f}, {'ahead' if t_mean > k_mean else 'NOT ahead'}")
            goal = GOALS.get(round(b, 4))
            if goal:
                ok = t_mean >= goal[0] and (goal[1] is None or t_p10 >= goal[1])
                line += f"; goal >= {goal[0]}" + (f" (p10 >= {goal[1]})" if goal[1] else "") + (": met" if ok else ": not met")
            print(line)
            summary.append(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
