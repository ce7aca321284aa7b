#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang, ASan and UBSan over the
# whole library) and runs each one.
#   scripts/fuzz.sh            1,000,000 executions per target (the local run)
#   scripts/fuzz.sh RUNS       RUNS executions per target
#   scripts/fuzz.sh smoke      CI: the seed corpus, then 10 s of fuzzing, per target
# New inputs go to build-fuzz/corpus/<target> (not into the repository); a
# crash leaves build-fuzz/crash-<target>-* and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
mode="${1:-1000000}"
case "$mode" in
  -h | --help) usage; exit 0 ;;
  smoke) ;;
  *[!0-9]* | "") echo "fuzz.sh: expected 'smoke' or a number of runs, got '$mode' (try --help)" >&2; exit 2 ;;
esac
targets=(spec_fuzz constraint_fuzz t1_fuzz annotation_fuzz reply_fuzz)
cmake --preset fuzz >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}"
status=0
passed=0
failed=0
for t in "${targets[@]}"; do
  work="build-fuzz/corpus/$t"
  mkdir -p "$work"
  args=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix="build-fuzz/crash-$t-" -print_final_stats=1)
  if [ "$mode" = smoke ]; then args+=(-max_total_time=10); else args+=(-runs="$mode"); fi
  echo "== $t"
  rc=0
  "build-fuzz/bin/$t" "${args[@]}" "$work" "tests/fuzz/corpus/$t" > "build-fuzz/$t.log" 2>&1 || rc=$?
  tail -n 12 "build-fuzz/$t.log"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
  else
    echo "$t failed ($rc): see build-fuzz/$t.log"
    failed=$((failed + 1))
    status=1
  fi
done
echo "fuzz: $passed passed, $failed failed"
exit $status
