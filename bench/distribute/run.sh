#!/usr/bin/env bash
# What spreading a multi-size tune over MPI ranks buys: tunes one spec's
# sizes with one tunekit process, then with `mpirun -n RANKS`, each from an
# empty output folder (so every variant is built and measured), and prints
# both wall times, their ratio, and whether every size was tuned both times.
# Rank 0 also times its own share, so on a host with fewer free cores than
# ranks the ranks share cores (the run warns of it) and the ratio is what
# that host gives, not what one rank per node gives.
#
# Usage: bench/distribute/run.sh [--build DIR] [--ranks N] [-- TUNE ARGS]
#   default TUNE ARGS: examples/matmul/matmul.yaml -a M=[128,256,384,512] --max-evals 12
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$root/build"
ranks=2
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 && "$1" != -- ]]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --build | --ranks)
      [[ $# -ge 2 ]] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
      [[ "$1" == --build ]] && build=$2 || ranks=$2
      shift 2
      ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [[ "${1:-}" == -- ]]; then shift; fi
source "$here/../args.sh"
count --ranks "$ranks"
args=("$@")
((${#args[@]})) || args=(examples/matmul/matmul.yaml -a 'M=[128,256,384,512]' --max-evals 12)
command -v mpirun >/dev/null || { echo "run.sh: mpirun not found (Debian: openmpi-bin)" >&2; exit 2; }
echo "[build] tunekit in $build" >&2
[[ -f "$build/CMakeCache.txt" ]] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target tunekit-cli tunekit-worker >/dev/null
grep -q 'TUNEKIT_ENABLE_MPI:BOOL=ON' "$build/CMakeCache.txt" ||
  { echo "run.sh: $build was configured without MPI (-DTUNEKIT_ENABLE_MPI=ON)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"

# Wall seconds of one tune (stdout: its JSON report's size count, then the time).
timed() {
  local out=$1
  shift
  local start end
  start=$(date +%s.%N)
  "$@" --no-progress --output json -o "$out" >"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
  end=$(date +%s.%N)
  python3 - "$out" "$start" "$end" <<'PY'
import glob, json, sys
out, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
report = json.load(open(glob.glob(out + "/*.json")[0]))
tuned = sum(1 for s in report["sizes"] if s.get("best"))
print(len(report["sizes"]), tuned, report.get("ranks", 1), f"{end - start:.1f}")
PY
}
read -r sizes1 tuned1 _ wall1 < <(timed "$work/one" "$build/bin/tunekit" tune "${args[@]}")
read -r sizesn tunedn used walln < <(timed "$work/mpi" mpirun --oversubscribe -n "$ranks" "$build/bin/tunekit" tune "${args[@]}")
echo "tune ${args[*]}"
printf '%-28s %6s %6s %10s\n' "" sizes tuned "wall (s)"
printf '%-28s %6s %6s %10s\n' "one process" "$sizes1" "$tuned1" "$wall1"
printf '%-28s %6s %6s %10s\n' "mpirun -n $ranks ($used tuned)" "$sizesn" "$tunedn" "$walln"
python3 -c "import sys; print(f'speedup: {float(sys.argv[1]) / float(sys.argv[2]):.2f}x')" "$wall1" "$walln"
[[ "$sizes1" == "$sizesn" && "$tuned1" == "$tunedn" ]] || { echo "run.sh: the two runs tuned different sizes" >&2; exit 1; }
