#!/usr/bin/env bash
# What cold caches cost a CPU tune (issue #20): tunes the stencil example
# from scratch (its own build cache and store) with the default settings
# (cold caches) and with --cache hot, and prints the cold/hot ratio of the
# measurement time per trial (goal: at most 1.5), per sample beside it, how
# much went into flushing and the noise statistics.
#
# Both modes measure the same configs: --strategy random with one seed and
# --max-evals N, early stop off (it cuts cold and hot trials at different
# points, so their sample counts and trial sets would differ). Rounds
# alternate the order (cold first, then hot first), so that neither mode
# always runs on the warmer machine. Wall time is printed but is not the
# ratio: it includes the compiles, which the flush does not touch.
#
#   bench/stencil_cold/run.sh [options] [SPEC]
#     --rounds R      cold/hot pairs, alternating the order (default 2)
#     --max-evals N   configs per tune (default 16)
#     --seed S        the random strategy's seed (default 1)
#   TUNEKIT=path/to/tunekit to compare builds (default build/bin/tunekit)
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
rounds=2
max_evals=16
seed=1
spec=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --rounds) rounds=${2:?"$1 needs a value"}; shift 2 ;;
    --max-evals) max_evals=${2:?"$1 needs a value"}; shift 2 ;;
    --seed) seed=${2:?"$1 needs a value"}; shift 2 ;;
    -*) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) spec=$1; shift ;;
  esac
done
cd "$(dirname "$0")/../.."
source bench/args.sh
count --rounds "$rounds"
count --max-evals "$max_evals"
tunekit="${TUNEKIT:-build/bin/tunekit}"
spec="${spec:-examples/stencil/stencil.yaml}"
[[ -f "$spec" ]] || { echo "run.sh: no spec at $spec" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order="cold hot"; else order="hot cold"; fi
  for mode in $order; do
    start=$(date +%s.%N)
    "$tunekit" tune "$spec" --cache "$mode" --early-stop off --strategy random --seed "$seed" \
      --max-evals "$max_evals" --out-dir "$out/$r-$mode" --no-progress >"$out/$r-$mode.log"
    end=$(date +%s.%N)
    echo "$start $end" >"$out/$r-$mode.wall"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$(basename "$spec" .yaml)" "$rounds" <<'PY'
import json, math, statistics, sys
out, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])

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

ratios, sample_ratios, bad = [], [], False
print(f"{'round':<6}{'mode':<6}{'first':>6}{'wall s':>8}{'measure s':>10}{'flush s':>9}{'trials':>7}{'ok':>4}"
      f"{'samples':>8}{'ms/trial':>10}{'ms/sample':>10}{'med noise':>10}")
for r in range(1, rounds + 1):
    first = "cold" if r % 2 else "hot"
    per = {}
    for mode in ("cold", "hot"):
        report = json.load(open(f"{out}/{r}-{mode}/{name}.json"))
        start, end = map(float, open(f"{out}/{r}-{mode}.wall").read().split())
        trials = [t for s in report["sizes"] for t in s["trials"]]
        ok = [t for t in trials if t["status"] == "ok" and len(t["samples_us"]) > 1]
        samples = sum(len(t["samples_us"]) for t in ok)
        noise = [median_noise(t["samples_us"]) for t in ok]
        m = report["measure_s"]
        per[mode] = dict(configs=sorted(json.dumps(t["config"], sort_keys=True) for t in trials),
                         trial=1e3 * m / max(1, len(ok)), sample=1e3 * m / max(1, samples))
        flush = report.get("flush_s")
        print(f"{r:<6}{mode:<6}{first == mode and 'yes' or '':>6}{end - start:>8.1f}{m:>10.1f}"
              f"{(f'{flush:.2f}' if flush is not None else '-'):>9}{len(trials):>7}{len(ok):>4}{samples:>8}"
              f"{per[mode]['trial']:>10.1f}{per[mode]['sample']:>10.2f}"
              f"{100 * statistics.median(noise) if noise else 0:>9.1f}%")
    if per["cold"]["configs"] != per["hot"]["configs"]:
        print(f"round {r}: cold and hot tried different configs; their ratio is not like for like")
        bad = True
    ratios.append(per["cold"]["trial"] / per["hot"]["trial"])
    sample_ratios.append(per["cold"]["sample"] / per["hot"]["sample"])
med = statistics.median(ratios)
print("cold / hot, measurement time per ok trial, per round: " + ", ".join(f"{x:.2f}x" for x in ratios)
      + f"; median {med:.2f}x (goal <= 1.5x: {'met' if med <= 1.5 else 'NOT met'})")
print("cold / hot, measurement time per sample, per round: " + ", ".join(f"{x:.2f}x" for x in sample_ratios)
      + f"; median {statistics.median(sample_ratios):.2f}x")
sys.exit(1 if bad else 0)
PY
