#!/usr/bin/env bash
# The CUDA backend on a GPU machine, in one command: builds tunekit and the
# CUDA tests (scripts/gpu/CMakeLists.txt), runs the tests, then the GPU
# benchmarks (planted faults, tuning overhead, timing agreement with
# triton.testing.do_bench), and prints a short table.
#
# Through the device tool, from a developer machine:
#   scripts/gpu.sh --prepare            # once, here: sqlite3.h into build-gpu-deps/ (git ignores build-*)
#   run(command="scripts/gpu.sh", carry=["build-gpu-deps"])
# Steps can be chosen: scripts/gpu.sh [--prepare] [tests] [faults] [overhead] [timing] (default: all four).
# Logs and JSON summaries go to $OUT when set (the device tool returns them), else build-gpu/out.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [[ "${1:-}" == --prepare ]]; then
  mkdir -p build-gpu-deps
  cp /usr/include/sqlite3.h build-gpu-deps/ && echo "build-gpu-deps/sqlite3.h ready: carry build-gpu-deps"
  exit $?
fi
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(tests faults overhead timing)
want() { local s; for s in "${steps[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }

out=${OUT:-$root/build-gpu/out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1

# --- build -------------------------------------------------------------------
cmake_args=(-S scripts/gpu -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release)
if [[ ! -f /usr/include/sqlite3.h ]]; then
  # The GPU image has libsqlite3.so.0 but not its header (nor the .so link).
  [[ -f build-gpu-deps/sqlite3.h ]] || { echo "no sqlite3.h: run scripts/gpu.sh --prepare here and carry build-gpu-deps"; exit 2; }
  lib=$(ls /usr/lib/x86_64-linux-gnu/libsqlite3.so* /usr/lib64/libsqlite3.so* 2>/dev/null | head -1)
  cmake_args+=(-DSQLite3_INCLUDE_DIR="$root/build-gpu-deps" -DSQLite3_LIBRARY="$lib")
fi
t0=$(date +%s)
if ! { cmake "${cmake_args[@]}" >"$out/cmake.log" 2>&1 && ninja -C build-gpu test_cuda tunekit-cli tunekit-worker >"$out/build.log" 2>&1; }; then
  tail -40 "$out/cmake.log" "$out/build.log"
  echo "BUILD FAILED"
  exit 1
fi
echo "built in $(( $(date +%s) - t0 )) s"
bin=$root/build-gpu/tunekit/bin
"$bin/tunekit" devices 2>&1 | sed -n '/^cuda/,/^[a-z]/p' | head -30 | tee "$out/devices.txt"

declare -A result
# --- tests ---------------------------------------------------------------------
if want tests; then
  "$bin/test_cuda" 2>&1 | tee "$out/tests.log" | grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure|error:" | head -40
  result[tests]=$(grep -E "^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test" "$out/tests.log" | tr '\n' ' ')
fi
# --- benchmarks ------------------------------------------------------------------
if want faults; then
  python3 bench/gpu/faults.py --tunekit "$bin/tunekit" --summary "$out/faults.json" 2>&1 | tee "$out/faults.log"
  result[faults]=$(grep -A2 "^| configs" "$out/faults.log" | tail -1)
fi
if want overhead; then
  python3 bench/gpu/overhead.py --tunekit "$bin/tunekit" --summary "$out/overhead.json" 2>&1 | tee "$out/overhead.log"
  result[overhead]=$(grep -A2 "^| configs" "$out/overhead.log" | tail -1)
fi
if want timing; then
  python3 bench/gpu/timing_agreement.py --tunekit "$bin/tunekit" --probe --summary "$out/timing.json" 2>&1 | tee "$out/timing.log"
  result[timing]=$(grep -E "^worst disagreement" "$out/timing.log")
fi

echo
echo "=== scripts/gpu.sh summary ($(head -1 "$out/devices.txt" 2>/dev/null)) ==="
for k in tests faults overhead timing; do
  [[ -n "${result[$k]:-}" ]] && printf '%-9s %s\n' "$k" "${result[$k]}"
done
