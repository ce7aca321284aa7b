#!/usr/bin/env bash
# tunekit's CUDA backend on a GPU machine, in one command: builds tunekit and
# the CUDA tests (scripts/gpu/CMakeLists.txt), runs the tests and the backend
# benchmarks of bench/gpu (planted faults, tuning overhead, timing agreement
# with triton.testing.do_bench) and the early stop's saving on a GEMM tune
# (bench/tuning/early_stop.py), the default search strategy against exhaustive and
# random on the Hopper GEMM (bench/search/gpu_check.sh), and a planted fault
# under @triton.autotune and tunekit (bench/triton), prints a table, and
# exits 0 exactly when every step it ran passed.
#
# Through the device tool, from a developer machine:
#   scripts/gpu.sh --prepare            # once, here: sqlite3.h and zlib.h into build-gpu-deps/ (git ignores build-*)
#   run(command="scripts/gpu.sh", carry=["build-gpu-deps"])
# `scripts/gpu.sh STEP...` runs some of the steps (`--list` prints them; the
# default is all); `scripts/gpu.sh build` only builds, as bench/kernels/run.sh
# and lab/run.sh do first.
#
# A step passes when its command exits 0: test_cuda when every test passed;
# faults.py when the two planted faults got their statuses and the other 48
# configs were measured; overhead.py and timing_agreement.py when they ran
# and printed their figures (their goals are in the table, not in the
# verdict: the 5 us launch's agreement with do_bench is within do_bench's own
# spread); early_stop.py when no early-stop tune cut short a config that an
# off tune found best (two tunes of a GEMM may still pick either of two
# configs within noise of each other, which the table shows); search.sh and autotune_fault.py when
# they ran and printed their tables (the search goal, auto >= 0.98 of the
# exhaustive best, is a figure). $EARLY_STOP_ARGS replaces early_stop's
# default arguments (the spec, and after `--` the tune's); $SEARCH_SEEDS the
# replayed seeds of the search check (default 10), $SEARCH_LIVE_SEEDS its live
# tunes per strategy and shape (default 3).
# Logs go to $OUT when set (the device tool returns up to 8 files), else
# build-gpu/out; the benchmarks' JSON summaries (and the search check's
# exhaustive databases) go there as summaries.tgz.
# shellcheck disable=SC2317  # the step_* functions are called by name: "step_$s"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$PWD

if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,/^# shellcheck/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi

if [[ "${1:-}" == --prepare ]]; then
  mkdir -p build-gpu-deps
  cp /usr/include/sqlite3.h /usr/include/zlib.h /usr/include/zconf.h build-gpu-deps/ &&
    echo "build-gpu-deps/{sqlite3,zlib,zconf}.h ready: carry build-gpu-deps"
  exit $?
fi

# The steps, in order: the only list of them.
step_table=(
  "tests: test_cuda, the CUDA tests (tests/backend/cuda_*, tests/tuner/cuda_*)"
  "faults: 50 configs with a planted illegal address and a planted infinite loop (bench/gpu/faults.py)"
  "overhead: tuning overhead per config and GPU busy fraction, SGEMM, 244 configs (bench/gpu/overhead.py)"
  "timing: tunekit's medians against triton.testing.do_bench on the same cubin (bench/gpu/timing_agreement.py)"
  "early_stop: gemm_skinny at (16, 4096, 4096) tuned with the early stop off and on: wall times, ratio, best configs (bench/tuning/early_stop.py)"
  "search: wgmma_gemm at three shapes, 30 evaluations under auto and random against an exhaustive tune (bench/search/gpu_check.sh)"
  "triton: a planted out-of-bounds config and 16 MoE configs, @triton.autotune against tunekit (bench/triton/autotune_fault.py)"
  "mpi: the SGEMM example at two sizes under mpirun, one rank per GPU and at least two (a rank with no GPU of its own is retired)"
)
all_steps=("${step_table[@]%%:*}")
if [[ "${1:-}" == --list ]]; then printf '%s\n' "${step_table[@]}"; exit 0; fi
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=("${all_steps[@]}")
for s in "${steps[@]}"; do
  [[ $s == build || " ${all_steps[*]} " == *" $s "* ]] ||
    { echo "scripts/gpu.sh: unknown step '$s' (steps: ${all_steps[*]}, or build to only build)"; exit 2; }
done
want() { local s; for s in "${steps[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }

# Nothing here runs without NVIDIA's driver: say so before a build that
# takes minutes. Any one sign of a GPU will do (a container may lack the
# others).
gpu_here() {
  compgen -G '/dev/nvidia[0-9]*' >/dev/null || command -v nvidia-smi >/dev/null ||
    ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'
}
gpu_here || { echo "scripts/gpu.sh: no NVIDIA GPU or driver here (no /dev/nvidia*, nvidia-smi or libcuda.so.1): run it on a GPU machine (see --help)" >&2; exit 2; }

out=${OUT:-$root/build-gpu/out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
export PATH=$PATH:/usr/local/cuda/bin

# --- build -------------------------------------------------------------------
cmake_args=(-S scripts/gpu -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release)
if [[ ! -f /usr/include/sqlite3.h ]]; then
  # The GPU image has libsqlite3.so.0 but not its header (nor the .so link).
  [[ -f build-gpu-deps/sqlite3.h ]] || { echo "no sqlite3.h: run scripts/gpu.sh --prepare here and carry build-gpu-deps"; exit 2; }
  for lib in /usr/lib/x86_64-linux-gnu/libsqlite3.so* /usr/lib64/libsqlite3.so* ""; do [[ -e $lib ]] && break; done
  cmake_args+=(-DSQLite3_INCLUDE_DIR="$root/build-gpu-deps" -DSQLite3_LIBRARY="$lib")
fi
if [[ ! -f /usr/include/zlib.h ]]; then
  # Nor, perhaps, zlib's (replay reads gzipped Kernel Tuner caches).
  [[ -f build-gpu-deps/zlib.h ]] || { echo "no zlib.h: run scripts/gpu.sh --prepare here and carry build-gpu-deps"; exit 2; }
  for lib in /usr/lib/x86_64-linux-gnu/libz.so* /usr/lib64/libz.so* ""; do [[ -e $lib ]] && break; done
  cmake_args+=(-DZLIB_INCLUDE_DIR="$root/build-gpu-deps" -DZLIB_LIBRARY="$lib")
fi
t0=$(date +%s)
if ! { cmake "${cmake_args[@]}" >"$out/build.log" 2>&1 &&
       ninja -C build-gpu test_cuda tunekit-cli tunekit-worker >>"$out/build.log" 2>&1; }; then
  tail -40 "$out/build.log"
  echo "BUILD FAILED"
  exit 1
fi
echo "built in $(( $(date +%s) - t0 )) s"
bin=$root/build-gpu/tunekit/bin
{ echo; "$bin/tunekit" devices 2>&1 | sed -n '/^cuda/,/^[a-z]/p' | head -30; } | tee -a "$out/build.log"
device=$("$bin/tunekit" devices 2>/dev/null | grep -m1 '^cuda' || echo "cuda: none found")
[[ " ${steps[*]} " == " build " ]] && exit 0

# --- the steps -----------------------------------------------------------------
# Each returns the step's exit status and sets $detail for the table.
json=$out/json
mkdir -p "$json"
step_tests() {
  "$bin/test_cuda" 2>&1 | tee "$out/tests.log" | grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure|error:" | head -40
  local rc=${PIPESTATUS[0]}
  detail=$(grep -E "^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test|^\[  SKIPPED \] [0-9]+ test" "$out/tests.log" | tr '\n' ' ')
  return "$rc"
}
step_faults() {
  python3 bench/gpu/faults.py --tunekit "$bin/tunekit" --summary "$json/faults.json" 2>&1 | tee "$out/faults.log"
  local rc=${PIPESTATUS[0]}
  detail=$(grep -A2 "^| configs" "$out/faults.log" | tail -1)
  return "$rc"
}
step_overhead() {
  python3 bench/gpu/overhead.py --tunekit "$bin/tunekit" --summary "$json/overhead.json" 2>&1 | tee "$out/overhead.log"
  local rc=${PIPESTATUS[0]}
  detail=$(grep -A2 "^| configs" "$out/overhead.log" | tail -1)
  return "$rc"
}
step_timing() {
  # --probe: do_bench's loop by hand in variants, for the shortest launch
  python3 bench/gpu/timing_agreement.py --tunekit "$bin/tunekit" --summary "$json/timing.json" \
    --probe 2>&1 | tee "$out/timing.log"
  local rc=${PIPESTATUS[0]}
  detail=$(grep -E "^worst disagreement" "$out/timing.log")
  return "$rc"
}

step_early_stop() {
  local args
  if [[ -n ${EARLY_STOP_ARGS:-} ]]; then
    read -ra args <<<"$EARLY_STOP_ARGS"  # split at blanks, no globbing
  else
    args=(--spec kernels/gemm/gemm_skinny.yaml -- -s B_NK=1 -a "M=[16]" -a "K=[4096]" -a "N=[4096]")
  fi
  python3 bench/tuning/early_stop.py --tunekit "$bin/tunekit" --out "$root/build-gpu/early-stop" \
    --summary "$json/early_stop.json" "${args[@]}" 2>&1 | tee "$out/early_stop.log"
  local rc=${PIPESTATUS[0]}
  detail=$(grep -E "^\| [0-9.]+ \|" "$out/early_stop.log" | awk -F'|' '{print "factor" $2 "off/on" $9 "same best:" $10 "off best cut:" $11}' | tr '\n' ' ')
  return "$rc"
}

step_search() {
  bench/search/gpu_check.sh --tunekit "$bin/tunekit" --out "$root/build-gpu/search" --seeds "${SEARCH_SEEDS:-10}" \
    --live-seeds "${SEARCH_LIVE_SEEDS:-3}" 2>&1 | tee "$out/search.log"
  local rc=${PIPESTATUS[0]}
  cp "$root/build-gpu/search/results.jsonl" "$json/search.json" 2>/dev/null
  # The exhaustive tunes' databases: recorded H200 spaces that `tunekit replay` searches offline.
  cp "$root"/build-gpu/search/exhaustive-*.db "$json/" 2>/dev/null
  detail=$(grep -E "^auto, (live|confirmed)" "$out/search.log" | tr "\n" " ")
  return "$rc"
}

step_triton() {
  TUNEKIT_TRITON_PATH=$root/python python3 bench/triton/autotune_fault.py --tunekit "$bin/tunekit" \
    --out "$root/build-gpu/triton" --summary "$json/triton.json" 2>&1 | tee "$out/triton.log"
  local rc=${PIPESTATUS[0]}
  detail=$(grep -E "^@triton.autotune with|^tunekit with" "$out/triton.log" | cut -c1-80 | tr '\n' ' ')
  return "$rc"
}

step_mpi() {
  command -v mpirun >/dev/null || { detail="no mpirun here"; return 1; }
  grep -q 'TUNEKIT_ENABLE_MPI:BOOL=ON' build-gpu/CMakeCache.txt || { detail="built without MPI"; return 1; }
  # One rank per GPU, and at least two, so that a one-GPU host checks that
  # the rank without a device is retired and its share tuned by the other.
  local gpus ranks mpi_out=$root/build-gpu/mpi
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  ranks=$((gpus < 2 ? 2 : gpus))
  rm -rf "$mpi_out"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe -n "$ranks" "$bin/tunekit" tune examples/cuda/sgemm/sgemm.yaml -a 'M=[1024,2048]' \
    --max-evals 12 --no-progress --output json -o "$mpi_out" 2>&1 | tee "$out/mpi.log"
  local rc=${PIPESTATUS[0]}
  detail=$(python3 - "$mpi_out" "$ranks" <<'PY'
import glob, json, sys
files = glob.glob(sys.argv[1] + "/*.json")
report = json.load(open(files[0])) if files else {"sizes": []}
tuned = sum(1 for s in report["sizes"] if s.get("best"))
print(f"{len(report['sizes'])} sizes, {tuned} tuned on {report.get('ranks', '?')} of {sys.argv[2]} ranks")
sys.exit(0 if report["sizes"] and tuned == len(report["sizes"]) else 1)
PY
) || rc=1
  grep -m1 'cannot tune' "$out/mpi.log" >/dev/null && detail+="; $(grep -m1 -o 'rank [0-9]* cannot tune[^;]*' "$out/mpi.log")"
  return "$rc"
}

declare -A verdict details
failed=0
for s in "${all_steps[@]}"; do
  want "$s" || continue
  echo; echo "=== $s"
  detail=""
  if "step_$s"; then verdict[$s]=PASS; else verdict[$s]="FAIL"; failed=1; fi
  details[$s]=${detail:-"(no result line; see $s.log)"}
done
(cd "$json" && shopt -s nullglob && files=(*.json *.db) && ((${#files[@]})) && tar czf "$out/summaries.tgz" "${files[@]}")
rm -rf "$json"

echo
echo "=== scripts/gpu.sh: $device ==="
for s in "${all_steps[@]}"; do
  [[ -n "${verdict[$s]:-}" ]] && printf '%-9s %-4s  %s\n' "$s" "${verdict[$s]}" "${details[$s]}"
done
exit "$failed"
