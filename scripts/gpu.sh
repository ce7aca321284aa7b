#!/usr/bin/env bash
# The CUDA backend on a GPU machine, in one command: builds tunekit and the
# CUDA tests (scripts/gpu/CMakeLists.txt), runs the tests, then the GPU
# benchmarks (planted faults, tuning overhead, timing agreement with
# triton.testing.do_bench), and prints a short table.
#
# Through the device tool, from a developer machine:
#   scripts/gpu.sh --prepare            # once, here: sqlite3.h into build-gpu-deps/ (git ignores build-*)
#   run(command="scripts/gpu.sh", carry=["build-gpu-deps"])
# Steps can be chosen: scripts/gpu.sh [--prepare] [tests] [faults] [overhead] [early-stop] [timing] [probe] [access] [carveout] [flash-b1] [gemv-probe] [swap-probe] [gemv-same-timer] [placement] [wgmma-check] [wgmma-variants]
# [gemm] [gemm-read] [attention] [flash] [flash-check] (default: all of them). gemm-read is gemm with the
# L2 flushed by reads (--flush read); a name that is no step (say `none`) only builds. Extra arguments for the kernel benchmarks go in $GEMM_ARGS,
# $ATTENTION_ARGS, $FLASH_ARGS, $FLASH_B1_ARGS, $GEMV_ARGS and $SWAP_ARGS; early-stop's tune arguments
# (after bench/tuning/early_stop.py's own) in $EARLY_STOP_ARGS.
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
[[ ${#steps[@]} -eq 0 ]] && steps=(tests faults overhead early-stop timing probe access carveout flash-b1 gemv-probe swap-probe gemv-same-timer placement wgmma-check gemm gemm-read attention flash flash-check)
want() { local s; for s in "${steps[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }

out=${OUT:-$root/build-gpu/out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
export PATH=$PATH:/usr/local/cuda/bin

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

# The *_ARGS variables are split as the shell splits words, quotes included:
# GEMM_ARGS="--where 'gemv=MATH == 1'" passes one argument to --where.
for v in GEMM ATTENTION FLASH FLASH_B1 GEMV SWAP EARLY_STOP; do
  n=${v}_ARGS
  eval "args_${v,,}=(${!n:-})" || { echo "cannot split \$$n: ${!n}"; exit 2; }
done
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
if want early-stop; then
  # The same gemm_skinny tune with the early stop off and on (issue #23): wall times, their ratio, best configs.
  [[ ${#args_early_stop[@]} -eq 0 ]] && args_early_stop=(--spec kernels/gemm/gemm_skinny.yaml -- -s B_NK=1 -a "M=[16]" -a "K=[4096]" -a "N=[4096]")
  python3 bench/tuning/early_stop.py --tunekit "$bin/tunekit" --out "$root/build-gpu/early-stop" --summary "$out/early_stop.json" \
    "${args_early_stop[@]}" 2>&1 | tee "$out/early_stop.log"
  result[early-stop]=$(grep -E "^\| [0-9.]+ \|" "$out/early_stop.log" | awk -F'|' '{print "factor" $2 "ratio" $8 "same best" $9}' | tr '\n' ' ')
fi
if want timing; then
  python3 bench/gpu/timing_agreement.py --tunekit "$bin/tunekit" --probe --summary "$out/timing.json" 2>&1 | tee "$out/timing.log"
  result[timing]=$(grep -E "^worst disagreement" "$out/timing.log")
fi

if want probe; then
  # The floors: an empty launch and an ideal read of each goal's bytes, under both flushes.
  python3 bench/gpu/stream_floor_probe.py 2>&1 | tee "$out/probe.log"
  result[probe]=$(grep -c "ideal read" "$out/probe.log")" floors"
fi
if want access; then
  # Ways of streaming the same bytes (register loads, cp.async, the bulk copy engine, gemm_skinny's
  # row pattern), fastest first after each flush.
  python3 bench/gpu/stream_access_probe.py 2>&1 | tee "$out/access.log"
  result[access]=$(grep -c "^## " "$out/access.log")" sizes"
fi
if want carveout; then
  # What a kernel's shared-memory request costs right after the flush (the L1 / shared split changes).
  python3 bench/gpu/carveout_probe.py 2>&1 | tee "$out/carveout.log"
  result[carveout]=$(grep -c "^| idle\|^| read" "$out/carveout.log")" rows"
fi
if want flash-b1; then
  # Flash decoding at B=1: how fast a few SMs read its 1 MiB, and its time against L.
  python3 bench/gpu/flash_b1_probe.py "${args_flash_b1[@]}" 2>&1 | tee "$out/flash_b1.log"
  result[flash-b1]=$(grep -c "^| flash_decode" "$out/flash_b1.log")" flash rows"
fi
if want gemv-same-timer; then
  # gemm_gemv and cuBLAS at (1, 4096, 4096) on one timer, rounds alternating.
  python3 bench/gpu/gemv_same_timer.py "${args_gemv[@]}" 2>&1 | tee "$out/gemv_same_timer.log"
  result[gemv-same-timer]=$(grep -c "round" "$out/gemv_same_timer.log")" rounds"
fi
if want placement; then
  # gemm_gemv and cuBLAS over several weight copies and flush buffers, in passes.
  python3 bench/gpu/placement_probe.py 2>&1 | tee "$out/placement.log"
  result[placement]=$(grep -c "^  flush" "$out/placement.log")" rows"
fi
if want swap-probe; then
  # gemm_wgmma_swap with parts left out, and its per-block timeline, on the decode shapes.
  python3 bench/gpu/swap_probe.py "${args_swap[@]}" 2>&1 | tee "$out/swap_probe.log"
  result[swap-probe]=$(grep -c "^| " "$out/swap_probe.log")" rows"
fi
if want gemv-probe; then
  # gemm_gemv's order of walking B against the plain read's, with and without its arithmetic.
  python3 bench/gpu/gemv_probe.py 2>&1 | tee "$out/gemv_probe.log"
  result[gemv-probe]=$(grep -c "^| rows\|^| blockrow\|^| strided" "$out/gemv_probe.log")" rows"
fi
# --- the kernel library (issue #5) ------------------------------------------------
# Work folders stay out of $OUT (the device tool returns at most 8 files);
# the tuning databases come back as one archive.
work=$root/build-gpu/work
mkdir -p "$work"
if want wgmma-check; then
  # The Hopper kernel outside tunekit, with the driver's own tensor maps: a
  # wrong result here is the kernel's, not tunekit's. Then its SASS: HGMMA
  # must be there (HMMA only would be the slow path).
  {
    for cfg in "-DCLUSTER_M=1" "-DCLUSTER_M=2" "-DBM=128 -DBN=128 -DCONSUMERS=1 -DSTAGES=6" "-DBM=256 -DBN=128 -DCLUSTER_M=2"; do
      nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a $cfg kernels/gemm/wgmma_check.cu -lcuda \
        -o "$work/wgmma_check" && "$work/wgmma_check"
    done
    nvcc -std=c++17 -cubin -gencode=arch=compute_90a,code=sm_90a kernels/gemm/wgmma_gemm.cu -o "$work/wgmma.cubin" &&
      echo "SASS: $(cuobjdump --dump-sass "$work/wgmma.cubin" | grep -c HGMMA) HGMMA, $(cuobjdump --dump-sass "$work/wgmma.cubin" | grep -c ' HMMA') HMMA"
  } 2>&1 | tee "$out/wgmma_check.log"
  result[wgmma-check]="$(grep -c ' -> ok' "$out/wgmma_check.log") ok, $(grep -c ' -> FAIL' "$out/wgmma_check.log") failed; $(grep '^SASS' "$out/wgmma_check.log")"
fi
if want wgmma-variants; then
  # The Hopper kernel's epilogue and cluster variants side by side, hot, at
  # 4096^3 (run 13: the staged epilogue, and clusters once their stage
  # releases stopped using .release.cluster). Every shape is checked too.
  {
    for cfg in "-DEPILOGUE=0" "-DEPILOGUE=1" "-DEPILOGUE=1 -DCLUSTER_M=2" "-DEPILOGUE=1 -DBM=256 -DBN=128" \
               "-DEPILOGUE=1 -DBM=256 -DBN=128 -DCLUSTER_M=2" "-DEPILOGUE=0 --persistent" "-DEPILOGUE=2 -DSTAGES=3 --persistent" \
               "-DEPILOGUE=2 -DSTAGES=3 -DCLUSTER_M=2 --persistent" "-DEPILOGUE=2 -DSTAGES=3" \
               "-DSPLIT_K=2" "-DSPLIT_K=4 -DBM=64 -DBN=128 -DCONSUMERS=1"; do
      flags=${cfg% --persistent}; run_args=; [[ $cfg == *--persistent ]] && run_args=--persistent
      echo "=== $cfg"
      nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a $flags kernels/gemm/wgmma_check.cu -lcuda \
        -o "$work/wgmma_variant" && "$work/wgmma_variant" $run_args
    done
  } 2>&1 | tee "$out/wgmma_variants.log"
  result[wgmma-variants]="$(grep -c ' -> ok' "$out/wgmma_variants.log") ok, $(grep -c ' -> FAIL' "$out/wgmma_variants.log") failed"
fi
if want gemm; then
  python3 bench/kernels/gemm.py --tunekit "$bin/tunekit" --out "$work/gemm" --summary "$out/gemm.json" "${args_gemm[@]}" 2>&1 | tee "$out/gemm.log"
  result[gemm]=$(grep -c "x met" "$out/gemm.log")" goals met of $(grep -cE "x (met|missed)" "$out/gemm.log")"
fi
if want gemm-read; then
  python3 bench/kernels/gemm.py --tunekit "$bin/tunekit" --out "$work/gemm-read" --summary "$out/gemm_read.json" --flush read "${args_gemm[@]}" 2>&1 | tee "$out/gemm_read.log"
  result[gemm-read]=$(grep -c "x met" "$out/gemm_read.log")" goals met of $(grep -cE "x (met|missed)" "$out/gemm_read.log")"
fi
if want attention; then
  python3 bench/kernels/decode_attention.py --tunekit "$bin/tunekit" --out "$work/attention" "${args_attention[@]}" 2>&1 | tee "$out/attention.log"
  result[attention]=$(grep -iE "tuned.*per-matmul|speedup" "$out/attention.log" | tail -1)
fi
if want flash; then
  python3 bench/kernels/flash_decode.py --tunekit "$bin/tunekit" --out "$work/flash" "${args_flash[@]}" 2>&1 | tee "$out/flash.log"
  result[flash]=$(grep -E "^\| *(1|32|8|64) *\|" "$out/flash.log" | wc -l)" shapes"
fi
if want flash-check; then
  python3 bench/kernels/flash_decode.py --tunekit "$bin/tunekit" --out "$work/flash" --check-only 2>&1 | tee "$out/flash_check.log"
  result[flash-check]=$(grep "^ragged.* sizes" "$out/flash_check.log" | tr '\n' ' ')
fi
if want gemm || want gemm-read || want attention || want flash; then
  (cd "$work" && find . -name '*.db' -o -name '*.json' -o -name '*.csv' | tar czf "$out/kernels-results.tgz" -T -) 2>/dev/null
fi

echo
echo "=== scripts/gpu.sh summary ($(head -1 "$out/devices.txt" 2>/dev/null)) ==="
for k in tests faults overhead early-stop timing probe access carveout flash-b1 gemv-probe gemv-same-timer placement wgmma-check wgmma-variants gemm gemm-read attention flash flash-check; do
  [[ -n "${result[$k]:-}" ]] && printf '%-9s %s\n' "$k" "${result[$k]}"
done
