#!/usr/bin/env python3
"""The transfer measurement's table (bench/search/transfer.sh).

Usage: transfer_report.py RUNS.jsonl RECORDING.db

Per size (in tune order), for the runs with transfer and without: the median
and mean over seeds of the evaluations until the best time so far is within
98% of the size's best recorded time (budget + 1 when never), and how often
the first evaluation of the size already was.
"""
import json
import sqlite3
import statistics
import sys


def size_key(size):
    return ",".join(f"{k}={size[k]}" for k in sorted(size))


def main():
    runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    con = sqlite3.connect(sys.argv[2])
    best = {}
    for size_json, median in con.execute("SELECT size_json, median_us FROM trials WHERE status = 'ok'"):
        k = size_key(json.loads(size_json))
        best[k] = min(best.get(k, float("inf")), median)
    order = [size_key(s["size"]) for s in runs[0]["sizes"]]
    table = {}
    for r in runs:
        for s in r["sizes"]:
            k = size_key(s["size"])
            target = best[k] / 0.98
            budget = len(s["trials"])
            reached, fastest = budget + 1, float("inf")
            for i, (t, _) in enumerate(s["trials"]):
                if t is not None:
                    fastest = min(fastest, t)
                if fastest <= target:
                    reached = i + 1
                    break
            transferred = sum(1 for _, o in s["trials"] if o == "transfer")
            table.setdefault((k, r["mode"]), []).append((reached, transferred))
    seeds = len(runs) // 2
    print(f"Evaluations to 98% of each size's best (median / mean over {seeds} seeds; "
          "seeds, the default config and the search all count)")
    print(f"{'size':<26}{'with transfer':>16}{'without':>14}{'transferred':>13}")
    totals = {"transfer": [], "none": []}
    for k in order:
        w = table.get((k, "transfer"), [])
        n = table.get((k, "none"), [])
        if not w or not n:
            continue
        wr, nr = [x[0] for x in w], [x[0] for x in n]
        first = k == order[0]
        if not first:
            totals["transfer"] += wr
            totals["none"] += nr
        note = "  (first size: nothing to transfer)" if first else ""
        print(f"{k:<26}{statistics.median(wr):>7.1f} / {statistics.mean(wr):<6.1f}"
              f"{statistics.median(nr):>6.1f} / {statistics.mean(nr):<6.1f}{statistics.mean(x[1] for x in w):>8.1f}{note}")
    if totals["transfer"]:
        t, n = totals["transfer"], totals["none"]
        print(f"{'all sizes after the first':<26}{statistics.median(t):>7.1f} / {statistics.mean(t):<6.1f}"
              f"{statistics.median(n):>6.1f} / {statistics.mean(n):<6.1f}")
        print(f"mean evaluations to 98%: {statistics.mean(t):.1f} with transfer, {statistics.mean(n):.1f} without "
              f"({statistics.mean(n) / statistics.mean(t):.2f}x fewer with transfer)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
