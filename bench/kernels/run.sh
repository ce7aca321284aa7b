#!/usr/bin/env bash
# The kernel library (kernels/) against its vendor peers on a GPU machine:
# builds tunekit (scripts/gpu.sh build), runs the steps below, prints a table,
# and exits 0 exactly when every step it ran passed.
#
# Through the device tool, with scripts/gpu.sh --prepare run here once:
#   run(command="bench/kernels/run.sh gemm attention flash", carry=["build-gpu-deps"])
# `bench/kernels/run.sh --list` prints the steps; the default is all of them.
#
# A step passes when its command exits 0; wgmma-check also needs every shape
# correct and HGMMA in the SASS, flash-check every random trial ok (or
# verified and cut short as slower). Goals
# against cuBLAS and SDPA are reported in the logs, not made pass or fail.
# Extra arguments: $GEMM_ARGS (gemm and gemm-read), $ATTENTION_ARGS and
# $FLASH_ARGS, split as the shell splits words, quotes included:
# GEMM_ARGS="--where 'gemv=WARPS == 8'" passes one argument to --where.
# Logs go to $OUT when set (the device tool returns up to 8 files), else
# build-gpu/out; the tunes' databases, exports and the benchmarks' JSON
# summaries come back as kernels-results.tgz.
# shellcheck disable=SC2317  # the step_* functions are called by name: "step_$s"
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
root=$PWD

# The steps, in order: the only list of them.
step_table=(
  "wgmma-check: the Hopper GEMM outside tunekit with the driver's own tensor maps, four tile configs; then HGMMA in its SASS"
  "gemm: bf16 GEMM, every kernel of kernels/gemm tuned per shape against cuBLAS (bench/kernels/gemm.py)"
  "gemm-read: the same with the L2 flushed by reads (--flush read, tunekit's cache: cold-read)"
  "attention: one decode step with per-matmul tiles against the best uniform config (bench/kernels/decode_attention.py)"
  "flash: split-KV flash decoding tuned on four shapes against torch SDPA (bench/kernels/flash_decode.py)"
  "flash-check: flash decoding's random configs on ragged sizes against the fp32 reference (flash_decode.py --check-only)"
)
all_steps=("${step_table[@]%%:*}")
if [[ "${1:-}" == --list ]]; then printf '%s\n' "${step_table[@]}"; exit 0; fi
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,/^# shellcheck/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=("${all_steps[@]}")
for s in "${steps[@]}"; do
  [[ " ${all_steps[*]} " == *" $s "* ]] || { echo "bench/kernels/run.sh: unknown step '$s' (steps: ${all_steps[*]})"; exit 2; }
done
want() { local s; for s in "${steps[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }

scripts/gpu.sh build || exit 1
out=${OUT:-$root/build-gpu/out}
bin=$root/build-gpu/tunekit/bin
export TUNEKIT=$bin/tunekit PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
# Work folders stay out of $OUT (the device tool returns at most 8 files).
work=$root/build-gpu/work
mkdir -p "$out" "$work"

args_gemm=() args_attention=() args_flash=()
for v in GEMM ATTENTION FLASH; do
  n=${v}_ARGS
  eval "args_${v,,}=(${!n:-})" || { echo "cannot split \$$n: ${!n}"; exit 2; }
done

# --- the steps -----------------------------------------------------------------
# Each returns the step's status and sets $detail for the table.
step_wgmma-check() {
  local ok=1 cfg log=$out/wgmma_check.log
  : >"$log"
  for cfg in "-DCLUSTER_M=1" "-DCLUSTER_M=2" "-DBM=128 -DBN=128 -DCONSUMERS=1 -DSTAGES=6" "-DBM=256 -DBN=128 -DCLUSTER_M=2"; do
    # shellcheck disable=SC2086  # $cfg is several -D flags
    { nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a $cfg kernels/gemm/wgmma_check.cu -lcuda \
        -o "$work/wgmma_check" && "$work/wgmma_check"; } 2>&1 | tee -a "$log" || ok=0
  done
  { nvcc -std=c++17 -cubin -gencode=arch=compute_90a,code=sm_90a kernels/gemm/wgmma_gemm.cu -o "$work/wgmma.cubin" &&
      cuobjdump --dump-sass "$work/wgmma.cubin" >"$work/wgmma.sass"; } 2>&1 | tee -a "$log" || ok=0
  local passed failed hgmma hmma
  passed=$(grep -c ' -> ok' "$log")
  failed=$(grep -c ' -> FAIL' "$log")
  hgmma=$(grep -c HGMMA "$work/wgmma.sass" 2>/dev/null)
  hmma=$(grep -c ' HMMA' "$work/wgmma.sass" 2>/dev/null)
  echo "SASS: ${hgmma:-0} HGMMA, ${hmma:-0} HMMA" | tee -a "$log"
  detail="$passed ok, $failed failed; SASS: ${hgmma:-0} HGMMA, ${hmma:-0} HMMA"
  [[ $ok == 1 && $failed == 0 && $passed -gt 0 && ${hgmma:-0} -gt 0 ]]
}
gemm_step() {  # gemm_step NAME [gemm.py arguments...]
  local name=$1 log=$out/${1//-/_}.log
  shift
  python3 bench/kernels/gemm.py --tunekit "$bin/tunekit" --out "$work/$name" --summary "$work/$name-summary.json" \
    "$@" "${args_gemm[@]}" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  detail="$(grep -c "x met" "$log") goals met of $(grep -cE "x (met|missed)" "$log") (tunekit's timer)"
  return "$rc"
}
step_gemm() { gemm_step gemm; }
step_gemm-read() { gemm_step gemm-read --flush read; }
step_attention() {
  python3 bench/kernels/decode_attention.py --tunekit "$bin/tunekit" --out "$work/attention" "${args_attention[@]}" 2>&1 |
    tee "$out/attention.log"
  local rc=${PIPESTATUS[0]}
  detail=$(grep -iE "tuned.*per-matmul|speedup" "$out/attention.log" | tail -1)
  return "$rc"
}
step_flash() {
  python3 bench/kernels/flash_decode.py --tunekit "$bin/tunekit" --out "$work/flash" "${args_flash[@]}" 2>&1 |
    tee "$out/flash.log"
  local rc=${PIPESTATUS[0]}
  detail="$(grep -cE "^\| *(1|32|8|64) *\|" "$out/flash.log") shape rows"
  return "$rc"
}
step_flash-check() {
  python3 bench/kernels/flash_decode.py --tunekit "$bin/tunekit" --out "$work/flash" --check-only 2>&1 |
    tee "$out/flash_check.log"
  local rc=${PIPESTATUS[0]} sweeps wrong
  sweeps=$(grep -c "^ragged.* sizes" "$out/flash_check.log")
  # each sweep's statuses print as {'ok': N} or {'ok': N, 'slower': N}: a
  # trial cut short by the early stop was verified before it was timed, so
  # anything else is a failed trial
  wrong=$(grep "^ragged.* sizes" "$out/flash_check.log" | grep -cvE "trials \{'ok': [0-9]+(, 'slower': [0-9]+)?\}")
  detail=$(grep "^ragged.* sizes" "$out/flash_check.log" | sed 's/ (CLUSTER.*//' | tr '\n' ' ')
  [[ $rc == 0 && $sweeps -gt 0 && $wrong == 0 ]]
}

declare -A verdict details
failed=0
for s in "${all_steps[@]}"; do
  want "$s" || continue
  echo; echo "=== $s"
  detail=""
  if "step_$s"; then verdict[$s]=PASS; else verdict[$s]=FAIL; failed=1; fi
  details[$s]=${detail:-"(no result line; see its log)"}
done
(cd "$work" && find . -name '*.db' -o -name '*.json' -o -name '*.csv' | tar czf "$out/kernels-results.tgz" -T -) 2>/dev/null

echo
echo "=== bench/kernels/run.sh: $("$bin/tunekit" devices 2>/dev/null | grep -m1 '^cuda') ==="
for s in "${all_steps[@]}"; do
  [[ -n "${verdict[$s]:-}" ]] && printf '%-12s %-4s  %s\n' "$s" "${verdict[$s]}" "${details[$s]}"
done
exit "$failed"
