#!/usr/bin/env bash
# The search benchmark on caches that no strategy of tunekit was tuned on:
# twelve recordings of the benchmark hub (AutoTuningAssociation/benchmark_hub,
# commit 8eeb99e), first replayed on 2026-12-02, after the defaults of
# `surrogate` had been set on the three shared caches and the eleven of
# heldout.sh. They cover four kernels, none with a cache in the other sets:
#   - the earlier convolution_milo (no shared-memory switch) on an A4000, an
#     MI50 and an A6000 (the hub's A6000_original);
#   - the hub's older convolution on an RTX 2080 Ti, RTX 3060 laptop and RTX
#     Titan, and its point-in-polygon on the same three;
#   - CLBlast's GEMM (xgemm) on an RTX 2080 Ti, RTX 3090 and RTX Titan (the
#     RTX 3060 laptop recording lacks 7,956 of the 17,956 valid configs).
# The two T1 files the hub lacks are in bench/search/data, written from the
# kernels' restrictions (convolution_milo.json without its shared-memory
# switch, so every block keeps the shared-memory limit; gemm.py's seven
# restrictions).
#
# Usage: bench/search/unseen.sh HUB [run.sh options]
#   HUB   a checkout (or export) of the hub: its cachefiles/ and
#         currently_unused/ folders are read
# The caches are linked into build-search/unseen under distinct names, then
# bench/search/run.sh runs them with the options given, e.g. --no-kt,
# --seeds 20, --kt-strategies genetic_algorithm,adaptive_tabu_greywolf.
set -euo pipefail

set_name=unseen
# shellcheck source=bench/search/hub_cases.sh
source "$(dirname "${BASH_SOURCE[0]}")/hub_cases.sh"
kt="$hub/currently_unused/cachefiles/KernelTuner data"
old="$hub/currently_unused/kernels"
add "$kt/convolution_milo/a4000.json.gz" convolution_milo_original_A4000 "$here/data/convolution_milo_original.T1.json"
add "$kt/convolution_milo/mi50.json.gz" convolution_milo_original_MI50 "$here/data/convolution_milo_original.T1.json"
add "$hub/cachefiles/convolution_milo/A6000_original.json.gz" convolution_milo_original_A6000 \
  "$here/data/convolution_milo_original.T1.json"
for gpu in RTX_2080_Ti RTX_3060_laptop RTX_Titan; do
  add "$kt/convolution/$gpu.json.gz" "old_convolution_$gpu" "$old/convolution.json"
done
for gpu in RTX_2080_Ti RTX_3060_laptop RTX_Titan; do
  add "$kt/pnpoly/$gpu.json.gz" "old_pnpoly_$gpu" "$old/pnpoly.json"
done
for gpu in RTX_2080_Ti RTX_3090 RTX_Titan; do
  add "$kt/gemm/$gpu.json.gz" "clblast_gemm_$gpu" "$here/data/clblast_gemm.T1.json"
done

run_cases "$@"
