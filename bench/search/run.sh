#!/usr/bin/env bash
# Search benchmark (issue #23): tunekit's strategies, replayed on recorded
# brute-force results, against Kernel Tuner 1.5's strategies in its
# simulation mode on the same caches, budgets and seeds, in one run.
#
#   1. builds libtunekit (cmake --build BUILD --target tunekit; BUILD is
#      configured first if needed) and compiles bench/search/search_bench.cpp;
#   2. makes a venv with kernel_tuner 1.5 from PyPI (VENV, once);
#   3. tunekit: every strategy, through replay, at each budget (a share of the
#      valid configs, counted as distinct configs evaluated, failures
#      included) and seed, all in one process;
#   4. Kernel Tuner: its strategies with their default options, in its
#      simulation mode (bench/search/kt_search.py), same budgets and seeds;
#   5. prints per budget the median and 10th percentile of the fraction of
#      optimum per cache, their mean over caches, and each strategy's CPU
#      time per evaluation (bench/search/report.py);
#   6. tunekit's CPU time per evaluation on a space of 10^5 valid configs:
#      the hub's GEMM space (tests/spec/data/t1/gemm_milo.json, 116,928 valid
#      configs) with a synthetic recording, 3 seeds.
#
# Usage: bench/search/run.sh [options]
#   --case CACHE T1     a recorded cache and its T1 file (repeat; default: the
#                       three caches of ../shared/caches)
#   --seeds N           seeds per cache and budget (default 20)
#   --budgets LIST      shares of the space (default 0.01,0.02,0.05)
#   --strategies LIST   tunekit's (default: every registered one)
#   --kt-strategies LIST  Kernel Tuner's (default: the eight of shared/caches/README.md)
#   --no-kt             tunekit only
#   --large T1          the large space of step 6 (default: tests/spec/data/t1/gemm_milo.json; 'none' skips it)
#   --jobs N            Kernel Tuner runs in parallel (default 2)
#   --build DIR         build folder (default: build)
#   --venv DIR          Kernel Tuner's venv (default: build-search/kt-venv)
#   --out DIR           work folder (default: build-search/bench)
#   -h, --help
# Quick check: bench/search/run.sh --seeds 5 --kt-strategies genetic_algorithm,adaptive_tabu_greywolf
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

build="$root/build"
venv="$root/build-search/kt-venv"
out="$root/build-search/bench"
seeds=20
budgets=0.01,0.02,0.05
strategies=""
kt_strategies="random_sample,genetic_algorithm,adaptive_tabu_greywolf,pso,simulated_annealing,diff_evo,greedy_ils,dual_annealing"
kt=1
jobs=2
cases=()
large="$root/tests/spec/data/t1/gemm_milo.json"  # the hub's GEMM space, kept in the repository
CXX=${CXX:-g++}

die() { echo "run.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --case) [ $# -ge 3 ] || die "--case needs CACHE T1"; cases+=("$2" "$3"); shift 3 ;;
    --seeds) seeds=${2:?"$1 needs a value"}; shift 2 ;;
    --budgets) budgets=${2:?"$1 needs a value"}; shift 2 ;;
    --strategies) strategies=${2:?"$1 needs a value"}; shift 2 ;;
    --kt-strategies) kt_strategies=${2:?"$1 needs a value"}; shift 2 ;;
    --no-kt) kt=0; shift ;;
    --large) large=${2:?"$1 needs a value"}; shift 2 ;;
    --jobs) jobs=${2:?"$1 needs a value"}; shift 2 ;;
    --build) build=${2:?"$1 needs a value"}; shift 2 ;;
    --venv) venv=${2:?"$1 needs a value"}; shift 2 ;;
    --out) out=${2:?"$1 needs a value"}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (try --help)" ;;
  esac
done
source "$here/../args.sh"
count --seeds "$seeds"
count --jobs "$jobs"
shares --budgets "$budgets"
if [ ${#cases[@]} -eq 0 ]; then
  shared="$root/../shared/caches"
  [ -d "$shared" ] || die "no --case given and $shared not found"
  cases=("$shared/convolution_milo_A100.json.gz" "$shared/convolution_milo.T1.json"
         "$shared/convolution_milo_MI250X.json.gz" "$shared/convolution_milo.T1.json"
         "$shared/dedispersion_milo_A100.json.gz" "$shared/dedispersion_milo.T1.json")
fi
for ((i = 0; i < ${#cases[@]}; i++)); do [ -f "${cases[$i]}" ] || die "no such file: ${cases[$i]}"; done
mkdir -p "$out"

# ---- 1. build ----------------------------------------------------------------
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "[build] configuring $build (Release)" >&2
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/cmake.log" 2>&1 ||
    { tail -n 20 "$out/cmake.log" >&2; die "cmake configure failed"; }
fi
echo "[build] libtunekit in $build" >&2
cmake --build "$build" --target tunekit -j "$(nproc)" >"$out/build.log" 2>&1 ||
  { tail -n 30 "$out/build.log" >&2; die "building libtunekit failed (log: $out/build.log)"; }
echo "[build] search_bench" >&2
"$CXX" -std=c++20 -O2 -DNDEBUG -I"$root/include" "$here/search_bench.cpp" "$build/lib/libtunekit.a" \
  -lfmt -lyaml-cpp -lsqlite3 -lz -ldl -pthread -o "$out/search_bench" || die "compiling search_bench.cpp failed"

# ---- 2. Kernel Tuner's venv ----------------------------------------------------
if [ "$kt" = 1 ] && ! "$venv/bin/python" -c "import kernel_tuner" 2>/dev/null; then
  echo "[venv] $venv: pip install kernel_tuner==1.5.*" >&2
  python3 -m venv "$venv" || die "python3 -m venv failed"
  "$venv/bin/pip" install -q "kernel_tuner==1.5.*" >"$out/pip.log" 2>&1 ||
    { tail -n 20 "$out/pip.log" >&2; die "pip install kernel_tuner failed (log: $out/pip.log)"; }
fi

# ---- 3. tunekit ----------------------------------------------------------------
args=()
for ((i = 0; i < ${#cases[@]}; i += 2)); do args+=(--cache "${cases[$i]}" --t1 "${cases[$((i + 1))]}"); done
[ -n "$strategies" ] && args+=(--strategies "$strategies")
echo "[run] tunekit: $(( ${#cases[@]} / 2 )) caches, budgets $budgets, $seeds seeds" >&2
"$out/search_bench" "${args[@]}" --budgets "$budgets" --seeds "$seeds" >"$out/tunekit.jsonl"

# ---- 4. Kernel Tuner -----------------------------------------------------------
: >"$out/kt.jsonl"
if [ "$kt" = 1 ]; then
  kargs=()
  for ((i = 0; i < ${#cases[@]}; i += 2)); do kargs+=(--case "${cases[$i]}" "${cases[$((i + 1))]}"); done
  version=$("$venv/bin/python" -c 'import kernel_tuner; print(kernel_tuner.__version__)')
  echo "[run] Kernel Tuner $version: $kt_strategies, $jobs in parallel (this takes a while)" >&2
  "$venv/bin/python" "$here/kt_search.py" "${kargs[@]}" --strategies "$kt_strategies" --budgets "$budgets" \
    --seeds "$seeds" --jobs "$jobs" --work "$out/kt-work" >"$out/kt.jsonl"
fi

# ---- 5. report -----------------------------------------------------------------
cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "$(date -u +%Y-%m-%d), $cpu ($(nproc) cores)"
python3 "$here/report.py" "$out/tunekit.jsonl" "$out/kt.jsonl"

# ---- 6. cost on a large space ----------------------------------------------------
if [ "$large" != none ] && [ -f "$large" ]; then
  echo "[run] tunekit on a synthetic recording of $large" >&2
  "$out/search_bench" --synthetic "$large" ${strategies:+--strategies "$strategies"} --budgets "$budgets" --seeds 3 \
    >"$out/large.jsonl"
  echo
  python3 "$here/report.py" --cost-only "$out/large.jsonl"
fi
echo "raw results: $out/tunekit.jsonl $out/kt.jsonl" >&2
