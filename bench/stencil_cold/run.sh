#!/usr/bin/env bash
# What cold caches cost a CPU tune (issue #20): tunes the stencil example
# from scratch (its own build cache and store) with the default settings
# (cold caches) and with --cache hot, one after the other, and prints each
# run's wall time, how much of it went into flushing, the noise statistics,
# and the cold/hot ratio (goal: at most 1.5).
#   bench/stencil_cold/run.sh [SPEC]      TUNEKIT=path/to/tunekit to compare builds
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  -*) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../.."
tunekit="${TUNEKIT:-build/bin/tunekit}"
spec="${1:-examples/stencil/stencil.yaml}"
[[ -f "$spec" ]] || { echo "run.sh: no spec at $spec" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for mode in cold hot; do
  start=$(date +%s.%N)
  "$tunekit" tune "$spec" --cache "$mode" --out-dir "$out/$mode" --no-progress >"$out/$mode.log"
  end=$(date +%s.%N)
  echo "$start $end" >"$out/$mode.wall"
done
python3 - "$out" "$(basename "$spec" .yaml)" <<'PY'
import json, math, statistics, sys
out, name = sys.argv[1], sys.argv[2]

def median_noise(samples):
    # The half-width of the median's 95% interval over the median, as
    # tunekit's Statistics::noise (recomputed here, so that a tunekit that
    # stored another statistic is compared on the same one).
    v, n = sorted(samples), len(samples)
    if n < 2: return 0.0
    half = 0.98 * math.sqrt(n)
    j = min(max(math.floor(n / 2 - half), 1), n) - 1
    k = min(max(math.ceil(1 + n / 2 + half), 1), n) - 1
    return (v[k] - v[j]) / (2 * statistics.median(v))

wall = {}
for mode in ("cold", "hot"):
    report = json.load(open(f"{out}/{mode}/{name}.json"))
    start, end = map(float, open(f"{out}/{mode}.wall").read().split())
    wall[mode] = end - start
    trials = [t for s in report["sizes"] for t in s["trials"] if t["status"] == "ok" and len(t["samples_us"]) > 1]
    noise = [median_noise(t["samples_us"]) for t in trials]
    spread = [statistics.stdev(t["samples_us"]) / statistics.mean(t["samples_us"]) for t in trials]
    target = report.get("target_noise") or 0.02
    flush = report.get("flush_s")
    print(f"{mode}: {wall[mode]:.1f} s wall, measure {report['measure_s']:.1f} s"
          + (f" ({flush:.2f} s of it flushing, {100 * flush / wall[mode]:.1f}% of the wall)" if flush is not None else "")
          + f", kernels ran {100 * report['device_busy_s'] / wall[mode]:.0f}% of the wall")
    print(f"  {len(trials)} ok trials: median noise {100 * statistics.median(noise):.1f}%"
          f" ({sum(x > target for x in noise)} over the {100 * target:g}% target),"
          f" median spread (stdev/mean) {100 * statistics.median(spread):.1f}%,"
          f" median samples {statistics.median(len(t['samples_us']) for t in trials):.0f}")
print(f"cold / hot: {wall['cold'] / wall['hot']:.2f}x (goal <= 1.5x)")
PY
