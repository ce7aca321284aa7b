#!/usr/bin/env bash
# A strategy's cost in instructions per evaluation, which unlike CPU time
# does not move with the machine's load: callgrind counts only inside the
# strategy's own calls (its factory, next and observe), on the hub's GEMM
# space (116,928 valid configs) with a synthetic recording, one seed.
#
# Usage: bench/search/instructions.sh [SEARCH_BENCH] [STRATEGY] [BUDGETS]
#   SEARCH_BENCH  the binary bench/search/run.sh builds (default:
#                 build-search/bench/search_bench)
#   STRATEGY      default auto
#   BUDGETS       shares of the space, comma-separated (default 0.01,0.02,0.05)
# Needs valgrind (Debian: valgrind). Prints one line per budget.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/build-search/bench/search_bench}
strategy=${2:-auto}
budgets=${3:-0.01,0.02,0.05}
die() { echo "instructions.sh: $*" >&2; exit 2; }
[[ -x "$bin" ]] || die "no search_bench at $bin (bench/search/run.sh --no-kt --strategies auto builds it)"
command -v valgrind >/dev/null || die "valgrind is not installed (apt-get install valgrind)"
command -v callgrind_annotate >/dev/null || die "callgrind_annotate is not installed (it comes with valgrind)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The strategy's outermost calls only: callgrind flips collection at each
# entry to a matching function, so a pattern that also matched the calls
# nested in them (auto's Interleaved and IndexedSearch) would turn it off
# there. The guided strategies' calls go through IndexedSearch; auto's
# through AutoStrategy.
case "$strategy" in
  auto) class=AutoStrategy ;;
  surrogate | genetic | annealing | local | diffevo | bayes) class=IndexedSearch ;;
  *) die "unsupported strategy '$strategy': expected auto, surrogate, genetic, annealing, local, diffevo or bayes" ;;
esac
toggles=(--toggle-collect="*::${class}::next(*" --toggle-collect="*::${class}::observe(*"
  --toggle-collect="*::${strategy}_strategy()::{lambda*")
echo "strategy $strategy, hub GEMM space (tests/spec/data/t1/gemm_milo.json), synthetic recording, seed 1"
IFS=, read -ra list <<<"$budgets"
for b in "${list[@]}"; do
  valgrind --tool=callgrind --callgrind-out-file="$work/cg" --collect-atstart=no "${toggles[@]}" \
    "$bin" --synthetic "$root/tests/spec/data/t1/gemm_milo.json" --strategies "$strategy" --budgets "$b" --seeds 1 \
    >"$work/out.json" 2>"$work/valgrind.log" || die "valgrind failed; see its log: $(tail -3 "$work/valgrind.log")"
  ir=$(callgrind_annotate "$work/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  evals=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["evaluations"][0])' "$work/out.json")
  python3 -c 'import sys; ir, n, b = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]; print(f"{float(b):.0%}: {n} evaluations, {ir / n / 1000:.1f} thousand instructions per evaluation")' \
    "$ir" "$evals" "$b"
done
