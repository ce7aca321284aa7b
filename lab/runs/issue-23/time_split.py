#!/usr/bin/env python3
"""Where a tune's time went, from its JSON report (tunekit tune --json):
the run's wall, build wait, measure, device busy, flush and verification,
and per trial (medians over the evaluated trials) the evaluator's time,
the comparison with the reference, and the samples."""
import json
import statistics
import sys

r = json.load(open(sys.argv[1]))
print("wall {wall_s:.1f} s, build wait {build_wait_s:.1f} s, measure {measure_s:.1f} s "
      "(device busy {device_busy_s:.1f} s, flush {flush_s:.1f} s, verify {verify_s:.1f} s)".format(**r))
trials = [t for s in r["sizes"] for t in s["trials"] if t.get("eval_s")]
if trials:
    ev = [t["eval_s"] for t in trials]
    vf = [t["verify_s"] for t in trials]
    sm = [sum(t["samples_us"]) / 1e6 for t in trials]
    print(f"{len(trials)} trials evaluated: eval {sum(ev):.1f} s (median {1e3 * statistics.median(ev):.1f} ms), "
          f"verify {sum(vf):.1f} s (median {1e3 * statistics.median(vf):.1f} ms), "
          f"samples {sum(sm):.1f} s (median {1e3 * statistics.median(sm):.1f} ms); "
          f"outside verification and samples {1e3 * (sum(ev) - sum(vf) - sum(sm)) / len(trials):.1f} ms a trial")
