#!/usr/bin/env bash
# Runs probes of lab/probes on a GPU machine: builds tunekit first
# (scripts/gpu.sh build: the probes that launch a spec's kernel ask `tunekit
# resolve` how), then each probe named, in order, with the arguments that
# follow its name in the same word, each logged to $OUT/<name>.log (else
# build-gpu/out). Exits 0 when every probe exited 0.
#
# Through the device tool, with scripts/gpu.sh --prepare run here once:
#   run(command="lab/run.sh stream_floor_probe 'swap_probe --shape 16,4096,4096'", carry=["build-gpu-deps"])
# A name is a file of lab/probes without .py, or wgmma-variants: the Hopper
# GEMM's epilogue and cluster variants side by side outside tunekit, hot, at
# 4096^3, every shape checked too. lab/README.md says what each one answers.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$PWD
if [[ $# -eq 0 ]]; then
  names=(lab/probes/*.py)
  names=("${names[@]##*/}")
  names=("${names[@]%.py}")
  echo "usage: lab/run.sh NAME|'NAME ARGS...' ... (names: ${names[*]/lab_common/} wgmma-variants)"
  exit 2
fi
for word in "$@"; do
  read -r -a probe <<<"$word"
  [[ ${probe[0]} == wgmma-variants || -f lab/probes/${probe[0]}.py ]] ||
    { echo "lab/run.sh: no probe '${probe[0]}' in lab/probes"; exit 2; }
done

scripts/gpu.sh build || exit 1
out=${OUT:-$root/build-gpu/out}
work=$root/build-gpu/work
mkdir -p "$out" "$work"
export TUNEKIT=$root/build-gpu/tunekit/bin/tunekit PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin

wgmma_variants() {
  local cfg flags run_args ok=0
  for cfg in "-DEPILOGUE=0" "-DEPILOGUE=1" "-DEPILOGUE=1 -DCLUSTER_M=2" "-DEPILOGUE=1 -DBM=256 -DBN=128" \
             "-DEPILOGUE=1 -DBM=256 -DBN=128 -DCLUSTER_M=2" "-DEPILOGUE=0 --persistent" "-DEPILOGUE=2 -DSTAGES=3 --persistent" \
             "-DEPILOGUE=2 -DSTAGES=3 -DCLUSTER_M=2 --persistent" "-DEPILOGUE=2 -DSTAGES=3" \
             "-DSPLIT_K=2" "-DSPLIT_K=4 -DBM=64 -DBN=128 -DCONSUMERS=1"; do
    flags=${cfg% --persistent}
    run_args=()
    [[ $cfg == *--persistent ]] && run_args=(--persistent)
    echo "=== $cfg"
    # shellcheck disable=SC2086  # $flags is several -D flags
    nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a $flags kernels/gemm/wgmma_check.cu -lcuda \
      -o "$work/wgmma_variant" && "$work/wgmma_variant" "${run_args[@]}" || ok=1
  done
  return "$ok"
}

failed=()
for word in "$@"; do
  read -r -a probe <<<"$word"
  name=${probe[0]}
  echo; echo "=== $word"
  if [[ $name == wgmma-variants ]]; then
    wgmma_variants 2>&1 | tee "$out/$name.log"
  else
    python3 "lab/probes/$name.py" "${probe[@]:1}" 2>&1 | tee "$out/$name.log"
  fi
  [[ ${PIPESTATUS[0]} == 0 ]] || failed+=("$name")
done
echo
if [[ ${#failed[@]} -gt 0 ]]; then echo "lab/run.sh: failed: ${failed[*]}"; exit 1; fi
echo "lab/run.sh: $# probe(s) ran"
