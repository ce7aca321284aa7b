#!/usr/bin/env bash
# Configures and builds with the given preset (default: ci) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-ci}"
cmake --preset "$preset" >/dev/null
cmake --build build -j"$(nproc)"
