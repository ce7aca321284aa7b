#!/usr/bin/env bash
# The search benchmark on held-out caches: recordings of the benchmark hub
# (AutoTuningAssociation/benchmark_hub, commit 8eeb99e) that no strategy of
# tunekit was developed on, beside the three of ../shared/caches. Eleven
# caches: convolution on four GPUs (A4000, A6000, W6600, W7800), dedispersion
# on five (A4000, A6000, MI250X, W6600, W7800), and the hub's older
# convolution and point-in-polygon recordings on an RTX 3090.
#
# Usage: bench/search/heldout.sh HUB [run.sh options]
#   HUB   a checkout (or export) of the hub: its cachefiles/, kernels/ and
#         currently_unused/ folders are read
# The caches are linked into build-search/heldout under distinct names
# (kernel_gpu.json.gz), then bench/search/run.sh runs them with the options
# given, e.g. --no-kt, --seeds 20, --kt-strategies genetic_algorithm,adaptive_tabu_greywolf.
set -euo pipefail

set_name=heldout
# shellcheck source=bench/search/hub_cases.sh
source "$(dirname "${BASH_SOURCE[0]}")/hub_cases.sh"
for gpu in A4000 A6000 W6600 W7800; do
  add "$hub/cachefiles/convolution_milo/$gpu.json.gz" "convolution_milo_$gpu" "$hub/kernels/convolution_milo.json"
done
for gpu in A4000 A6000 MI250X W6600 W7800; do
  add "$hub/cachefiles/dedispersion_milo/$gpu.json.gz" "dedispersion_milo_$gpu" "$hub/kernels/dedispersion_milo.json"
done
old="$hub/currently_unused"
add "$old/cachefiles/KernelTuner data/convolution/RTX_3090.json.gz" old_convolution_RTX_3090 "$old/kernels/convolution.json"
add "$old/cachefiles/KernelTuner data/pnpoly/RTX_3090.json.gz" old_pnpoly_RTX_3090 "$old/kernels/pnpoly.json"

run_cases "$@"
